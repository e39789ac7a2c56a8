import { asMap, type JsonMap } from "../apimachinery/json.js";
import { compareStrings } from "../model/file-tree.js";
import type { FleetModel } from "../model/types.js";
import { generatedObject } from "./generated-object.js";
import type { RenderedObject } from "./render-result.js";

// The ResourceQuota a FederatedResourceQuota's static assignment gives its cluster: the member's own
// API server then enforces the limits at pod admission, and reports what the namespace uses (its
// status.used comes back with the sync). Rendered where the namespace is: a cluster that gets the
// Namespace or any object in it. Pure.

/** The app the fleet's quotas are tracked under (never an app directory's name: apps/ names are shorter). */
export const FLEET_QUOTAS_APP = "gitfleet-quotas";

/** The render's objects with the quotas' ResourceQuotas made afresh from the whole render. */
export function withQuotas(model: FleetModel, objects: readonly RenderedObject[]): RenderedObject[] {
  const others = objects.filter((o) => o.app !== FLEET_QUOTAS_APP);
  if (model.federatedResourceQuotas.length === 0) return others;
  const present = namespacesByCluster(others);
  const made: RenderedObject[] = [];
  for (const quota of model.federatedResourceQuotas) {
    const namespace = quota.metadata.namespace ?? "";
    for (const { clusterName, hard } of quota.spec.staticAssignments ?? []) {
      if (!present.get(clusterName)?.has(namespace)) continue;
      const body: JsonMap = {
        apiVersion: "v1",
        kind: "ResourceQuota",
        metadata: { name: quota.metadata.name, namespace },
        spec: { hard: Object.fromEntries(Object.entries(hard).map(([k, v]) => [k, String(v)])) },
      };
      made.push(generatedObject(FLEET_QUOTAS_APP, [], clusterName, body));
    }
  }
  return [...others, ...made].sort((a, b) => compareStrings(a.path, b.path));
}

function namespacesByCluster(objects: readonly RenderedObject[]): Map<string, Set<string>> {
  const byCluster = new Map<string, Set<string>>();
  for (const o of objects) {
    const namespace =
      o.object.kind === "Namespace" && o.object.apiVersion === "v1"
        ? asMap(o.object.metadata).name
        : asMap(o.object.metadata).namespace;
    if (typeof namespace !== "string") continue;
    const set = byCluster.get(o.cluster) ?? new Set<string>();
    set.add(namespace);
    byCluster.set(o.cluster, set);
  }
  return byCluster;
}
