import type { SpreadConstraint } from "../../model/types.js";
import type { ScoredCandidate, SelectPlugin, SelectResult } from "../framework.js";
import { keepWithCapacity } from "./capacity-cap.js";
import { groupLabel, groupOf } from "./spread-constraint.js";

/**
 * Spreads the chosen clusters over groups. For each group constraint (region, zone, provider or a
 * label; Karmada implements only region, we honour all four): rank the groups, keep at most maxGroups,
 * fail when fewer than minGroups exist, and pin the best cluster of every kept group so each is
 * covered. Then fill with the best remaining clusters of kept groups up to the cluster limit (the
 * `cluster` constraint's maxGroups and spec.maxClusters), swapping for capacity when divided.
 */
export const SpreadConstraints: SelectPlugin = {
  name: "SpreadConstraints",
  select: ({ problem, divided }, candidates) => {
    const constraints = problem.placement.spreadConstraints ?? [];
    if (constraints.length === 0) return { status: "Success", selected: candidates };
    const inverted = constraints.find((c) => (c.minGroups ?? 1) > (c.maxGroups ?? Number.POSITIVE_INFINITY));
    if (inverted)
      return { status: "Error", message: `spread by ${groupLabel(inverted)}: minGroups exceeds maxGroups` };
    const byCluster = constraints.find((c) => c.spreadByField === "cluster");
    const cap = Math.min(
      byCluster?.maxGroups ?? Number.POSITIVE_INFINITY,
      problem.placement.maxClusters ?? Number.POSITIVE_INFINITY,
    );
    const grouped = applyGroupConstraints(
      constraints.filter((c) => c !== byCluster),
      candidates,
      divided,
    );
    if (grouped.status !== "Success") return grouped;
    const { pool, pinned, dropped } = grouped;
    if (pinned.size > cap) {
      return {
        status: "Unschedulable",
        reason: `spreading needs ${pinned.size} clusters but at most ${cap} may be selected`,
      };
    }
    const ordered = [
      ...pool.filter((c) => pinned.has(c.cluster.name)),
      ...pool.filter((c) => !pinned.has(c.cluster.name)),
    ];
    const selected = keepWithCapacity(ordered, cap, { replicas: problem.replicas, divided, pinned });
    const minClusters = byCluster?.minGroups ?? 1;
    if (selected.length < minClusters) {
      return {
        status: "Unschedulable",
        reason: `only ${selected.length} clusters available, spread needs at least ${minClusters}`,
      };
    }
    const kept = new Set(selected.map((c) => c.cluster.name));
    const why = `cluster limit ${cap}`;
    for (const c of pool) if (!kept.has(c.cluster.name)) dropped[c.cluster.name] = why;
    return { status: "Success", selected: candidates.filter((c) => kept.has(c.cluster.name)), dropped };
  },
};

type Grouped =
  | {
      readonly status: "Success";
      readonly pool: ScoredCandidate[];
      readonly pinned: Set<string>;
      readonly dropped: Record<string, string>;
    }
  | Exclude<SelectResult, { status: "Success" }>;

// Applies each group constraint in turn: keep the chosen groups' clusters and pin each group's best.
function applyGroupConstraints(
  constraints: readonly SpreadConstraint[],
  candidates: readonly ScoredCandidate[],
  divided: boolean,
): Grouped {
  let pool = [...candidates];
  const pinned = new Set<string>();
  const dropped: Record<string, string> = {};
  for (const constraint of constraints) {
    const chosen = chooseGroups(constraint, pool, divided);
    if (chosen.status !== "Success") return chosen;
    for (const c of pool)
      if (!chosen.groups.has(groupOf(constraint, c.cluster))) dropped[c.cluster.name] = chosen.why;
    pool = pool.filter((c) => chosen.groups.has(groupOf(constraint, c.cluster)));
    for (const best of chosen.best) pinned.add(best);
  }
  return { status: "Success", pool, pinned, dropped };
}

type GroupChoice =
  | {
      readonly status: "Success";
      readonly groups: ReadonlySet<string>;
      readonly best: readonly string[];
      readonly why: string;
    }
  | Exclude<SelectResult, { status: "Success" }>;

// Groups ranked by their best cluster's rank; for divided workloads, by total room first (capacity
// decides whether the replicas fit, as in Karmada's capacity-dominant group score).
function chooseGroups(
  constraint: SpreadConstraint,
  pool: readonly ScoredCandidate[],
  divided: boolean,
): GroupChoice {
  const groups = new Map<string, { best: ScoredCandidate; rank: number; room: number }>();
  pool.forEach((candidate, rank) => {
    const name = groupOf(constraint, candidate.cluster);
    const room = candidate.room;
    const group = groups.get(name);
    if (group) group.room += room;
    else groups.set(name, { best: candidate, rank, room });
  });
  const ranked = [...groups.entries()].sort(([, a], [, b]) =>
    divided && a.room !== b.room ? b.room - a.room : a.rank - b.rank,
  );
  const min = constraint.minGroups ?? 1;
  const label = groupLabel(constraint);
  if (ranked.length < min) {
    return {
      status: "Unschedulable",
      reason: `only ${ranked.length} ${label} group${ranked.length === 1 ? "" : "s"} available, spread needs at least ${min}`,
    };
  }
  const kept = ranked.slice(0, constraint.maxGroups ?? ranked.length);
  return {
    status: "Success",
    groups: new Set(kept.map(([name]) => name)),
    best: kept.map(([, group]) => group.best.cluster.name),
    why: `${label} not chosen (maxGroups ${constraint.maxGroups ?? ranked.length})`,
  };
}
