import { indexInterpreters } from "../model/interpreter-index.js";
import type { HeldDivision } from "../model/observed-state.js";
import type { FleetModel, ScaleDownRequest } from "../model/types.js";
import { readReplicas } from "../model/workload-replicas.js";

import {
  autoscalerKey,
  type ScaleChange,
  type ScheduledWorkload,
  targetOf,
  templateOf,
} from "./autoscale-step.js";

// Targeted scale-down: a request in Git names a cluster and the pods to remove. It runs once — its
// status says Done (or Refused, and why) — and from then on holds the division it made: the cluster
// runs that many fewer, every other cluster what it ran, and the member's pods-to-delete field names
// the pods, for as long as the workload's total stays where the request put it. A new total (a
// FederatedHPA, a person's commit) divides afresh. Pure.

/** A request's outcome, kept in status/autoscaling/scaledown/. */
export interface ScaleDownStatus {
  readonly state: "Done" | "Refused";
  readonly cluster: string;
  readonly pods: readonly string[];
  /** When it ran (ms). */
  readonly at: number;
  readonly reason?: string;
  /** Done: the total before and after, and the division it holds. */
  readonly from?: number;
  readonly total?: number;
  readonly clusters?: Readonly<Record<string, number>>;
  /** Done: the template's own replicas then; a person changing them ends the hold. */
  readonly sourceReplicas?: number;
}

export interface ScaleDownRound {
  readonly statuses: Map<string, ScaleDownStatus>;
  /** Per workload identity: the division a request holds. */
  readonly held: Map<string, HeldDivision>;
  /** Per workload identity: totals the requests set where no autoscaler owns the count. */
  readonly totals: Map<string, { replicas: number; by: string; reason: string }>;
  readonly changes: ScaleChange[];
  readonly notes: string[];
}

/**
 * Runs the requests not run yet (a request whose cluster or pods changed is a new one) and holds
 * the division of those done. `ownedTotal` says whether an autoscaler owns a workload's total; then
 * `setTotal` hands it the new total instead.
 */
export function scaleDowns(input: {
  readonly model: FleetModel;
  readonly decisions: readonly ScheduledWorkload[];
  readonly previous: ReadonlyMap<string, ScaleDownStatus>;
  readonly now: number;
  /** The total of the autoscaler that owns a workload's count, if one does. */
  readonly ownedTotal: (identity: string) => number | undefined;
  /** Hands the owning autoscaler a new total (a FederatedHPA continues from it). */
  readonly setTotal: (identity: string, replicas: number, reason: string) => void;
}): ScaleDownRound {
  const round: ScaleDownRound = {
    statuses: new Map(),
    held: new Map(),
    totals: new Map(),
    changes: [],
    notes: [],
  };
  for (const request of input.model.scaleDownRequests) {
    const key = autoscalerKey(request);
    const identity = targetOf(input.model, request);
    const decision = input.decisions.find((d) => d.identity === identity);
    const before = input.previous.get(key);
    const same =
      before?.cluster === request.spec.cluster &&
      JSON.stringify(before.pods) === JSON.stringify(request.spec.pods);
    const status = same ? before : run(request, decision, input);
    if (!status) continue;
    round.statuses.set(key, status);
    if (!same) ran(round, request, status, decision, input);
    hold(round, request, status, input);
  }
  return round;
}

// A request that just ran: its note, its change of the total, the owning autoscaler told.
function ran(
  round: ScaleDownRound,
  request: ScaleDownRequest,
  status: ScaleDownStatus,
  decision: ScheduledWorkload | undefined,
  input: Parameters<typeof scaleDowns>[0],
): void {
  const name = request.metadata.name;
  if (status.state !== "Done" || !decision || status.total === undefined) {
    round.notes.push(`scale-down ${name} refused: ${status.reason}`);
    return;
  }
  round.notes.push(
    `scale-down ${name}: ${status.pods.length} pods off ${status.cluster} (${status.pods.join(", ")}); ${describe(decision, status)}`,
  );
  const reason = `${status.pods.length} named pods off ${status.cluster}`;
  round.changes.push({
    autoscaler: `scaledown/${name}`,
    workload: decision.resource,
    from: decision.replicas,
    to: status.total,
    reason,
  });
  if (input.ownedTotal(decision.identity) !== undefined)
    input.setTotal(decision.identity, status.total, reason);
}

// A done request's division, while the total stays where it put it.
function hold(
  round: ScaleDownRound,
  request: ScaleDownRequest,
  status: ScaleDownStatus,
  input: Parameters<typeof scaleDowns>[0],
): void {
  if (status.state !== "Done" || status.total === undefined || !status.clusters) return;
  const identity = targetOf(input.model, request);
  const source = templateReplicas(input.model, identity);
  const owned = input.ownedTotal(identity);
  // An autoscaler that moved on, or (none owning the count) a person who changed the template's
  // replicas, ends the hold.
  if (owned !== undefined && owned !== status.total) return;
  if (owned === undefined && source !== status.sourceReplicas) return;
  if (owned === undefined)
    round.totals.set(identity, {
      replicas: status.total,
      by: `scaledown/${request.metadata.name}`,
      reason: `${status.pods.length} named pods off ${status.cluster}`,
    });
  round.held.set(identity, {
    total: status.total,
    clusters: status.clusters,
    podsToDelete: { [status.cluster]: status.pods },
    by: request.metadata.name,
  });
}

function run(
  request: ScaleDownRequest,
  decision: ScheduledWorkload | undefined,
  input: Parameters<typeof scaleDowns>[0],
): ScaleDownStatus | undefined {
  const { cluster, pods } = request.spec;
  if (!decision) return undefined; // not placed yet: the request waits
  const base = { cluster, pods, at: input.now };
  const running = decision.decision.clusters[cluster] ?? 0;
  if (running < pods.length)
    return {
      ...base,
      state: "Refused",
      reason: `${decision.resource} runs ${running} in ${cluster}, fewer than the ${pods.length} pods named`,
    };
  const sourceReplicas = templateReplicas(input.model, decision.identity);
  return {
    ...base,
    state: "Done",
    from: decision.replicas,
    total: decision.replicas - pods.length,
    clusters: { ...decision.decision.clusters, [cluster]: running - pods.length },
    ...(sourceReplicas !== undefined ? { sourceReplicas } : {}),
  };
}

// What the workload's template asks for: a person changing it ends a request's hold.
function templateReplicas(model: FleetModel, identity: string): number | undefined {
  const template = templateOf(model, identity);
  return template ? readReplicas(template, indexInterpreters(model)) : undefined;
}

function describe(decision: ScheduledWorkload | undefined, status: ScaleDownStatus): string {
  const before = decision?.decision.clusters[status.cluster] ?? 0;
  return `${status.cluster} ${before} → ${status.clusters?.[status.cluster] ?? before}, total ${status.from} → ${status.total}, other clusters unchanged`;
}
