import { preservedLabelsFor, preserveState } from "../failover/state-preservation.js";
import type { FailoverRecord } from "../failover/workload-failover.js";
import { compareStrings } from "../model/file-tree.js";
import type { ObservedReplicas } from "../model/observed-state.js";
import { type PreservedLabels, stateRules } from "../model/state-preservation.js";
import type { PlacementSpec } from "../model/types.js";
import type { ScheduleDecision } from "../schedule/types.js";

// A workload's statePreservation in one render: what each cluster's copy last gave (observed now, or
// remembered from the last decision for a cluster that does not answer), the labels this round's
// failover moves carry, and the labels each destination's copy gets. Pure.

/** What one workload's placement reads. */
export interface StateInputs {
  readonly placement: PlacementSpec;
  readonly record: FailoverRecord | undefined;
  /** The last decision's remembered labels per cluster. */
  readonly remembered: Readonly<Record<string, PreservedLabels>> | undefined;
  readonly observed: ReadonlyMap<string, ObservedReplicas>;
  readonly current: Readonly<Record<string, number>>;
  readonly decision: ScheduleDecision;
  readonly now: number;
  readonly destinations: Iterable<string>;
}

/** The failover record with the moves' labels, the labels to remember, and each destination's labels. */
export function preservedState(input: StateInputs): {
  readonly record: FailoverRecord | undefined;
  readonly state?: Readonly<Record<string, PreservedLabels>>;
  readonly labels?: Readonly<Record<string, PreservedLabels>>;
} {
  if (stateRules(input.placement).length === 0) return { record: input.record };
  const known = new Map(Object.entries(input.remembered ?? {}));
  for (const [cluster, seen] of input.observed) if (seen.state) known.set(cluster, seen.state);
  const record = preserveState(input.record, input, known);
  const labels: Record<string, PreservedLabels> = {};
  for (const cluster of input.destinations) {
    const carried = preservedLabelsFor(record, cluster);
    if (carried) labels[cluster] = carried;
  }
  const state = Object.fromEntries([...known].sort(([a], [b]) => compareStrings(a, b)));
  return {
    record,
    ...(known.size > 0 ? { state } : {}),
    ...(Object.keys(labels).length > 0 ? { labels } : {}),
  };
}
