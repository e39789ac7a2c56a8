import { isJsonMap, type JsonMap, valueAt } from "../apimachinery/json.js";
import type { NodePool } from "../model/node-capacity.js";
import { poolNode } from "../render/place-resources.js";
import { describeFit, fitDetail, podRequirements } from "../schedule/estimator.js";

/**
 * For each cluster whose nodes were recorded, how many more replicas of a rendered workload fit
 * there and what bounds them ("fits 14 more: cpu on 5 nodes"), counted by the scheduler's own
 * node-level estimator from its pod template. Clusters whose nodes were never read are left out.
 * Pure.
 */
export function workloadRoom(
  workload: JsonMap,
  clusters: readonly string[],
  poolsOf: (cluster: string) => readonly NodePool[] | undefined,
): Record<string, string> {
  const template = valueAt(workload, ["spec", "template"]);
  if (!isJsonMap(template)) return {};
  const pod = podRequirements(template);
  const room: Record<string, string> = {};
  for (const cluster of clusters) {
    const pools = poolsOf(cluster);
    if (pools) room[cluster] = describeFit(fitDetail(pools.map(poolNode), pod));
  }
  return room;
}
