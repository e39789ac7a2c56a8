import { describe, expect, it } from "vitest";
import { createParseCache, loadFleet } from "../../src/load/load-fleet.js";
import { formatProblem } from "../../src/model/problem.js";
import { minimalFleetWith } from "../helpers/minimal-fleet.js";
import { INVALID_REPO_CASES, SYNC_ORDER_CASES } from "./invalid-repos.cases.js";

const CASES = [...INVALID_REPO_CASES, ...SYNC_ORDER_CASES];

describe("invalid fleet repos", () => {
  it("has at least 30 cases", () => {
    expect(INVALID_REPO_CASES.length).toBeGreaterThanOrEqual(30);
  });

  it.each(CASES)("$name", ({ files, expected }) => {
    const result = loadFleet(minimalFleetWith(files));
    expect(result.problems.map(formatProblem)).toEqual(expected);
    const hasError = expected.some((line) => line.includes(": error: "));
    expect(result.model === undefined).toBe(hasError);
  });

  it("reports exactly the same with a parse cache shared across every case, as a controller shares it", () => {
    const cache = createParseCache();
    for (const pass of [1, 2])
      for (const { name, files, expected } of CASES) {
        const problems = loadFleet(minimalFleetWith(files), cache).problems.map(formatProblem);
        expect({ name, pass, problems }).toEqual({ name, pass, problems: expected });
      }
    expect(cache.files.size).toBeGreaterThan(0);
  });
});
