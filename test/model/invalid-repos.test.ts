import { describe, expect, it } from "vitest";
import { loadFleet } from "../../src/model/load-fleet.js";
import { formatProblem } from "../../src/model/problem.js";
import { minimalFleetWith } from "../helpers/minimal-fleet.js";
import { INVALID_REPO_CASES } from "./invalid-repos.cases.js";

describe("invalid fleet repos", () => {
  it("has at least 30 cases", () => {
    expect(INVALID_REPO_CASES.length).toBeGreaterThanOrEqual(30);
  });

  it.each(INVALID_REPO_CASES)("$name", ({ files, expected }) => {
    const result = loadFleet(minimalFleetWith(files));
    expect(result.problems.map(formatProblem)).toEqual(expected);
    const hasError = expected.some((line) => line.includes(": error: "));
    expect(result.model === undefined).toBe(hasError);
  });
});
