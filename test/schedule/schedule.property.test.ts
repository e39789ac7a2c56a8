import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { PlacementSpec, ReplicaScheduling } from "../../src/model/types.js";
import { scheduleWorkload } from "../../src/schedule/schedule.js";
import type { ScheduleDecision, SchedulingProblem } from "../../src/schedule/types.js";
import { type ClusterInput, cluster, problem } from "../helpers/scheduling.js";

/** Property tests of the scheduler; fast-check prints the seed and the shrunk counterexample on failure. */

const NAMES = ["a", "b", "c", "d", "e", "f", "g", "h"];

const clusterArb = (name: string, healthy: boolean): fc.Arbitrary<ClusterInput> =>
  fc
    .record({
      region: fc.constantFrom("east", "west", "north"),
      env: fc.constantFrom("prod", "test"),
      tainted: healthy ? fc.constant(false) : fc.boolean(),
      ready: healthy ? fc.constant(true) : fc.boolean(),
      cordoned: healthy ? fc.constant(false) : fc.boolean(),
      available: healthy ? fc.constant(undefined) : fc.option(fc.nat({ max: 30 }), { nil: undefined }),
      current: fc.nat({ max: 20 }),
    })
    .map((r) =>
      cluster(name, {
        region: r.region,
        labels: { env: r.env },
        taints: r.tainted ? [{ key: "gpu", effect: "NoSchedule" }] : [],
        ready: r.ready,
        unschedulable: r.cordoned,
        currentReplicas: r.current,
        ...(r.available === undefined ? {} : { availableReplicas: r.available }),
      }),
    );

const clustersArb = (healthy: boolean) =>
  fc
    .integer({ min: 1, max: NAMES.length })
    .chain((n) => fc.tuple(...NAMES.slice(0, n).map((name) => clusterArb(name, healthy))));

const schedulingArb: fc.Arbitrary<ReplicaScheduling> = fc.oneof(
  fc.constant<ReplicaScheduling>({ type: "Divided" }),
  fc.tuple(fc.nat({ max: 5 }), fc.nat({ max: 5 }), fc.nat({ max: 5 })).map(
    ([a, b, c]): ReplicaScheduling => ({
      type: "Divided",
      weightPreference: {
        staticWeightList: [
          { targetCluster: { clusterNames: ["a", "b"] }, weight: a + 1 },
          { targetCluster: { labelSelector: { matchLabels: { env: "prod" } } }, weight: b + 1 },
          { targetCluster: { clusterNames: ["c"] }, weight: c + 1 },
        ],
      },
    }),
  ),
  fc.constant<ReplicaScheduling>({
    type: "Divided",
    weightPreference: { dynamicWeight: "AvailableReplicas" },
  }),
  fc.constant<ReplicaScheduling>({ type: "Divided", divisionPreference: "Aggregated" }),
);

const limitsArb = fc.option(
  fc
    .record({ min: fc.nat({ max: 4 }), extra: fc.nat({ max: 10 }), who: fc.constantFrom("a", "b", "c") })
    .map(({ min, extra, who }) => [
      { targetCluster: { clusterNames: [who] }, minReplicas: min, maxReplicas: min + extra },
    ]),
  { nil: undefined },
);

const placementArb: fc.Arbitrary<PlacementSpec> = fc
  .record({
    scheduling: schedulingArb,
    limits: limitsArb,
    avoidDisruption: fc.boolean(),
    maxClusters: fc.option(fc.integer({ min: 1, max: 6 }), { nil: undefined }),
  })
  .map(({ scheduling, limits, avoidDisruption, maxClusters }) => ({
    ...(maxClusters === undefined ? {} : { maxClusters }),
    replicaScheduling: {
      ...scheduling,
      ...(limits ? { clusterLimits: limits } : {}),
      ...(avoidDisruption ? { avoidDisruption } : {}),
    },
  }));

const uidArb = fc.constantFrom("", "a", "b", "9d1f6c2e-uid");

function decide(p: SchedulingProblem): ScheduleDecision {
  const result = scheduleWorkload(p);
  if (!result.ok) throw new Error(result.error);
  return result.decision;
}

const total = (decision: ScheduleDecision) => Object.values(decision.clusters).reduce((a, b) => a + b, 0);
const problemOf = (
  placement: PlacementSpec,
  clusters: readonly ClusterInput[],
  replicas: number,
  uid = "",
): SchedulingProblem => ({ ...problem(placement, clusters, replicas), workload: { uid } });

describe("scheduler properties", () => {
  it("placed + unschedulable always equals the total, and only candidates receive replicas", () => {
    fc.assert(
      fc.property(
        placementArb,
        clustersArb(false),
        fc.nat({ max: 60 }),
        uidArb,
        (placement, clusters, replicas, uid) => {
          const decision = decide(problemOf(placement, clusters, replicas, uid));
          expect(total(decision) + decision.unschedulable).toBe(replicas);
          for (const [name, count] of Object.entries(decision.clusters)) {
            expect(decision.diagnosis.filtered[name]).toBeUndefined();
            expect(count).toBeGreaterThan(0);
            const state = clusters.find((c) => c.name === name);
            if (decision.diagnosis.frozen[name])
              expect(count).toBeLessThanOrEqual(state?.currentReplicas ?? 0);
          }
        },
      ),
      { numRuns: 400 },
    );
  });

  it("places everything when capacity allows (healthy, unlimited clusters)", () => {
    fc.assert(
      fc.property(
        schedulingArb,
        clustersArb(true),
        fc.nat({ max: 100 }),
        (scheduling, clusters, replicas) => {
          const decision = decide(problemOf({ replicaScheduling: scheduling }, clusters, replicas));
          expect(decision.unschedulable).toBe(0);
          expect(total(decision)).toBe(replicas);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("respects maxReplicas always, and minReplicas when the total and capacity allow", () => {
    fc.assert(
      fc.property(placementArb, clustersArb(true), fc.nat({ max: 60 }), (placement, clusters, replicas) => {
        const decision = decide(problemOf(placement, clusters, replicas));
        for (const limit of placement.replicaScheduling?.clusterLimits ?? []) {
          const [name = ""] = limit.targetCluster.clusterNames ?? [];
          const count = decision.clusters[name] ?? 0;
          expect(count).toBeLessThanOrEqual(limit.maxReplicas ?? Number.POSITIVE_INFINITY);
          const selected = decision.diagnosis.selected.includes(name);
          const hasWeight =
            placement.replicaScheduling?.weightPreference?.staticWeightList === undefined ||
            ["a", "b", "c"].includes(name);
          if (
            selected &&
            hasWeight &&
            replicas >= (limit.minReplicas ?? 0) &&
            !placement.replicaScheduling?.avoidDisruption
          ) {
            expect(count).toBeGreaterThanOrEqual(limit.minReplicas ?? 0);
          }
        }
      }),
      { numRuns: 300 },
    );
  });

  it("gives the same decision for any order of the clusters", () => {
    fc.assert(
      fc.property(
        placementArb,
        clustersArb(false),
        fc.nat({ max: 60 }),
        uidArb,
        fc.array(fc.integer()),
        (placement, clusters, replicas, uid, keys) => {
          const shuffled = clusters
            .map((c, i) => ({ c, k: keys[i % Math.max(keys.length, 1)] ?? 0 }))
            .sort((x, y) => x.k - y.k)
            .map((x) => x.c);
          expect(decide(problemOf(placement, shuffled, replicas, uid))).toEqual(
            decide(problemOf(placement, clusters, replicas, uid)),
          );
        },
      ),
      { numRuns: 300 },
    );
  });

  it("static division is monotone: raising the total never takes a replica from a cluster", () => {
    const staticOnly = schedulingArb.filter(
      (s) => s.weightPreference?.dynamicWeight === undefined && s.divisionPreference !== "Aggregated",
    );
    fc.assert(
      fc.property(
        staticOnly,
        clustersArb(true),
        fc.nat({ max: 80 }),
        uidArb,
        (scheduling, clusters, replicas, uid) => {
          const before = decide(problemOf({ replicaScheduling: scheduling }, clusters, replicas, uid));
          const after = decide(problemOf({ replicaScheduling: scheduling }, clusters, replicas + 1, uid));
          for (const [name, count] of Object.entries(before.clusters))
            expect(after.clusters[name] ?? 0).toBeGreaterThanOrEqual(count);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("with avoidDisruption no cluster moves against the direction of the change", () => {
    fc.assert(
      fc.property(schedulingArb, clustersArb(true), fc.nat({ max: 80 }), (scheduling, clusters, replicas) => {
        const placement = { replicaScheduling: { ...scheduling, avoidDisruption: true } };
        const decision = decide(problemOf(placement, clusters, replicas));
        const held = clusters
          .filter((c) => decision.diagnosis.selected.includes(c.name))
          .reduce((sum, c) => sum + (c.currentReplicas ?? 0), 0);
        for (const c of clusters.filter((x) => decision.diagnosis.selected.includes(x.name))) {
          const count = decision.clusters[c.name] ?? 0;
          if (replicas >= held) expect(count).toBeGreaterThanOrEqual(c.currentReplicas ?? 0);
          if (replicas <= held) expect(count).toBeLessThanOrEqual(c.currentReplicas ?? 0);
        }
      }),
      { numRuns: 300 },
    );
  });
});
