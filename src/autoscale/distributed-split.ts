import { dealByWebster } from "../schedule/division/webster.js";

// Distributed autoscaling (a member HPA per cluster): the FederatedHPA's minReplicas and maxReplicas
// are split across clusters in proportion to where the workload runs now, by the same Webster method
// the scheduler divides replicas with. Every cluster gets at least 1 of each (a member HPA cannot go
// below one replica), so when there are more clusters than minReplicas the members' minimums add up
// to more than it — the split says so. Pure.

export interface MemberBounds {
  readonly minReplicas: number;
  readonly maxReplicas: number;
}

export interface BoundsSplit {
  readonly clusters: Readonly<Record<string, MemberBounds>>;
  /** The sum of the members' minimums (above minReplicas when clusters outnumber it). */
  readonly effectiveMin: number;
  readonly effectiveMax: number;
}

/**
 * Splits [min, max] over clusters weighted by their current replicas (a cluster running none counts
 * as weight 1, so a new cluster is not starved). Ties lean by name, ascending.
 */
export function splitBounds(
  min: number,
  max: number,
  distribution: Readonly<Record<string, number>>,
): BoundsSplit {
  const names = Object.keys(distribution).sort();
  if (names.length === 0) return { clusters: {}, effectiveMin: 0, effectiveMax: 0 };
  const shares = (seed: number) =>
    names.map((name) => ({ name, weight: Math.max(1, distribution[name] ?? 0), seed }));
  // Each starts with one seat and the rest is dealt by weight; a total below one per cluster gives
  // each exactly one.
  const deal = (total: number) =>
    total >= names.length
      ? dealByWebster(total, shares(1), "ascending").seats
      : new Map(names.map((n) => [n, 1]));
  const mins = deal(min);
  const maxes = deal(max);
  const clusters: Record<string, MemberBounds> = {};
  for (const name of names) {
    const minReplicas = Math.max(1, mins.get(name) ?? 0);
    clusters[name] = { minReplicas, maxReplicas: Math.max(minReplicas, maxes.get(name) ?? 0) };
  }
  const sum = (pick: (b: MemberBounds) => number) => Object.values(clusters).reduce((t, b) => t + pick(b), 0);
  return { clusters, effectiveMin: sum((b) => b.minReplicas), effectiveMax: sum((b) => b.maxReplicas) };
}
