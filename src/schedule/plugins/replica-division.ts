import { matchesClusterAffinity } from "../../model/cluster-affinity.js";
import type { ReplicaScheduling } from "../../model/types.js";
import { avoidDisruption } from "../division/avoid-disruption.js";
import { divideByCapacity } from "../division/dynamic-weight.js";
import { capOf, floorOf, type Slot, sumOf } from "../division/slots.js";
import { divideByStaticWeight } from "../division/static-weight.js";
import type { ReplicasPlugin, SchedulingContext, ScoredCandidate } from "../framework.js";
import type { ClusterRoom, QuotaCaps } from "../types.js";

/**
 * Assigns replicas to the selected clusters: Duplicated gives each the full count; Divided splits it
 * by static weights, by available capacity, or Aggregated, within per-cluster limits, then applies
 * avoidDisruption. The sum always equals the total or the shortfall is reported as unschedulable.
 */
export const ReplicaDivision: ReplicasPlugin = {
  name: "ReplicaDivision",
  assign: (context, selected) => {
    const { problem, order } = context;
    const total = problem.replicas;
    if (!Number.isInteger(total) || total < 0)
      return { status: "Error", message: `replicas must be a non-negative integer (got ${total})` };
    const scheduling = problem.placement.replicaScheduling;
    if (!context.divided) {
      return duplicate(selected, total, problem.quota);
    }
    const caps = withQuota(problem.caps ?? {}, problem.quota);
    const slots = toSlots(selected, scheduling, caps.caps);
    const division = divide(context, slots, scheduling);
    // A rebalance recomputes from scratch: avoidDisruption does not hold it back.
    const assignment =
      (scheduling?.avoidDisruption && problem.rebalance !== true) || problem.keepCurrent
        ? avoidDisruption(division, clampedCurrent(slots), order)
        : division;
    const unschedulable = total - sumOf(assignment.values());
    // Every selected cluster's room when some replicas fit nowhere (each is at its cap, and says why).
    const listed = unschedulable > 0 ? undefined : assignment;
    const room = roomOf(slots, selected, listed, { scheduling, caps: caps.by });
    const reason = unschedulable > 0 ? shortfallReason(unschedulable, slots, room) : undefined;
    const used = new Set(slots.map((s) => s.name));
    const excluded = Object.fromEntries(
      selected.filter((c) => !used.has(c.cluster.name)).map((c) => [c.cluster.name, "no static weight"]),
    );
    return {
      status: "Success",
      assignment,
      unschedulable,
      excluded,
      ...(reason ? { reason } : {}),
      ...(Object.keys(room).length > 0 ? { room } : {}),
    };
  },
};

// Duplicated: each selected cluster gets the full count, within its quota's room; what a quota leaves
// out is unschedulable.
function duplicate(
  selected: readonly ScoredCandidate[],
  total: number,
  quota: QuotaCaps | undefined,
): ReturnType<ReplicasPlugin["assign"]> {
  let short = selected.length === 0 ? total : 0;
  const assignment = new Map(
    selected.map((c) => {
      const room = Math.min(total, quota?.caps[c.cluster.name] ?? total);
      short += total - room;
      return [c.cluster.name, c.frozenReason ? Math.min(room, c.current) : room];
    }),
  );
  if (short === 0) return { status: "Success", assignment, unschedulable: 0 };
  const reason =
    selected.length === 0
      ? "no cluster selected"
      : `${short} replicas unschedulable: ${quota?.by} leaves no room for them`;
  return { status: "Success", assignment, unschedulable: short, reason };
}

// Failover's caps and the quota's, the lower of the two per cluster, and which of them sets each.
function withQuota(
  caps: Readonly<Record<string, number>>,
  quota: QuotaCaps | undefined,
): { caps: Readonly<Record<string, number>>; by: Readonly<Record<string, string>> } {
  const by: Record<string, string> = {};
  for (const cluster of Object.keys(caps)) by[cluster] = "failover";
  if (!quota) return { caps, by };
  const merged: Record<string, number> = { ...caps };
  for (const [cluster, cap] of Object.entries(quota.caps)) {
    if (cap < (merged[cluster] ?? Number.POSITIVE_INFINITY)) by[cluster] = quota.by;
    merged[cluster] = Math.min(cap, merged[cluster] ?? cap);
  }
  return { caps: merged, by };
}

interface Bounds {
  readonly scheduling: ReplicaScheduling | undefined;
  /** Per cluster, what sets its cap (failover, a quota's name). */
  readonly caps: Readonly<Record<string, string>>;
}

// Per cluster the division gives replicas (every selected one without `assignment`), when bounded:
// the most replicas of the workload it can hold and what sets that number — capacity (the resource
// that bounds its nodes), clusterLimits' maxReplicas, a quota, failover's cap, or a frozen cluster's
// current count. (Only those clusters: a workload selecting 500 clusters keeps a handful of entries.)
function roomOf(
  slots: readonly Slot[],
  selected: readonly ScoredCandidate[],
  assignment: ReadonlyMap<string, number> | undefined,
  bounds: Bounds,
): Record<string, ClusterRoom> {
  const byName = new Map<string, ScoredCandidate>();
  const room: Record<string, ClusterRoom> = {};
  for (const slot of slots) {
    const holds = capOf(slot);
    if (!Number.isFinite(holds) || (assignment && (assignment.get(slot.name) ?? 0) === 0)) continue;
    if (byName.size === 0) for (const c of selected) byName.set(c.cluster.name, c);
    room[slot.name] = { holds, by: boundOf(slot, byName.get(slot.name), bounds) };
  }
  return room;
}

function boundOf(slot: Slot, candidate: ScoredCandidate | undefined, bounds: Bounds): string {
  if (slot.current + slot.free <= slot.max) return candidate?.limit ?? "capacity";
  if (candidate?.frozenReason && slot.max === slot.current) return "frozen";
  const limit = Math.min(
    Number.POSITIVE_INFINITY,
    ...(bounds.scheduling?.clusterLimits ?? [])
      .filter((l) => candidate && matchesClusterAffinity(l.targetCluster, candidate.cluster))
      .map((l) => l.maxReplicas ?? Number.POSITIVE_INFINITY),
  );
  return limit === slot.max ? "maxReplicas" : (bounds.caps[slot.name] ?? "maxReplicas");
}

function divide(
  context: SchedulingContext,
  slots: readonly Slot[],
  scheduling: ReplicaScheduling | undefined,
): ReadonlyMap<string, number> {
  const { problem, order } = context;
  const aggregated = scheduling?.divisionPreference === "Aggregated";
  const dynamic = aggregated || scheduling?.weightPreference?.dynamicWeight === "AvailableReplicas";
  const division = dynamic
    ? divideByCapacity(problem.replicas, slots, { aggregated, fresh: problem.rebalance === true, order })
    : divideByStaticWeight(problem.replicas, slots, order);
  return division.seats;
}

function toSlots(
  selected: readonly ScoredCandidate[],
  scheduling: ReplicaScheduling | undefined,
  caps: Readonly<Record<string, number>>,
): Slot[] {
  const weights = staticWeights(selected, scheduling);
  const limits = scheduling?.clusterLimits ?? [];
  const slots: Slot[] = [];
  selected.forEach((c, i) => {
    const weight = weights[i] ?? 0;
    if (weight === 0) return;
    let min = 0;
    let max = Number.POSITIVE_INFINITY;
    for (const limit of limits) {
      if (!matchesClusterAffinity(limit.targetCluster, c.cluster)) continue;
      min = Math.max(min, limit.minReplicas ?? 0);
      max = Math.min(max, limit.maxReplicas ?? Number.POSITIVE_INFINITY);
    }
    const current = c.current;
    max = Math.min(max, caps[c.cluster.name] ?? Number.POSITIVE_INFINITY);
    slots.push({
      name: c.cluster.name,
      weight,
      current,
      free: c.free ?? Number.POSITIVE_INFINITY,
      min,
      max: c.frozenReason ? Math.min(max, current) : max,
    });
  });
  return slots;
}

// A cluster's weight is the highest of the rules that select it; clusters no rule selects get none;
// when no cluster has a weight (or there is no list), every cluster weighs 1 (Karmada's rule).
function staticWeights(
  selected: readonly ScoredCandidate[],
  scheduling: ReplicaScheduling | undefined,
): number[] {
  const rules = scheduling?.weightPreference?.staticWeightList ?? [];
  const weights = selected.map((c) => {
    let weight = 0;
    for (const rule of rules)
      if (rule.weight > weight && matchesClusterAffinity(rule.targetCluster, c.cluster)) weight = rule.weight;
    return weight;
  });
  return weights.every((w) => w === 0) ? weights.map(() => 1) : weights;
}

function clampedCurrent(slots: readonly Slot[]): Map<string, number> {
  return new Map(slots.map((s) => [s.name, Math.min(Math.max(s.current, floorOf(s)), capOf(s))]));
}

function shortfallReason(
  unschedulable: number,
  slots: readonly Slot[],
  room: Readonly<Record<string, ClusterRoom>>,
): string {
  if (slots.length === 0) return `${unschedulable} replicas unschedulable: no selected cluster has a weight`;
  const fit = sumOf(slots.map(capOf));
  const by = [...new Set(Object.values(room).map((r) => r.by))].sort();
  return `${unschedulable} replicas unschedulable: the selected clusters fit ${fit} in all (${by.join(", ") || "capacity"})`;
}
