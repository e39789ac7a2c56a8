import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { splitBounds } from "../../src/autoscale/distributed-split.js";

// Distributed mode: min/max split over the clusters in proportion to where the workload runs.

describe("splitting a FederatedHPA's bounds over member HPAs", () => {
  it.each([
    ["2/10 over 4:1 (the documented split)", 2, 10, { a: 4, b: 1 }, { a: [1, 8], b: [1, 2] }, 2, 10],
    [
      "6/60 over 3:3:6 (a tie for the odd seat leans by name)",
      6,
      60,
      { a: 3, b: 3, c: 6 },
      { a: [2, 15], b: [1, 15], c: [3, 30] },
      6,
      60,
    ],
    [
      "more clusters than the minimum: each still 1",
      1,
      9,
      { a: 5, b: 1, c: 0 },
      { a: [1, 7], b: [1, 1], c: [1, 1] },
      3,
      9,
    ],
    [
      "a cluster running nothing yet counts as weight 1",
      4,
      8,
      { a: 3, b: 0 },
      { a: [3, 6], b: [1, 2] },
      4,
      8,
    ],
  ] as [string, number, number, Record<string, number>, Record<string, [number, number]>, number, number][])(
    "%s",
    (_name, min, max, distribution, expected, effectiveMin, effectiveMax) => {
      const split = splitBounds(min, max, distribution);
      expect(
        Object.fromEntries(
          Object.entries(split.clusters).map(([c, b]) => [c, [b.minReplicas, b.maxReplicas]]),
        ),
      ).toEqual(expected);
      expect([split.effectiveMin, split.effectiveMax]).toEqual([effectiveMin, effectiveMax]);
    },
  );

  it("keeps every member's min ≤ max, both ≥ 1, and the sums at the global bounds when they allow (property)", () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.constantFrom("a", "b", "c", "d", "e"), fc.integer({ min: 0, max: 50 }), {
          minKeys: 1,
        }),
        fc.integer({ min: 1, max: 30 }),
        fc.integer({ min: 0, max: 100 }),
        (distribution, min, extra) => {
          const max = min + extra;
          const n = Object.keys(distribution).length;
          const split = splitBounds(min, max, distribution);
          for (const b of Object.values(split.clusters)) {
            expect(b.minReplicas).toBeGreaterThanOrEqual(1);
            expect(b.maxReplicas).toBeGreaterThanOrEqual(b.minReplicas);
          }
          if (min >= n) expect(split.effectiveMin).toBe(min);
          else expect(split.effectiveMin).toBe(n);
          expect(split.effectiveMax).toBe(Math.max(max, n));
        },
      ),
      { numRuns: 300 },
    );
  });
});
