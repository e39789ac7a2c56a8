/**
 * Tables that let one reconcile share work between workloads: filter verdicts per Placement and
 * node-level estimates per pod shape, both per list of cluster states.
 */
import type { FreeEstimate } from "./estimator.js";
import type { FilterResult, Profile } from "./framework.js";
import type { ClusterState } from "./types.js";

// Verdicts of workload-independent filters depend only on the Placement and the cluster states, and a
// reconcile schedules the workloads of one Placement (an app's resources) one after another against
// one list of cluster states: remember them per (profile, cluster list) for the Placement specs used
// last. A table per Placement for the whole reconcile would hold clusters × filters slots for every
// Placement at once — 1.2 GB for 50,000 Placements over 500 clusters.
const RECENT_PLACEMENTS = 64;
const verdictTables = new WeakMap<
  Profile,
  WeakMap<readonly ClusterState[], Map<object, (FilterResult | undefined)[]>>
>();

/** The remembered filter verdicts (cluster × plugin) for a profile, a Placement spec and a cluster list. */
export function verdictTable(
  profile: Profile,
  placement: object,
  clusters: readonly ClusterState[],
): (FilterResult | undefined)[] {
  const byClusters = verdictTables.get(profile) ?? new WeakMap();
  verdictTables.set(profile, byClusters);
  const recent: Map<object, (FilterResult | undefined)[]> = byClusters.get(clusters) ?? new Map();
  byClusters.set(clusters, recent);
  const table =
    recent.get(placement) ?? new Array<FilterResult | undefined>(clusters.length * profile.filter.length);
  // Most recently used last; the least recently used goes once there are too many.
  recent.delete(placement);
  recent.set(placement, table);
  if (recent.size > RECENT_PLACEMENTS) recent.delete(recent.keys().next().value as object);
  return table;
}

// Node-level estimates per cluster list and pod shape: every workload of a reconcile sees the same nodes.
const estimateTables = new WeakMap<readonly ClusterState[], Map<string, (FreeEstimate | undefined)[]>>();

/** The remembered free-replica estimates (per cluster) for a cluster list and a pod shape. */
export function estimateTable(
  clusters: readonly ClusterState[],
  podKey: string,
): (FreeEstimate | undefined)[] {
  const byShape = estimateTables.get(clusters) ?? new Map<string, (FreeEstimate | undefined)[]>();
  estimateTables.set(clusters, byShape);
  const table = byShape.get(podKey) ?? new Array<FreeEstimate | undefined>(clusters.length);
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

/** Where each cluster of a list sits, and which clusters each filter might not pass whatever the Placement. */
export interface ClusterIndex {
  readonly indexOf: ReadonlyMap<string, number>;
  /** Indices, ascending, of the clusters some filter before `end` in the profile might not pass. */
  irregularBefore(end: number): readonly number[];
}

const clusterIndexes = new WeakMap<Profile, WeakMap<readonly ClusterState[], ClusterIndex>>();

/** The index of a cluster list for a profile, built once per list. */
export function clusterIndex(profile: Profile, clusters: readonly ClusterState[]): ClusterIndex {
  const byClusters = clusterIndexes.get(profile) ?? new WeakMap<readonly ClusterState[], ClusterIndex>();
  clusterIndexes.set(profile, byClusters);
  const known = byClusters.get(clusters);
  if (known) return known;
  const indexOf = new Map<string, number>();
  for (const [i, cluster] of clusters.entries()) indexOf.set(cluster.name, i);
  const irregular = new Map<number, readonly number[]>();
  const index: ClusterIndex = {
    indexOf,
    irregularBefore: (end) => {
      const listed = irregular.get(end);
      if (listed) return listed;
      const plugins = profile.filter.slice(0, end);
      const found: number[] = [];
      clusters.forEach((cluster, i) => {
        if (!plugins.every((plugin) => plugin.passesAny?.(cluster) === true)) found.push(i);
      });
      irregular.set(end, found);
      return found;
    },
  };
  byClusters.set(clusters, index);
  return index;
}
