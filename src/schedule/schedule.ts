import { compareStrings } from "../model/file-tree.js";
import { summarizeFilters } from "./diagnosis.js";
import { tieBreakOrder } from "./division/fnv.js";
import { estimateFreeReplicas, podRequirements } from "./estimator.js";
import type { Candidate, Profile, SchedulingContext, ScoredCandidate } from "./framework.js";
import { DEFAULT_PROFILE } from "./profile.js";
import type { ClusterState, ScheduleDecision, SchedulingProblem } from "./types.js";

/** A scheduling run either decides or hits a plugin error (a bug or bad input, never "does not fit"). */
export type ScheduleResult =
  | { readonly ok: true; readonly decision: ScheduleDecision }
  | { readonly ok: false; readonly error: string };

/**
 * Schedules one workload: filter → score → select → replicas, each stage a list of plugins. Pure and
 * deterministic: clusters are sorted by name first and every later order breaks ties explicitly, so
 * shuffling the input never changes the decision.
 */
export function scheduleWorkload(
  problem: SchedulingProblem,
  profile: Profile = DEFAULT_PROFILE,
): ScheduleResult {
  const context: SchedulingContext = {
    problem,
    order: tieBreakOrder(problem.workload.uid ?? ""),
    divided:
      (problem.placement.replicaScheduling?.type ?? "Divided") === "Divided" &&
      problem.placement.replicaScheduling !== undefined,
  };
  const clusters = [...problem.clusters].sort((a, b) => compareStrings(a.name, b.name));
  // 1. Filter: each cluster passes, is frozen (keeps what it has), or is removed with a reason.
  const filtered = filterClusters(context, clusters, profile);
  if (!filtered.ok) return filtered;
  // 2. Score and rank: score desc, then room desc, then name.
  const ranked = rankCandidates(context, filtered.candidates, profile);
  // 3. Select: spread constraints and cluster limits.
  const selected = selectClusters(context, ranked, profile);
  if (!selected.ok) return selected;
  // 4. Replicas: divide (or duplicate) the total over the selected clusters.
  let assignment = new Map<string, number>();
  let unschedulable = problem.replicas;
  let unschedulableReason = selected.reason;
  let selectedNames = selected.clusters.map((c) => c.cluster.name);
  if (selected.reason === undefined) {
    for (const plugin of profile.replicas) {
      const result = plugin.assign(context, selected.clusters);
      if (result.status === "Error") return { ok: false, error: `${plugin.name}: ${result.message}` };
      assignment = new Map(result.assignment);
      unschedulable = result.unschedulable;
      unschedulableReason = result.reason;
      const excluded = result.excluded ?? {};
      Object.assign(selected.dropped, excluded);
      selectedNames = selectedNames.filter((name) => excluded[name] === undefined);
    }
  }
  const summary = summarizeFilters(clusters.length, filtered.removed);
  const decision: ScheduleDecision = {
    clusters: Object.fromEntries(
      [...assignment].filter(([, n]) => n > 0).sort(([a], [b]) => compareStrings(a, b)),
    ),
    unschedulable,
    diagnosis: {
      summary,
      filtered: filtered.removed,
      frozen: Object.fromEntries(
        filtered.candidates
          .filter((c) => c.frozenReason)
          .map((c) => [
            c.cluster.name,
            `${c.frozenReason}: keeps ${c.cluster.currentReplicas}, takes no new replicas`,
          ]),
      ),
      notSelected: selected.dropped,
      selected: selectedNames,
      ...(unschedulable > 0 && unschedulableReason !== undefined
        ? {
            unschedulableReason: unschedulableReason.startsWith(summary)
              ? unschedulableReason
              : `${summary}; ${unschedulableReason}`,
          }
        : {}),
    },
  };
  return { ok: true, decision };
}

type Filtered =
  | { readonly ok: true; readonly candidates: Candidate[]; readonly removed: Record<string, string> }
  | { readonly ok: false; readonly error: string };

function filterClusters(
  context: SchedulingContext,
  clusters: readonly ClusterState[],
  profile: Profile,
): Filtered {
  const pod = podRequirements(context.problem.workload.podTemplate);
  const candidates: Candidate[] = [];
  const removed: Record<string, string> = {};
  for (const cluster of clusters) {
    const verdict = runFilters(context, cluster, profile);
    if ("error" in verdict) return { ok: false, error: verdict.error };
    if (verdict.removed !== undefined) removed[cluster.name] = verdict.removed;
    else
      candidates.push({
        cluster,
        free: estimateFreeReplicas(cluster, pod),
        ...(verdict.frozen ? { frozenReason: verdict.frozen } : {}),
      });
  }
  return { ok: true, candidates, removed };
}

// The first filter that removes the cluster wins; one that only forbids growth freezes a cluster that holds replicas.
function runFilters(
  context: SchedulingContext,
  cluster: ClusterState,
  profile: Profile,
): { readonly removed?: string; readonly frozen?: string } | { readonly error: string } {
  let frozen: string | undefined;
  for (const plugin of profile.filter) {
    const result = plugin.filter(context, cluster);
    if (result.status === "Error")
      return { error: `${plugin.name}: cluster ${cluster.name}: ${result.message}` };
    if (result.status === "Success") continue;
    if (!result.keepsExisting || cluster.currentReplicas === 0) return { removed: result.reason };
    frozen ??= result.reason;
  }
  return frozen === undefined ? {} : { frozen };
}

function rankCandidates(
  context: SchedulingContext,
  candidates: readonly Candidate[],
  profile: Profile,
): ScoredCandidate[] {
  const scores = candidates.map(() => 0);
  for (const plugin of profile.score) {
    plugin.score(context, candidates).forEach((score, i) => {
      scores[i] = (scores[i] ?? 0) + score;
    });
  }
  const room = (c: Candidate) =>
    c.free === undefined ? Number.POSITIVE_INFINITY : c.free + c.cluster.currentReplicas;
  return candidates
    .map((candidate, i) => ({ ...candidate, score: scores[i] ?? 0 }))
    .sort(
      (a, b) =>
        b.score - a.score ||
        (room(a) === room(b) ? 0 : room(b) > room(a) ? 1 : -1) ||
        compareStrings(a.cluster.name, b.cluster.name),
    );
}

type Selected =
  | {
      readonly ok: true;
      readonly clusters: readonly ScoredCandidate[];
      readonly dropped: Record<string, string>;
      readonly reason?: string;
    }
  | { readonly ok: false; readonly error: string };

function selectClusters(
  context: SchedulingContext,
  ranked: readonly ScoredCandidate[],
  profile: Profile,
): Selected {
  let clusters = ranked;
  const dropped: Record<string, string> = {};
  for (const plugin of profile.select) {
    const result = plugin.select(context, clusters);
    if (result.status === "Error") return { ok: false, error: `${plugin.name}: ${result.message}` };
    if (result.status === "Unschedulable") return { ok: true, clusters: [], dropped, reason: result.reason };
    Object.assign(dropped, result.dropped ?? {});
    clusters = result.selected;
  }
  if (clusters.length === 0 && context.problem.replicas > 0)
    return { ok: true, clusters, dropped, reason: "no cluster is available" };
  return { ok: true, clusters, dropped };
}
