import type { JsonMap } from "../apimachinery/json.js";
import type { ClusterHealth } from "../failover/cluster-health.js";
import type { Taint } from "../model/types.js";
import type { RenderedObject } from "../render/render-result.js";
import { inventoryPath, inventoryStatusText } from "../sync/inventory.js";
import type { ClusterSyncResult } from "../sync/sync-result.js";
import { type AgentReport, appObserved, clusterObserved } from "./observed-status.js";
import { carriedReadings } from "./stale-readings.js";
import { appStatusPath, clusterStatusPath } from "./status-files.js";

// What the sync publishes on the status branch: observed blocks appended to the reconcile's files,
// and the files it owns whole.

/**
 * The observed blocks of status/apps/ and status/clusters/, and the inventories, from the members'
 * results and the agents' reports. `previous` gives a cluster's current observed block: a member
 * that does not answer keeps its last readings, stale since `now` (stale-readings.ts). Pure.
 */
export function observedFiles(
  objects: readonly RenderedObject[],
  results: ReadonlyMap<string, ClusterSyncResult>,
  reports: ReadonlyMap<string, AgentReport>,
  conditions: ReadonlyMap<string, JsonMap>,
  previous: (path: string) => string | undefined = () => undefined,
  now = 0,
): { blocks: Map<string, string>; files: Map<string, string> } {
  const blocks = new Map<string, string>();
  const appClusters = new Map<string, Set<string>>();
  for (const object of objects) {
    const clusters = appClusters.get(object.app) ?? new Set<string>();
    clusters.add(object.cluster);
    appClusters.set(object.app, clusters);
  }
  for (const [app, clusters] of appClusters)
    blocks.set(appStatusPath(app), appObserved(app, [...clusters], results, reports));
  // Pull-mode clusters: what their agents reported.
  for (const [cluster, report] of reports)
    if (!results.has(cluster))
      blocks.set(
        clusterStatusPath(cluster),
        clusterObserved(undefined, conditions.get(cluster), report.observed),
      );
  for (const [cluster, condition] of conditions)
    if (!results.has(cluster) && !reports.has(cluster)) {
      const path = clusterStatusPath(cluster);
      blocks.set(path, clusterObserved(undefined, condition, carriedReadings(previous(path))));
    }
  const files = new Map<string, string>();
  for (const result of results.values()) {
    const path = clusterStatusPath(result.cluster);
    const carried = result.reachable ? undefined : carriedReadings(previous(path), now);
    blocks.set(path, clusterObserved(result, conditions.get(result.cluster), undefined, carried));
    if (result.reachable)
      files.set(
        inventoryPath(result.cluster),
        inventoryStatusText(result.cluster, result.sourceCommit, result.inventory, result.pruneBase),
      );
  }
  return { blocks, files };
}

/** Each probed cluster's condition as status/clusters/ records it: nothing in it moves but on a change. Pure. */
export function conditionBlocks(
  conditions: ReadonlyMap<string, { readonly health: ClusterHealth; readonly taints: readonly Taint[] }>,
): Map<string, JsonMap> {
  return new Map(
    [...conditions].map(([cluster, { health, taints }]) => [
      cluster,
      {
        ready: health.ready,
        ...(health.reason ? { reason: health.reason } : {}),
        since: new Date(health.since).toISOString(),
        ...(health.lastError && !health.ready ? { lastError: health.lastError } : {}),
        taints: taints.map((t) => `${t.key}:${t.effect}`),
      },
    ]),
  );
}
