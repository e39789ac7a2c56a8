import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { loadFleet } from "../../src/load/load-fleet.js";
import type { ChartRenders } from "../../src/manifests/helm/chart-request.js";
import type { FileTree } from "../../src/model/file-tree.js";
import { formatProblem } from "../../src/model/problem.js";
import { chartsOf, readExampleRepo } from "../helpers/example-repo.js";
import { minimalFleetWith } from "../helpers/minimal-fleet.js";
import { INVALID_REPO_CASES } from "./invalid-repos.cases.js";

/** The loader is a function of the tree's contents: the order files arrive in changes nothing. */
function shuffled(tree: FileTree, order: readonly number[]): FileTree {
  const entries = [...tree.entries()];
  const keyed = entries.map((entry, i) => ({ entry, key: order[i % order.length] ?? 0 }));
  return new Map(keyed.sort((a, b) => a.key - b.key).map((k) => k.entry));
}

describe("loading is deterministic", () => {
  let example: FileTree;
  let charts: ChartRenders | undefined;
  beforeAll(async () => {
    example = await readExampleRepo();
    charts = await chartsOf(example);
  });

  it("gives a byte-identical model for any file order", () => {
    const expected = JSON.stringify(loadFleet(example, undefined, charts).model);
    expect(expected).not.toBe(undefined);
    fc.assert(
      fc.property(fc.array(fc.integer(), { minLength: 1, maxLength: 60 }), (order) => {
        expect(JSON.stringify(loadFleet(shuffled(example, order), undefined, charts).model)).toBe(expected);
      }),
      { numRuns: 50 },
    );
  });

  it("gives identical problems for any file order", () => {
    const trees = INVALID_REPO_CASES.map((c) => minimalFleetWith(c.files));
    fc.assert(
      fc.property(
        fc.nat({ max: trees.length - 1 }),
        fc.array(fc.integer(), { minLength: 1, maxLength: 20 }),
        (i, order) => {
          const tree = trees[i] ?? new Map();
          expect(loadFleet(shuffled(tree, order)).problems.map(formatProblem)).toEqual(
            loadFleet(tree).problems.map(formatProblem),
          );
        },
      ),
      { numRuns: 200 },
    );
  });
});
