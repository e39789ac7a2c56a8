import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { PlacementSpec } from "../../src/model/types.js";
import { scheduleWorkload } from "../../src/schedule/schedule.js";
import { tierShares } from "../../src/schedule/tiers.js";
import type { ScheduleDecision } from "../../src/schedule/types.js";
import { type ClusterInput, cluster, problem } from "../helpers/scheduling.js";

// Overflow tiers: own data centres first, the clouds only for what does not fit.

const idc = (name: string, available: number, current?: number): ClusterInput =>
  cluster(name, {
    provider: "idc",
    labels: { tier: "onprem" },
    availableReplicas: available,
    ...(current !== undefined ? { currentReplicas: current } : {}),
  });
const cloud = (name: string, available?: number, current?: number): ClusterInput =>
  cluster(name, {
    provider: "aws",
    labels: { tier: "cloud" },
    ...(available !== undefined ? { availableReplicas: available } : {}),
    ...(current !== undefined ? { currentReplicas: current } : {}),
  });

function tiered(reclaim?: "Never" | "WhenRoom", dynamic = true): PlacementSpec {
  return {
    replicaScheduling: {
      type: "Divided",
      ...(dynamic ? { weightPreference: { dynamicWeight: "AvailableReplicas" } } : {}),
    },
    overflow: {
      tiers: [
        { name: "onprem", clusterAffinity: { labelSelector: { matchLabels: { tier: "onprem" } } } },
        { name: "cloud", clusterAffinity: { labelSelector: { matchLabels: { tier: "cloud" } } } },
      ],
      ...(reclaim ? { reclaim } : {}),
    },
  };
}

function decide(placement: PlacementSpec, clusters: ClusterInput[], replicas: number): ScheduleDecision {
  const result = scheduleWorkload(problem(placement, clusters, replicas));
  if (!result.ok) throw new Error(result.error);
  return result.decision;
}

describe("overflow tiers", () => {
  it.each([
    // [what, clusters, total, expected division, tier replicas]
    ["all fits on-prem", [idc("a", 6), idc("b", 4), cloud("x")], 8, { a: 5, b: 3 }, [8, 0]],
    ["exactly what on-prem fits", [idc("a", 6), idc("b", 4), cloud("x")], 10, { a: 6, b: 4 }, [10, 0]],
    [
      "one more than on-prem fits overflows one",
      [idc("a", 6), idc("b", 4), cloud("x")],
      11,
      { a: 6, b: 4, x: 1 },
      [10, 1],
    ],
    [
      "the rest divided over the clouds",
      [idc("a", 6), idc("b", 4), cloud("x", 10), cloud("y", 10)],
      20,
      { a: 6, b: 4, x: 5, y: 5 },
      [10, 10],
    ],
    ["an empty first tier sends all to the next", [cloud("x", 10)], 4, { x: 4 }, [0, 4]],
  ])("%s", (_what, clusters, total, expected, tierReplicas) => {
    const decision = decide(tiered(), clusters as ClusterInput[], total as number);
    expect(decision.clusters).toEqual(expected);
    expect(decision.unschedulable).toBe(0);
    expect(decision.diagnosis.tiers?.map((t) => t.replicas)).toEqual(tierReplicas);
    expect(decision.diagnosis.summary).toBe(
      `tier onprem ${(tierReplicas as number[])[0]}, tier cloud ${(tierReplicas as number[])[1]}`,
    );
  });

  it("says what fits in no tier", () => {
    const decision = decide(tiered(), [idc("a", 3), cloud("x", 2)], 8);
    expect(decision.clusters).toEqual({ a: 3, x: 2 });
    expect(decision.unschedulable).toBe(3);
    expect(decision.diagnosis.summary).toBe("tier onprem 3, tier cloud 2; 3 fit in no tier");
    expect(decision.diagnosis.unschedulableReason).toBeDefined();
  });

  it("takes a scale-down from the last tier first", () => {
    // Running 6+4 on-prem and 6 in the cloud; down to 12: the cloud gives back 4.
    const decision = decide(tiered(), [idc("a", 0, 6), idc("b", 0, 4), cloud("x", 10, 6)], 12);
    expect(decision.clusters).toEqual({ a: 6, b: 4, x: 2 });
  });

  it("leaves overflowed replicas where they run when on-prem regains room, unless reclaim is WhenRoom", () => {
    // On-prem ran full (10) and 6 overflowed; now on-prem has room for 6 more.
    const running = [idc("a", 4, 6), idc("b", 2, 4), cloud("x", 10, 6)];
    expect(decide(tiered(), running, 16).clusters).toEqual({ a: 6, b: 4, x: 6 });
    const reclaimed = decide(tiered("WhenRoom"), running, 16);
    expect(reclaimed.diagnosis.tiers?.map((t) => t.replicas)).toEqual([16, 0]);
  });

  it("a scale-up's increment fills the first tier's room before the next", () => {
    const decision = decide(tiered(), [idc("a", 2, 6), idc("b", 0, 4), cloud("x", 10, 6)], 20);
    expect(decision.diagnosis.tiers?.map((t) => t.replicas)).toEqual([12, 8]);
  });

  it("puts a cluster two tiers select in the first", () => {
    const both = cluster("both", { labels: { tier: "onprem" }, provider: "aws", availableReplicas: 3 });
    const placement: PlacementSpec = {
      replicaScheduling: { type: "Divided" },
      overflow: {
        tiers: [
          { name: "onprem", clusterAffinity: { labelSelector: { matchLabels: { tier: "onprem" } } } },
          {
            name: "aws",
            clusterAffinity: {
              fieldSelector: { matchExpressions: [{ key: "provider", operator: "In", values: ["aws"] }] },
            },
          },
        ],
      },
    };
    const decision = decide(placement, [both, cloud("x", 10)], 5);
    expect(decision.diagnosis.tiers).toEqual([
      { name: "onprem", clusters: ["both"], replicas: 3 },
      { name: "aws", clusters: ["x"], replicas: 2 },
    ]);
  });

  it("Duplicated ignores tiers", () => {
    const placement: PlacementSpec = { ...tiered(), replicaScheduling: { type: "Duplicated" } };
    expect(decide(placement, [idc("a", 1), cloud("x", 1)], 3).clusters).toEqual({ a: 3, x: 3 });
  });
});

describe("tier shares", () => {
  it("never gives a tier more than fits, sums to the total where it fits, and keeps what it can (property)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.nat({ max: 20 }), fc.nat({ max: 20 })), { minLength: 1, maxLength: 4 }),
        fc.nat({ max: 60 }),
        (tiers, total) =>
          checkShares(
            total,
            tiers.map(([k]) => k),
            tiers.map(([, f]) => f),
          ),
      ),
    );
  });
});

function checkShares(total: number, keep: number[], fits: number[]): void {
  const shares = tierShares(total, keep, fits);
  const capacity = fits.reduce((a, b) => a + b, 0);
  expect(shares.reduce((a, b) => a + b, 0)).toBe(total);
  // Every tier but the last (which also carries what fits nowhere) gets at most what fits.
  for (const [i, share] of shares.slice(0, -1).entries())
    expect(share).toBeLessThanOrEqual(fits[i] as number);
  if (total <= capacity) expect(shares.at(-1)).toBeLessThanOrEqual(fits.at(-1) as number);
  // A tier gives up held replicas only when the total shrinks below what all tiers keep.
  const kept = keep.map((k, i) => Math.min(k, fits[i] as number));
  if (total < kept.reduce((a, b) => a + b, 0)) return;
  for (const [i, share] of shares.entries()) expect(share).toBeGreaterThanOrEqual(kept[i] as number);
}
