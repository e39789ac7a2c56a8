import { describe, expect, it } from "vitest";
import { loadFleet } from "../../src/load/load-fleet.js";
import { formatProblem } from "../../src/model/problem.js";
import { minimalFleetWith } from "../helpers/minimal-fleet.js";

describe("the minimal fleet used by the invalid-repo cases", () => {
  it("is valid, with no warnings, and loads into the expected model", () => {
    const result = loadFleet(minimalFleetWith({}));
    expect(result.problems.map(formatProblem)).toEqual([]);
    expect(result.model?.clusters.map((c) => c.metadata.name)).toEqual(["east", "west"]);
    const web = result.model?.apps[0];
    expect(web?.name).toBe("web");
    expect(web?.resources.map((r) => `${r.kind} ${r.namespace}/${r.name}`)).toEqual([
      "ConfigMap shop/web-config",
      "Deployment shop/web",
    ]);
  });
});
