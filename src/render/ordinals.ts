import { compareStrings } from "../model/file-tree.js";
import type { Resource } from "../model/types.js";

// A StatefulSet divided over clusters gets a range of ordinals of its own in each
// (`spec.ordinals.start`, Kubernetes 1.31+): mysql-0..2 in one cluster, mysql-3..5 in the next, so
// no two clusters run a pod of the same identity. The ranges are remembered in the decision and
// kept while they can be: a cluster's start changes only when its range would overlap another's
// (the cluster with fewer replicas moves: fewer pods take new names), and a new cluster takes the
// first free start on a grid of the workload's total, so each has room to grow to it in place.

/** Per cluster holding replicas, the first ordinal of its range. */
export type OrdinalStarts = Readonly<Record<string, number>>;

/**
 * The ranges for `counts` (replicas per cluster), keeping `previous` where no range overlaps another.
 * `total` spaces new ranges. Pure and deterministic.
 */
export function ordinalStarts(
  counts: Readonly<Record<string, number>>,
  previous: OrdinalStarts | undefined,
  total: number,
): Record<string, number> {
  const holding = Object.entries(counts)
    .filter(([, n]) => n > 0)
    .sort(([a, x], [b, y]) => y - x || compareStrings(a, b));
  const taken: [number, number][] = [];
  const starts: Record<string, number> = {};
  const free = (start: number, n: number) => taken.every(([s, e]) => start + n <= s || start >= e);
  const moving: [string, number][] = [];
  // Largest first keep their start: when two ranges now overlap, the smaller one moves.
  for (const [cluster, n] of holding) {
    const start = previous?.[cluster];
    if (start !== undefined && start >= 0 && free(start, n)) {
      starts[cluster] = start;
      taken.push([start, start + n]);
    } else moving.push([cluster, n]);
  }
  const grid = Math.max(1, total);
  for (const [cluster, n] of moving.sort(([a], [b]) => compareStrings(a, b))) {
    let start = 0;
    while (!free(start, n)) start += grid;
    starts[cluster] = start;
    taken.push([start, start + n]);
  }
  return Object.fromEntries(Object.entries(starts).sort(([a], [b]) => compareStrings(a, b)));
}

/**
 * A divided StatefulSet's ordinal ranges over the clusters it goes to (with the old replicas failover
 * keeps), kept from the last render's where they still fit; nothing for other workloads. Pure.
 */
export function statefulOrdinals(
  resource: Resource,
  workload: {
    readonly clusters: ReadonlyMap<string, number | undefined>;
    readonly replicas: number;
    readonly divided: boolean;
    readonly previous: OrdinalStarts | undefined;
  },
): { ordinals?: Record<string, number> } {
  if (!workload.divided || resource.group !== "apps" || resource.kind !== "StatefulSet") return {};
  const counts = Object.fromEntries([...workload.clusters].map(([cluster, n]) => [cluster, n ?? 0]));
  return { ordinals: ordinalStarts(counts, workload.previous, workload.replicas) };
}
