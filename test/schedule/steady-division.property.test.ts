import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { PlacementSpec } from "../../src/model/types.js";
import { scheduleWorkload } from "../../src/schedule/schedule.js";
import type { ClusterState, NodeState, SchedulingProblem } from "../../src/schedule/types.js";
import { cluster } from "../helpers/scheduling.js";

// Karmada's Steady mode with live, node-level capacity: replicas keep their place while capacity
// merely fluctuates; only a change of total, a cap (a cluster that can no longer fit its share) or a
// rebalance moves them.

const NAMES = ["a", "b", "c", "d", "e"];
const POD = {
  spec: { containers: [{ name: "app", resources: { requests: { cpu: "500m", memory: "1Gi" } } }] },
};

const nodesArb: fc.Arbitrary<NodeState[]> = fc
  .array(
    fc.record({
      cpu: fc.integer({ min: 0, max: 16 }),
      memory: fc.integer({ min: 0, max: 64 }),
      count: fc.integer({ min: 1, max: 5 }),
    }),
    { minLength: 1, maxLength: 3 },
  )
  .map((pools) =>
    pools.map((p) => ({
      allocatable: { cpu: 16, memory: 64 * 2 ** 30, pods: 110 },
      free: { cpu: p.cpu, memory: p.memory * 2 ** 30, pods: 110 },
      count: p.count,
    })),
  );

const placementArb: fc.Arbitrary<PlacementSpec> = fc.constantFrom<PlacementSpec>(
  { replicaScheduling: { type: "Divided", weightPreference: { dynamicWeight: "AvailableReplicas" } } },
  { replicaScheduling: { type: "Divided", divisionPreference: "Aggregated" } },
);

const stateArb = fc.record({
  placement: placementArb,
  total: fc.integer({ min: 1, max: 60 }),
  before: fc.tuple(...NAMES.map(() => nodesArb)),
  after: fc.tuple(...NAMES.map(() => nodesArb)),
});

function clusters(nodes: readonly NodeState[][]): ClusterState[] {
  return NAMES.map((name, i) => cluster(name, { nodes: nodes[i] ?? [] }));
}

function decide(problem: Omit<SchedulingProblem, "workload">): Record<string, number> {
  const result = scheduleWorkload({ ...problem, workload: { name: "web", uid: "u1", podTemplate: POD } });
  if (!result.ok) throw new Error(result.error);
  return { ...result.decision.clusters };
}

describe("steady division with live capacity", () => {
  it("capacity noise with a fixed total never moves a replica", () => {
    fc.assert(
      fc.property(stateArb, ({ placement, total, before, after }) => {
        const first = decide({ replicas: total, placement, clusters: clusters(before) });
        // Replicas that found no room are placed as room appears: that is not a move.
        fc.pre(Object.values(first).reduce((sum, n) => sum + n, 0) === total);
        const second = decide({ replicas: total, placement, clusters: clusters(after), current: first });
        expect(second).toEqual(first);
      }),
    );
  });

  it("a cluster shrunk below its share gives up exactly the excess, and no other cluster shrinks", () => {
    fc.assert(
      fc.property(stateArb, fc.nat({ max: 100 }), ({ placement, total, before, after }, pick) => {
        const first = decide({ replicas: total, placement, clusters: clusters(before) });
        const holders = Object.keys(first);
        fc.pre(holders.length > 0);
        const shrunk = holders[pick % holders.length] as string;
        const fits = Math.floor(((first[shrunk] ?? 0) * (pick % 4)) / 4);
        const second = decide({
          replicas: total,
          placement,
          clusters: clusters(after),
          current: first,
          caps: { [shrunk]: fits },
        });
        expect(second[shrunk] ?? 0).toBe(fits);
        for (const name of NAMES)
          if (name !== shrunk) expect(second[name] ?? 0).toBeGreaterThanOrEqual(first[name] ?? 0);
        const moved = NAMES.filter((n) => n !== shrunk).reduce(
          (sum, n) => sum + (second[n] ?? 0) - (first[n] ?? 0),
          0,
        );
        // What the others took is the excess (unless they have no room for all of it), plus replicas
        // that found no room the first time and are placed as room appears.
        const unplaced = total - Object.values(first).reduce((sum, n) => sum + n, 0);
        expect(moved).toBeLessThanOrEqual((first[shrunk] ?? 0) - fits + unplaced);
      }),
    );
  });
});
