import { groupOf } from "../apimachinery/kinds.js";
import { compareStrings } from "../model/file-tree.js";
import { identityOf } from "../model/identity.js";
import { summarizeFilters } from "./diagnosis.js";
import { tieBreakOrder } from "./division/fnv.js";
import { estimateFit, podRequirements } from "./estimator.js";
import type {
  Candidate,
  FilterPlugin,
  FilterResult,
  Profile,
  SchedulingContext,
  ScoredCandidate,
  SelectPlugin,
} from "./framework.js";
import { clusterIndex, estimateTable, remember, verdictTable } from "./memo.js";
import { DEFAULT_PROFILE } from "./profile.js";
import { scheduleTiers } from "./tiers.js";
import type {
  ClusterRoom,
  ClusterState,
  ScheduleDecision,
  ScheduleResult,
  SchedulingProblem,
} from "./types.js";

export type { ScheduleResult } from "./types.js";

/**
 * Schedules one workload: filter → score → select → replicas, each stage a list of plugins. Pure and
 * deterministic: clusters are sorted by name first and every later order breaks ties explicitly, so
 * shuffling the input never changes the decision.
 */
export function scheduleWorkload(
  problem: SchedulingProblem,
  profile: Profile = DEFAULT_PROFILE,
): ScheduleResult {
  const overflow = problem.placement.overflow;
  if (overflow && isDivided(problem)) return scheduleTiers(problem, profile, overflow, scheduleFlat);
  return scheduleFlat(problem, profile);
}

function isDivided(problem: SchedulingProblem): boolean {
  const scheduling = problem.placement.replicaScheduling;
  return scheduling !== undefined && (scheduling.type ?? "Divided") === "Divided";
}

// One schedule over every candidate cluster.
function scheduleFlat(problem: SchedulingProblem, profile: Profile): ScheduleResult {
  const scheduling = problem.placement.replicaScheduling;
  const context: SchedulingContext = {
    problem,
    order: tieBreakOrder(problem.workload.uid ?? ""),
    divided: scheduling !== undefined && (scheduling.type ?? "Divided") === "Divided",
  };
  const clusters = sortedByName(problem.clusters);
  // 1. Filter: each cluster passes, is frozen (keeps what it has), or is removed with a reason.
  const filtered = filterClusters(context, clusters, profile);
  if (!filtered.ok) return filtered;
  // 2. Score and rank: score desc, then room desc, then name.
  const ranked = rankCandidates(context, filtered.candidates, profile);
  // 3. Select: spread constraints and cluster limits.
  const selected = selectClusters(context, ranked, profile.select);
  if (!selected.ok) return selected;
  // 4. Replicas: divide (or duplicate) the total over the selected clusters.
  const assigned = assignReplicas(context, selected, profile);
  if (!assigned.ok) return assigned;
  // 5. Explain: the filter summary, frozen and left-out clusters, and any shortfall.
  return { ok: true, decision: explain(clusters.length, filtered, selected, assigned) };
}

// Lists already found in name order: every workload of a reconcile schedules against the same list.
const inNameOrder = new WeakSet<readonly ClusterState[]>();

// Clusters by name; input that is already sorted (the usual case) is not copied.
function sortedByName(clusters: readonly ClusterState[]): readonly ClusterState[] {
  if (inNameOrder.has(clusters)) return clusters;
  for (let i = 1; i < clusters.length; i++) {
    if (compareStrings(clusters[i - 1]?.name ?? "", clusters[i]?.name ?? "") > 0) {
      return [...clusters].sort((a, b) => compareStrings(a.name, b.name));
    }
  }
  inNameOrder.add(clusters);
  return clusters;
}

// A candidate whose score the score stage adds up in place (one object per cluster, not two).
interface RankedCandidate extends Candidate {
  score: number;
  readonly room: number;
}

type Filtered =
  | {
      readonly ok: true;
      readonly candidates: RankedCandidate[];
      /** The removed clusters the diagnosis lists, with the reason. */
      readonly removed: Record<string, string>;
      /** How many clusters each reason removed, listed or not. */
      readonly reasons: Map<string, number>;
    }
  | { readonly ok: false; readonly error: string };

function filterClusters(
  context: SchedulingContext,
  clusters: readonly ClusterState[],
  profile: Profile,
): Filtered {
  const { problem } = context;
  const pod = podRequirements(problem.workload.podTemplate);
  const remembered = verdictTable(profile, problem.placement, clusters);
  const estimates = estimateTable(clusters, pod.key);
  // Maps, not the input records: looking up a missing key in a record with computed keys is slow.
  const currentOf = new Map(Object.entries(problem.current ?? {}));
  const availableOf = new Map(Object.entries(problem.available ?? {}));
  const identity = workloadIdentity(problem);
  const candidates: RankedCandidate[] = [];
  const out = { removed: {}, reasons: new Map<string, number>() };
  const visit = visitedClusters(context, clusters, profile, out.reasons);
  for (const index of visit ?? clusters.keys()) {
    const cluster = clusters[index] as ClusterState;
    const current = currentOf.get(cluster.name) ?? 0;
    const subject = { cluster, index, current, remembered };
    const verdict = runFilters(context, subject, profile);
    if (verdict.error !== undefined) return { ok: false, error: verdict.error };
    if (verdict.removed !== undefined) {
      noteRemoval(out, verdict.removed, askedFor(context, subject, profile, verdict), cluster);
      continue;
    }
    const measured = cluster.nodes !== undefined || cluster.summary !== undefined;
    const estimate = measured ? remember(estimates, index, () => estimateFit(cluster, pod)) : undefined;
    const free = estimate
      ? freeBeyond(estimate.fits, cluster, identity, current)
      : availableOf.get(cluster.name);
    candidates.push(candidateOf(subject, free, estimate?.limit, verdict.frozen));
  }
  return { ok: true, candidates, ...out };
}

function candidateOf(
  { cluster, current }: FilterSubject,
  free: number | undefined,
  limit: string | undefined,
  frozenReason: string | undefined,
): RankedCandidate {
  const room = free === undefined ? Number.POSITIVE_INFINITY : free + current;
  return { cluster, current, free, limit, frozenReason, score: 0, room };
}

// The clusters worth filtering one by one when a scoping filter names the only clusters it can pass:
// those names and the clusters an earlier filter might not pass; every other cluster would pass the
// earlier filters and be removed by that one, unlisted, so it is counted here under its reason.
// Undefined: filter every cluster. A Placement that names 2 of 1,000 clusters visits 2 of them.
function visitedClusters(
  context: SchedulingContext,
  clusters: readonly ClusterState[],
  profile: Profile,
  reasons: Map<string, number>,
): Iterable<number> | undefined {
  const plugins = profile.filter;
  const at = plugins.findIndex((plugin) => plugin.onlyNamed !== undefined);
  const scope = at < 0 ? undefined : plugins[at];
  const named = scope?.scopes ? scope.onlyNamed?.(context) : undefined;
  if (named === undefined) return undefined;
  const index = clusterIndex(profile, clusters);
  const visit = new Set(index.irregularBefore(at));
  for (const name of named.names) {
    const i = index.indexOf.get(name);
    if (i !== undefined) visit.add(i);
  }
  const skipped = clusters.length - visit.size;
  if (skipped > 0) reasons.set(named.reason, skipped);
  return [...visit].sort((a, b) => a - b);
}

// Replicas a cluster can take beyond its current count. What the reading counted of this workload's
// own pods is room it may keep: add back exactly those (a reading without counts is an old one: add
// back the decision's), never more, so a cluster read mid-rollout is not promised the replicas it
// was still starting. A cluster that holds more than that room keeps its count but takes no more:
// replicas that stay Unschedulable there are failover's to move, after unschedulableSeconds.
function freeBeyond(
  fits: number | undefined,
  cluster: ClusterState,
  identity: string,
  current: number,
): number | undefined {
  if (fits === undefined) return undefined;
  const counted = cluster.running ? (cluster.running.get(identity) ?? 0) : current;
  return Math.max(0, fits + counted - current);
}

/** "apps/Deployment/shop/web": how capacity readings name the workload whose pods they counted. */
export function workloadIdentity(problem: Pick<SchedulingProblem, "workload">): string {
  const { apiVersion = "", kind = "", namespace, name = "" } = problem.workload;
  return identityOf(groupOf(apiVersion), kind, namespace, name);
}

// A removed cluster counts towards its reason; it is listed when the Placement asks for it. Whether it
// held replicas does not matter: the diagnosis is a function of the Placement and the cluster states,
// so rendering an unchanged app again writes the same status.
function noteRemoval(
  out: { readonly removed: Record<string, string>; readonly reasons: Map<string, number> },
  reason: string,
  listed: boolean,
  cluster: ClusterState,
): void {
  out.reasons.set(reason, (out.reasons.get(reason) ?? 0) + 1);
  if (listed) out.removed[cluster.name] = reason;
}

interface Verdict {
  readonly removed?: string;
  /** The index in the profile of the filter that removed the cluster (none: a frozen cluster holding none). */
  readonly by?: number;
  readonly frozen?: string;
  readonly error?: string;
}

const PASSED: Verdict = Object.freeze({});

/** One cluster going through the filters, with where its remembered verdicts live. */
interface FilterSubject {
  readonly cluster: ClusterState;
  readonly index: number;
  readonly current: number;
  readonly remembered: (FilterResult | undefined)[];
}

// The first filter that removes the cluster wins; one that only forbids growth freezes a cluster that
// holds replicas, and removes one that holds none unless a later filter removes it outright (that
// reason is the stronger one: a NotReady cluster the replicas left says NoExecute, not "not ready").
function runFilters(context: SchedulingContext, subject: FilterSubject, profile: Profile): Verdict {
  const { cluster, current, remembered } = subject;
  const plugins = profile.filter;
  let frozen: string | undefined;
  for (let p = 0; p < plugins.length; p++) {
    const plugin = plugins[p] as FilterPlugin;
    const result = plugin.readsWorkload
      ? plugin.filter(context, cluster)
      : remember(remembered, subject.index * plugins.length + p, () => plugin.filter(context, cluster));
    if (result.status === "Success") continue;
    if (result.status === "Error")
      return { error: `${plugin.name}: cluster ${cluster.name}: ${result.message}` };
    if (!result.keepsExisting) return { removed: result.reason, by: p };
    frozen ??= result.reason;
  }
  if (frozen === undefined) return PASSED;
  return current === 0 ? { removed: frozen } : { frozen };
}

// Whether the Placement asks for a removed cluster: no scoping filter removed it, or would have (one
// that ran after the filter that did never got to look at it).
function askedFor(
  context: SchedulingContext,
  subject: FilterSubject,
  profile: Profile,
  verdict: Verdict,
): boolean {
  const plugins = profile.filter;
  const by = verdict.by ?? plugins.length;
  for (let p = 0; p < plugins.length; p++) {
    const plugin = plugins[p] as FilterPlugin;
    if (!plugin.scopes) continue;
    if (p === by) return false;
    if (p < by) continue;
    const result = plugin.readsWorkload
      ? plugin.filter(context, subject.cluster)
      : remember(subject.remembered, subject.index * plugins.length + p, () =>
          plugin.filter(context, subject.cluster),
        );
    if (result.status !== "Success") return false;
  }
  return true;
}

function rankCandidates(
  context: SchedulingContext,
  candidates: readonly RankedCandidate[],
  profile: Profile,
): ScoredCandidate[] {
  for (const plugin of profile.score) {
    const given = plugin.score(context, candidates);
    candidates.forEach((candidate, i) => {
      candidate.score += given[i] ?? 0;
    });
  }
  return sortByRank(candidates);
}

// Score desc, then room desc; clusters arrive sorted by name and the sort is stable, so ties keep name order.
function sortByRank(candidates: readonly RankedCandidate[]): RankedCandidate[] {
  return [...candidates].sort(
    (a, b) => b.score - a.score || (a.room === b.room ? 0 : b.room > a.room ? 1 : -1),
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

// The selection as it stands; with no cluster left, a workload with replicas cannot be placed.
function selectAll(
  context: SchedulingContext,
  clusters: readonly ScoredCandidate[],
  dropped: Record<string, string> = {},
): Selected {
  if (clusters.length === 0 && context.problem.replicas > 0) {
    return { ok: true, clusters, dropped, reason: "no cluster is available" };
  }
  return { ok: true, clusters, dropped };
}

function selectClusters(
  context: SchedulingContext,
  ranked: readonly ScoredCandidate[],
  plugins: readonly SelectPlugin[],
): Selected {
  let clusters = ranked;
  let dropped: Record<string, string> = {};
  for (const plugin of plugins) {
    const result = plugin.select(context, clusters);
    if (result.status === "Error") return { ok: false, error: `${plugin.name}: ${result.message}` };
    if (result.status === "Unschedulable") return { ok: true, clusters: [], dropped, reason: result.reason };
    dropped = mergeReasons(dropped, result.dropped);
    clusters = result.selected;
  }
  return selectAll(context, clusters, dropped);
}

// The selected clusters (minus those the division excluded) in name order, in linear time: the
// candidates are already in name order, and the selection is a subset of them.
function namesInOrder(
  candidates: readonly Candidate[],
  selected: readonly Candidate[],
  excluded: Readonly<Record<string, string>>,
): string[] {
  // A subset as long as the whole is the whole.
  const chosen = selected.length === candidates.length ? undefined : new Set(selected);
  const names: string[] = [];
  for (const c of candidates) {
    if ((chosen === undefined || chosen.has(c)) && excluded[c.cluster.name] === undefined)
      names.push(c.cluster.name);
  }
  return names;
}

// Merges per-cluster reasons; when one side is empty its partner is used as is (no copy of hundreds of keys).
function mergeReasons(
  into: Record<string, string>,
  more: Readonly<Record<string, string>> | undefined,
): Record<string, string> {
  if (more === undefined) return into;
  let empty = true;
  for (const _ in into) {
    empty = false;
    break;
  }
  // A plugin's result is built fresh for each call, so taking it over (and adding to it later) is safe.
  if (empty) return more as Record<string, string>;
  for (const [name, why] of Object.entries(more)) into[name] = why;
  return into;
}

interface Assigned {
  readonly ok: true;
  readonly assignment: ReadonlyMap<string, number>;
  readonly unschedulable: number;
  readonly reason: string | undefined;
  readonly excluded: Readonly<Record<string, string>>;
  readonly room?: Readonly<Record<string, ClusterRoom>> | undefined;
}

function assignReplicas(
  context: SchedulingContext,
  selected: Extract<Selected, { ok: true }>,
  profile: Profile,
): Assigned | { readonly ok: false; readonly error: string } {
  const nothing = { ok: true, assignment: new Map(), excluded: {} } as const;
  let assigned: Assigned = { ...nothing, unschedulable: context.problem.replicas, reason: selected.reason };
  if (selected.reason !== undefined) return assigned;
  for (const plugin of profile.replicas) {
    const result = plugin.assign(context, selected.clusters);
    if (result.status === "Error") return { ok: false, error: `${plugin.name}: ${result.message}` };
    const { assignment, unschedulable, reason, excluded = {}, room } = result;
    assigned = { ok: true, assignment, unschedulable, reason, excluded, room };
  }
  return assigned;
}

function explain(
  total: number,
  filtered: Extract<Filtered, { ok: true }>,
  selected: Extract<Selected, { ok: true }>,
  assigned: Assigned,
): ScheduleDecision {
  const summary = summarizeFilters(total, filtered.reasons);
  const frozen: Record<string, string> = {};
  for (const c of filtered.candidates) {
    if (!c.frozenReason) continue;
    frozen[c.cluster.name] = `${c.frozenReason}: keeps ${c.current}, takes no new replicas`;
  }
  const clusters: Record<string, number> = {};
  const placed = [...assigned.assignment].filter(([, count]) => count > 0);
  for (const [name, count] of placed.sort(([a], [b]) => compareStrings(a, b))) clusters[name] = count;
  const notSelected = selected.dropped;
  for (const [name, why] of Object.entries(assigned.excluded)) notSelected[name] = why;
  const reason = assigned.unschedulable > 0 ? assigned.reason : undefined;
  return {
    clusters,
    unschedulable: assigned.unschedulable,
    diagnosis: {
      summary,
      filtered: filtered.removed,
      frozen,
      notSelected,
      selected: namesInOrder(filtered.candidates, selected.clusters, assigned.excluded),
      ...(reason === undefined ? {} : { unschedulableReason: `${summary}; ${reason}` }),
      ...(assigned.room ? { room: sortedRoom(assigned.room) } : {}),
    },
  };
}

// Room by cluster name, so a status file lists it the same way every time.
function sortedRoom(room: Readonly<Record<string, ClusterRoom>>): Record<string, ClusterRoom> {
  const out: Record<string, ClusterRoom> = {};
  for (const name of Object.keys(room).sort(compareStrings)) out[name] = room[name] as ClusterRoom;
  return out;
}
