/**
 * Tables that let one reconcile share work between workloads: filter verdicts per Placement and
 * node-level estimates per pod shape, both per list of cluster states.
 */
import type { FilterResult, Profile } from "./framework.js";
import type { ClusterState } from "./types.js";

// Verdicts of workload-independent filters depend only on the Placement and the cluster states, and a
// reconcile schedules many workloads with one Placement against one list of cluster states: remember
// them per (profile, Placement spec, cluster list), in weak maps so nothing outlives its inputs.
const verdictTables = new WeakMap<
  Profile,
  WeakMap<object, WeakMap<readonly ClusterState[], (FilterResult | undefined)[]>>
>();

/** The remembered filter verdicts (cluster × plugin) for a profile, a Placement spec and a cluster list. */
export function verdictTable(
  profile: Profile,
  placement: object,
  clusters: readonly ClusterState[],
): (FilterResult | undefined)[] {
  const byPlacement = verdictTables.get(profile) ?? new WeakMap();
  verdictTables.set(profile, byPlacement);
  const byClusters = byPlacement.get(placement) ?? new WeakMap();
  byPlacement.set(placement, byClusters);
  const table =
    byClusters.get(clusters) ?? new Array<FilterResult | undefined>(clusters.length * profile.filter.length);
  byClusters.set(clusters, table);
  return table;
}

// Node-level estimates per cluster list and pod shape: every workload of a reconcile sees the same nodes.
const estimateTables = new WeakMap<readonly ClusterState[], Map<string, (number | undefined)[]>>();

/** The remembered free-replica estimates (per cluster) for a cluster list and a pod shape. */
export function estimateTable(clusters: readonly ClusterState[], podKey: string): (number | undefined)[] {
  const byShape = estimateTables.get(clusters) ?? new Map<string, (number | undefined)[]>();
  estimateTables.set(clusters, byShape);
  const table = byShape.get(podKey) ?? new Array<number | undefined>(clusters.length);
  byShape.set(podKey, table);
  return table;
}

/** The value in a table slot, computed on first use. */
export function remember<T>(table: (T | undefined)[], slot: number, compute: () => T): T {
  const known = table[slot];
  if (known !== undefined) return known;
  const result = compute();
  table[slot] = result;
  return result;
}
