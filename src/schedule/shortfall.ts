import type { ScheduleDecision } from "./types.js";

/** Replicas of a divided workload the scheduler could place nowhere, and why. */
export interface Shortfall {
  /** Replicas placed nowhere. */
  readonly unplaced: number;
  /** The total asked for. */
  readonly replicas: number;
  /** What the selected clusters hold in all (the replicas placed). */
  readonly fits: number;
  /** What bounds the selected clusters (cpu, memory, pods, maxReplicas, a quota…), sorted; empty when none was selected. */
  readonly bounds: readonly string[];
  /** The scheduler's own reason, for a shortfall no cluster's room explains (no cluster selected). */
  readonly reason?: string;
}

/** The shortfall of a decision for `replicas`, or undefined when every replica has a place. Pure. */
export function shortfallOf(replicas: number, decision: ScheduleDecision): Shortfall | undefined {
  if (decision.unschedulable <= 0) return undefined;
  const bounds = [...new Set(Object.values(decision.diagnosis.room ?? {}).map((r) => r.by))].sort();
  const reason = decision.diagnosis.unschedulableReason;
  return {
    unplaced: decision.unschedulable,
    replicas,
    fits: Math.max(0, replicas - decision.unschedulable),
    bounds,
    ...(bounds.length === 0 && reason ? { reason } : {}),
  };
}

/**
 * The line a reviewer cannot miss: "12 of 60 replicas of Deployment games/game fit nowhere: the
 * selected clusters fit 48 (cpu)".
 */
export function describeShortfall(workload: string, shortfall: Shortfall): string {
  // A Duplicated workload's shortfall adds up over clusters and may pass its per-cluster count.
  const of = shortfall.unplaced <= shortfall.replicas ? ` of ${shortfall.replicas}` : "";
  const head = `${shortfall.unplaced}${of} replicas of ${workload} fit nowhere`;
  if (shortfall.bounds.length === 0) return `${head}: ${shortfall.reason ?? "no cluster is available"}`;
  return `${head}: the selected clusters fit ${shortfall.fits} (${shortfall.bounds.join(", ")})`;
}
