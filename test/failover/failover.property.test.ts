import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { scheduleWorkload } from "../../src/schedule/schedule.js";
import type { ScheduleDecision } from "../../src/schedule/types.js";
import { cluster, DIVIDED, problem } from "../helpers/scheduling.js";

// Failover's guarantees for any fleet: the failed cluster's replicas go to the others without any
// of them shrinking, the total is kept (or the shortfall reported), maxReplicas holds, and a
// recovered cluster gets nothing back while the counts are kept.

const NO_EXECUTE = { key: "gitfleet.io/unreachable", effect: "NoExecute" as const };

function decide(
  input: Parameters<typeof problem>,
  extra: Parameters<typeof problem>[3] = {},
): ScheduleDecision {
  const result = scheduleWorkload(problem(input[0], input[1], input[2], { ...input[3], ...extra }));
  if (!result.ok) throw new Error(result.error);
  return result.decision;
}

const sum = (counts: Readonly<Record<string, number>>) => Object.values(counts).reduce((a, b) => a + b, 0);

describe("failover properties", () => {
  it("moves only the failed cluster's replicas, keeps limits, and moves nothing back", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 6 }),
        fc.integer({ min: 0, max: 40 }),
        fc.nat(),
        fc.option(fc.integer({ min: 0, max: 20 }), { nil: undefined }),
        (count, replicas, pick, maxPerCluster) => {
          const names = Array.from({ length: count }, (_, i) => `c${i}`);
          const placement = {
            replicaScheduling: {
              ...DIVIDED.replicaScheduling,
              ...(maxPerCluster === undefined
                ? {}
                : {
                    clusterLimits: [{ targetCluster: { clusterNames: names }, maxReplicas: maxPerCluster }],
                  }),
            },
          };
          const before = decide([placement, names.map((n) => cluster(n)), replicas]);
          const failed = names[pick % count] as string;
          const down = names.map((n) =>
            cluster(n, {
              currentReplicas: before.clusters[n] ?? 0,
              ...(n === failed ? { taints: [NO_EXECUTE], ready: false } : {}),
            }),
          );
          const after = decide([placement, down, replicas], { keepCurrent: true });
          expect(after.clusters[failed] ?? 0).toBe(0);
          const others = names.filter((n) => n !== failed);
          expect(others.filter((n) => (after.clusters[n] ?? 0) < (before.clusters[n] ?? 0))).toEqual([]);
          const limit = maxPerCluster ?? Number.POSITIVE_INFINITY;
          expect(names.filter((n) => (after.clusters[n] ?? 0) > limit)).toEqual([]);
          expect(sum(after.clusters) + after.unschedulable).toBe(replicas);
          // The cluster returns: with the counts kept, nothing moves back.
          const back = names.map((n) => cluster(n, { currentReplicas: after.clusters[n] ?? 0 }));
          const recovered = decide([placement, back, replicas], { keepCurrent: true });
          if (after.unschedulable === 0) expect(recovered.clusters).toEqual(after.clusters);
        },
      ),
      { numRuns: 300 },
    );
  });
});
