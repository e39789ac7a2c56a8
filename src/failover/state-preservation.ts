import type { PreservedLabels } from "../model/state-preservation.js";
import type { ScheduleDecision } from "../schedule/types.js";
import type { FailoverRecord, PreservedState } from "./workload-failover.js";

// Karmada's statePreservation, applied: a failover that moves replicas off a cluster carries the
// labels that cluster's copy of the workload last gave (read from its status by the Placement's
// rules, recorded while it answered — a cluster failover happens when it does not) to the clusters
// that took them. The labels stay on those clusters' copies while the failover record stands: a
// change to the Placement ends it. Pure.

const STATES_KEPT = 10;

/** The record with the labels this round's moves carry; unchanged when nothing moved or nothing was read. */
export function preserveState(
  record: FailoverRecord | undefined,
  moves: {
    readonly current: Readonly<Record<string, number>>;
    readonly decision: ScheduleDecision;
    readonly now: number;
  },
  known: ReadonlyMap<string, PreservedLabels>,
): FailoverRecord | undefined {
  if (!record || known.size === 0) return record;
  const at = new Date(moves.now).toISOString();
  const movedNow = record.movedOff.filter((m) => m.at === at);
  const to = Object.entries(moves.decision.clusters)
    .filter(([cluster, count]) => count > (moves.current[cluster] ?? 0))
    .map(([cluster]) => cluster)
    .sort();
  const added: PreservedState[] = [];
  for (const move of movedNow) {
    const labels = known.get(move.cluster);
    const targets = to.filter((c) => c !== move.cluster);
    if (labels && targets.length > 0) added.push({ from: move.cluster, to: targets, labels, at });
  }
  if (added.length === 0) return record;
  return { ...record, preserved: [...(record.preserved ?? []), ...added].slice(-STATES_KEPT) };
}

/** The labels a cluster's copy carries: from every move that sent replicas there, the later winning. */
export function preservedLabelsFor(
  record: FailoverRecord | undefined,
  cluster: string,
): PreservedLabels | undefined {
  const labels: Record<string, string> = {};
  for (const state of record?.preserved ?? [])
    if (state.to.includes(cluster)) Object.assign(labels, state.labels);
  return Object.keys(labels).length > 0 ? labels : undefined;
}
