import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { assignShards, clustersOfShard, LOAD_FACTOR, MAX_SHARDS } from "../../src/model/shard-assignment.js";

const names = (count: number, prefix = "member") =>
  Array.from({ length: count }, (_, i) => `${prefix}-${String(i).padStart(4, "0")}`);

const moved = (a: ReadonlyMap<string, number>, b: ReadonlyMap<string, number>) =>
  [...a].filter(([cluster, shard]) => b.has(cluster) && b.get(cluster) !== shard).length;

const clusterNames = fc.uniqueArray(fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/), { maxLength: 120 });

describe("assignShards", () => {
  it("gives every cluster exactly one shard in range, within the load bound, whatever the order", () => {
    fc.assert(
      fc.property(clusterNames, fc.integer({ min: 1, max: 12 }), (clusters, shards) => {
        const assignment = assignShards(clusters, shards);
        expect([...assignment.keys()].sort()).toEqual([...clusters].sort());
        const bound = Math.ceil((clusters.length / shards) * LOAD_FACTOR);
        for (let shard = 0; shard < shards; shard++)
          expect(clustersOfShard(assignment, shard).length).toBeLessThanOrEqual(Math.max(bound, 0));
        for (const shard of assignment.values()) {
          expect(Number.isInteger(shard)).toBe(true);
          expect(shard).toBeGreaterThanOrEqual(0);
          expect(shard).toBeLessThan(shards);
        }
        // The same names in another order: the same assignment (every replica computes it alone).
        expect(assignShards([...clusters].reverse(), shards)).toEqual(assignment);
      }),
      { numRuns: 200 },
    );
  });

  it.each([
    [2, 3],
    [3, 4],
    [4, 5],
    [8, 9],
  ])("moves few clusters when %i shards become %i (hash mod n moves most)", (from, to) => {
    const clusters = names(500);
    const before = assignShards(clusters, from);
    const after = assignShards(clusters, to);
    const modulo = clusters.filter((_, i) => i % from !== i % to).length;
    // The ideal is 1/to of the clusters; the bound on loads costs a few more.
    expect(moved(before, after)).toBeLessThan(clusters.length * (1.6 / to));
    expect(moved(before, after)).toBeLessThan(modulo / 2);
  });

  it("moves few clusters when one cluster joins or leaves", () => {
    fc.assert(
      fc.property(fc.integer({ min: 20, max: 300 }), fc.integer({ min: 2, max: 8 }), (count, shards) => {
        const clusters = names(count);
        const before = assignShards(clusters, shards);
        const after = assignShards([...clusters, "joining-cluster"], shards);
        expect(moved(before, after)).toBeLessThanOrEqual(Math.ceil(count / shards) + 1);
      }),
      { numRuns: 50 },
    );
  });

  it("spreads 500 clusters over 4 shards near the mean", () => {
    const assignment = assignShards(names(500), 4);
    const loads = [0, 1, 2, 3].map((s) => clustersOfShard(assignment, s).length);
    expect(loads.reduce((a, b) => a + b)).toBe(500);
    for (const load of loads) {
      expect(load).toBeGreaterThan(60);
      expect(load).toBeLessThanOrEqual(Math.ceil(125 * LOAD_FACTOR));
    }
  });

  it.each([0, -1, 1.5, MAX_SHARDS + 1, Number.NaN])("refuses %s shards", (shards) => {
    expect(() => assignShards(["a"], shards)).toThrow(/shards must be an integer/);
  });
});
