import { describe, expect, it } from "vitest";
import type { PlacementSpec } from "../../src/model/types.js";
import type { Profile } from "../../src/schedule/framework.js";
import { DEFAULT_PROFILE } from "../../src/schedule/profile.js";
import { scheduleWorkload } from "../../src/schedule/schedule.js";
import type { ScheduleDecision } from "../../src/schedule/types.js";
import { type ClusterInput, cluster, DIVIDED, problem } from "../helpers/scheduling.js";

function decide(
  placement: PlacementSpec,
  clusters: readonly ClusterInput[],
  replicas = 10,
  rebalance = false,
): ScheduleDecision {
  const result = scheduleWorkload(problem(placement, clusters, replicas, rebalance ? { rebalance } : {}));
  if (!result.ok) throw new Error(result.error);
  return result.decision;
}

const east = (name: string, fields: Partial<ClusterInput> = {}) =>
  cluster(name, { region: "east", provider: "aws", ...fields });
const west = (name: string, fields: Partial<ClusterInput> = {}) =>
  cluster(name, { region: "west", provider: "gcp", ...fields });
const gpuTaint = { key: "gpu", value: "true", effect: "NoSchedule" as const };
const evict = { key: "maintenance", value: "true", effect: "NoExecute" as const };

describe("scheduling decisions", () => {
  it("explains a fully filtered fleet in one line, most common reason first", () => {
    const placement: PlacementSpec = {
      ...DIVIDED,
      clusterAffinity: {
        fieldSelector: { matchExpressions: [{ key: "region", operator: "In", values: ["east"] }] },
      },
    };
    const decision = decide(placement, [
      east("a", { taints: [gpuTaint] }),
      east("b", { taints: [gpuTaint] }),
      east("c", { taints: [gpuTaint] }),
      west("d"),
      west("e"),
    ]);
    expect(decision.clusters).toEqual({});
    expect(decision.unschedulable).toBe(10);
    expect(decision.diagnosis.summary).toBe(
      "0/5 clusters available: 3 untolerated taint {gpu=true:NoSchedule}, 2 not in region [east]",
    );
    expect(decision.diagnosis.unschedulableReason).toBe(
      "0/5 clusters available: 3 untolerated taint {gpu=true:NoSchedule}, 2 not in region [east]; no cluster is available",
    );
  });

  it.each([
    [
      "counts clusters outside the affinity without listing them",
      [east("a"), east("b", { taints: [gpuTaint] }), west("c"), west("d", { taints: [evict] })],
      "1/4 clusters available: 1 not in region [east], 1 untolerated taint {gpu=true:NoSchedule}, 1 untolerated taint {maintenance=true:NoExecute}",
      { b: "untolerated taint {gpu=true:NoSchedule}" },
    ],
    [
      "lists no cluster outside the affinity, even one that held replicas (the same inputs, the same diagnosis)",
      [east("a"), west("c", { currentReplicas: 4 }), west("d", { taints: [evict], currentReplicas: 1 })],
      "1/3 clusters available: 1 not in region [east], 1 untolerated taint {maintenance=true:NoExecute}",
      {},
    ],
  ])("%s", (_name, clusters, summary, filtered) => {
    const placement: PlacementSpec = {
      ...DIVIDED,
      clusterAffinity: {
        fieldSelector: { matchExpressions: [{ key: "region", operator: "In", values: ["east"] }] },
      },
    };
    const decision = decide(placement, clusters);
    expect(decision.diagnosis.summary).toBe(summary);
    expect(decision.diagnosis.filtered).toEqual(filtered);
    expect(decision.clusters).toEqual({ a: 10 });
  });

  it("lists every removed cluster when the profile has no scoping filter", () => {
    const profile: Profile = {
      ...DEFAULT_PROFILE,
      filter: DEFAULT_PROFILE.filter.filter((plugin) => plugin.name !== "ClusterAffinity"),
    };
    const result = scheduleWorkload(
      problem(DIVIDED, [east("a"), west("d", { taints: [gpuTaint] })], 10),
      profile,
    );
    if (!result.ok) throw new Error(result.error);
    expect(result.decision.diagnosis.filtered).toEqual({ d: "untolerated taint {gpu=true:NoSchedule}" });
  });

  it("duplicates by default: every selected cluster gets the full count", () => {
    expect(decide({}, [east("a"), west("b")], 3).clusters).toEqual({ a: 3, b: 3 });
  });

  it("keeps a cordoned cluster's replicas without growing it", () => {
    const decision = decide(
      DIVIDED,
      [east("a", { currentReplicas: 2, unschedulable: true }), east("b"), east("c")],
      12,
    );
    expect(decision.clusters).toEqual({ a: 2, b: 5, c: 5 });
    expect(decision.diagnosis.frozen).toEqual({ a: "cluster cordoned: keeps 2, takes no new replicas" });
  });

  it("moves replicas off a cluster with an untolerated NoExecute taint", () => {
    const noExecute = { key: "gitfleet.io/not-ready", effect: "NoExecute" as const };
    const decision = decide(
      DIVIDED,
      [east("a", { currentReplicas: 5, taints: [noExecute] }), east("b", { currentReplicas: 5 })],
      10,
    );
    expect(decision.clusters).toEqual({ b: 10 });
  });

  it.each([
    ["within the failover toleration (300 s by default): kept, frozen", 299_000, { a: 5, b: 5 }],
    ["once the toleration has run out: moved", 300_000, { b: 10 }],
  ])("a health NoExecute taint %s", (_name, elapsed, expected) => {
    const noExecute = { key: "gitfleet.io/unreachable", effect: "NoExecute" as const, addedAt: 1_000 };
    const result = scheduleWorkload({
      ...problem(
        DIVIDED,
        [east("a", { currentReplicas: 5, taints: [noExecute] }), east("b", { currentReplicas: 5 })],
        10,
      ),
      now: 1_000 + elapsed,
    });
    if (!result.ok) throw new Error(result.error);
    expect(result.decision.clusters).toEqual(expected);
  });

  it("keepCurrent holds the current counts when a cluster comes back, and caps lower a cluster's count", () => {
    const clusters = [east("a", { currentReplicas: 5 }), east("b", { currentReplicas: 5 }), east("c")];
    const fresh = scheduleWorkload(problem(DIVIDED, clusters, 10));
    const kept = scheduleWorkload({ ...problem(DIVIDED, clusters, 10), keepCurrent: true });
    const capped = scheduleWorkload({ ...problem(DIVIDED, clusters, 10), keepCurrent: true, caps: { a: 2 } });
    if (!fresh.ok || !kept.ok || !capped.ok) throw new Error("scheduling failed");
    expect(Object.values(fresh.decision.clusters).sort()).toEqual([3, 3, 4]);
    expect(kept.decision.clusters).toEqual({ a: 5, b: 5 });
    expect(capped.decision.clusters.a).toBe(2);
    expect((capped.decision.clusters.b ?? 0) + (capped.decision.clusters.c ?? 0)).toBe(8);
  });

  it("divides by static weights from clusters' fields (max of matching rules; unmatched clusters excluded)", () => {
    const placement: PlacementSpec = {
      replicaScheduling: {
        type: "Divided",
        weightPreference: {
          staticWeightList: [
            {
              targetCluster: {
                fieldSelector: { matchExpressions: [{ key: "provider", operator: "In", values: ["aws"] }] },
              },
              weight: 2,
            },
            { targetCluster: { clusterNames: ["a"] }, weight: 3 },
            {
              targetCluster: {
                fieldSelector: { matchExpressions: [{ key: "provider", operator: "In", values: ["gcp"] }] },
              },
              weight: 1,
            },
          ],
        },
      },
    };
    expect(decide(placement, [east("a"), east("b"), west("c"), cluster("d")], 12).clusters).toEqual({
      a: 6,
      b: 4,
      c: 2,
    });
  });

  it("selects by Karmada's capacity swap: scores 60/50/40, room 40/30/60, 80 replicas in 2 clusters → 1 and 3", () => {
    // Locality gives m1 and m2 a head start, as Karmada's scores would.
    const clusters = [
      cluster("m1", { currentReplicas: 1, availableReplicas: 39 }),
      cluster("m2", { currentReplicas: 1, availableReplicas: 29 }),
      cluster("m3", { availableReplicas: 60 }),
    ];
    const decision = decide(
      {
        maxClusters: 2,
        replicaScheduling: { type: "Divided", weightPreference: { dynamicWeight: "AvailableReplicas" } },
      },
      clusters,
      80,
    );
    expect(decision.diagnosis.selected).toEqual(["m1", "m3"]);
    expect(decision.diagnosis.notSelected).toEqual({ m2: "maxClusters 2" });
    expect(decision.unschedulable).toBe(0);
  });

  it("spreads over regions: the best cluster of each region is pinned, then the rest fill up to the limit", () => {
    const placement: PlacementSpec = {
      ...DIVIDED,
      spreadConstraints: [
        { spreadByField: "region", minGroups: 2 },
        { spreadByField: "cluster", maxGroups: 3 },
      ],
    };
    const clusters = [
      east("e1", { currentReplicas: 1 }),
      east("e2", { currentReplicas: 1 }),
      east("e3", { currentReplicas: 1 }),
      west("w1"),
    ];
    const decision = decide(placement, clusters, 9);
    expect(decision.diagnosis.selected).toEqual(["e1", "e2", "w1"]);
    expect(decision.diagnosis.notSelected).toEqual({ e3: "cluster limit 3" });
  });

  it("honours zone and label spreads, which Karmada only filters on", () => {
    const clusters = [
      cluster("a", { zone: "z1", labels: { rack: "r1" } }),
      cluster("b", { zone: "z1", labels: { rack: "r2" } }),
      cluster("c", { zone: "z2", labels: { rack: "r1" } }),
    ];
    const byZone = decide(
      { ...DIVIDED, spreadConstraints: [{ spreadByField: "zone", maxGroups: 1 }] },
      clusters,
      4,
    );
    expect(byZone.diagnosis.selected).toEqual(["a", "b"]);
    expect(byZone.diagnosis.notSelected).toEqual({ c: "zone not chosen (maxGroups 1)" });
    const byRack = decide(
      { ...DIVIDED, spreadConstraints: [{ spreadByLabel: "rack", minGroups: 3 }] },
      clusters,
      4,
    );
    expect(byRack.unschedulable).toBe(4);
    expect(byRack.diagnosis.unschedulableReason).toBe(
      "3/3 clusters available; only 2 label rack groups available, spread needs at least 3",
    );
  });

  it("reports replicas that do not fit, and places the rest", () => {
    const decision = decide(
      { replicaScheduling: { type: "Divided", weightPreference: { dynamicWeight: "AvailableReplicas" } } },
      [east("a", { availableReplicas: 3 }), west("b", { availableReplicas: 4 })],
      10,
    );
    expect(decision.clusters).toEqual({ a: 3, b: 4 });
    expect(decision.unschedulable).toBe(3);
    expect(decision.diagnosis.unschedulableReason).toBe(
      "2/2 clusters available; 3 replicas unschedulable: the selected clusters fit 7 in all (capacity)",
    );
  });

  it("applies avoidDisruption after division", () => {
    const placement: PlacementSpec = { replicaScheduling: { type: "Divided", avoidDisruption: true } };
    const clusters = [east("a", { currentReplicas: 15 }), east("b", { currentReplicas: 15 }), east("c")];
    expect(decide(placement, clusters, 30).clusters).toEqual({ a: 15, b: 15 });
    expect(decide(placement, clusters, 36).clusters).toEqual({ a: 15, b: 15, c: 6 });
  });

  it("keeps per-cluster limits", () => {
    const placement: PlacementSpec = {
      replicaScheduling: {
        type: "Divided",
        clusterLimits: [
          { targetCluster: { clusterNames: ["a"] }, maxReplicas: 2 },
          { targetCluster: { clusterNames: ["c"] }, minReplicas: 5 },
        ],
      },
    };
    // c's minimum first; the other 4 by equal weights, a at its maximum of 2.
    expect(decide(placement, [east("a"), east("b"), east("c")], 9).clusters).toEqual({ a: 2, b: 1, c: 6 });
  });

  it("turns a plugin error into an error result naming the plugin", () => {
    const failing: Profile = {
      ...DEFAULT_PROFILE,
      filter: [{ name: "Broken", filter: () => ({ status: "Error", message: "boom" }) }],
    };
    expect(scheduleWorkload(problem(DIVIDED, [east("a")]), failing)).toEqual({
      ok: false,
      error: "Broken: cluster a: boom",
    });
    expect(scheduleWorkload(problem({ ...DIVIDED, maxClusters: 0 }, [east("a")]))).toEqual({
      ok: false,
      error: "MaxClusters: maxClusters must be a positive integer (got 0)",
    });
    expect(
      scheduleWorkload(
        problem(
          { ...DIVIDED, spreadConstraints: [{ spreadByField: "region", minGroups: 3, maxGroups: 2 }] },
          [east("a")],
        ),
      ),
    ).toEqual({
      ok: false,
      error: "SpreadConstraints: spread by region: minGroups exceeds maxGroups",
    });
    expect(scheduleWorkload(problem(DIVIDED, [east("a")], 1.5))).toEqual({
      ok: false,
      error: "ReplicaDivision: replicas must be a non-negative integer (got 1.5)",
    });
  });

  it("scores locality and capacity: the sticky cluster ranks first, then the roomiest", () => {
    const decision = decide(
      { ...DIVIDED, maxClusters: 2 },
      [
        cluster("a", { availableReplicas: 5 }),
        cluster("b", { availableReplicas: 50 }),
        cluster("c", { currentReplicas: 1, availableReplicas: 1 }),
      ],
      4,
    );
    // Ranked c (locality 100 + capacity 2), b (capacity 100), a (capacity 10): a is the one left out.
    expect(decision.diagnosis.selected).toEqual(["b", "c"]);
    expect(decision.diagnosis.notSelected).toEqual({ a: "maxClusters 2" });
  });
});
