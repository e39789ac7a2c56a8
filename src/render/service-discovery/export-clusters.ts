import { matchesClusterAffinity } from "../../model/cluster-affinity.js";
import { compareStrings } from "../../model/file-tree.js";
import type { ExportedService } from "../../model/service-exports.js";
import type { Resource } from "../../model/types.js";
import type { Destination, RenderContext } from "../place-resources.js";

// Where a service is exported from and where it is imported: the first is a follower of the
// replicas (an export goes only where a backing workload runs some), so the commit that moves the
// replicas — a failover's too — moves the export; the second is the consumers' choice.

/**
 * The clusters an export goes to: those its Placements give it where a backend has replicas (any
 * count above zero, old replicas failover keeps included), or where the Service goes for a Service
 * without a selector. Sorted.
 */
export function exportClusters(
  exported: ExportedService,
  destinations: ReadonlyMap<Resource, Destination>,
): string[] {
  const placed = destinations.get(exported.export)?.clusters;
  if (!placed) return [];
  const running = new Set<string>();
  if (exported.backends.length === 0) {
    const service = exported.service && destinations.get(exported.service);
    for (const cluster of service?.clusters.keys() ?? []) running.add(cluster);
  }
  for (const backend of exported.backends)
    for (const [cluster, count] of destinations.get(backend)?.clusters ?? [])
      if (count === undefined || count > 0) running.add(cluster);
  return [...placed.keys()].filter((c) => running.has(c)).sort(compareStrings);
}

/** Restricts each export's destination to the clusters it is exported from. */
export function exportsFollowReplicas(
  exports: readonly ExportedService[],
  destinations: Map<Resource, Destination>,
): void {
  for (const exported of exports) {
    const destination = destinations.get(exported.export);
    if (!destination) continue;
    const from = new Set(exportClusters(exported, destinations));
    const clusters = new Map([...destination.clusters].filter(([cluster]) => from.has(cluster)));
    destinations.set(exported.export, { ...destination, clusters });
  }
}

/**
 * The clusters a service is imported in: those its Placements' `imports` select (a Placement without
 * `imports` imports it everywhere). None while nothing exports it. Sorted.
 */
export function importClusters(
  context: RenderContext,
  exported: ExportedService,
  exportedFrom: readonly string[],
): string[] {
  if (exportedFrom.length === 0) return [];
  const placements = context.selections.placementsOf(exported.export);
  const clusters = context.model.clusters.map((c) => c.metadata.name);
  return clusters
    .filter((name) =>
      placements.some((p) => {
        const affinity = p.spec.imports?.clusterAffinity;
        const facts = context.facts.get(name);
        return !affinity || (facts !== undefined && matchesClusterAffinity(affinity, facts));
      }),
    )
    .sort(compareStrings);
}
