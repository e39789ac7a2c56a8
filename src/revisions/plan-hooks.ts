import type { ConnectionSources } from "../kube/connections.js";
import { describeManifest } from "../model/identity.js";
import type { FleetModel } from "../model/types.js";
import { type HookConflict, hookPhases, type Plan } from "../plan/plan.js";
import type { RenderedObject } from "../render/render-result.js";
import { isOwnHook } from "../sync/hook-ownership.js";
import { readLive } from "./read-live.js";

/**
 * The hooks of a change that would meet a live object gitfleet did not make (an operator's object,
 * a system one): the sync reports a conflict and never replaces it, so the plan says so before
 * merge. Read with --kubeconfig only, for the hooks of apps the plan changes in each cluster.
 */
export async function planHookConflicts(
  head: FleetModel,
  objects: readonly RenderedObject[],
  plan: Plan,
  sources: ConnectionSources,
): Promise<HookConflict[]> {
  const changedApps = new Set<string>();
  const byPath = new Map(objects.map((o) => [o.path, o]));
  for (const cluster of plan.clusters)
    for (const change of [...cluster.added, ...cluster.changed, ...cluster.removed]) {
      const object = byPath.get(change.path);
      if (object) changedApps.add(`${cluster.cluster}\0${object.app}`);
    }
  const hooks = objects.filter(
    (o) => hookPhases(o) !== undefined && changedApps.has(`${o.cluster}\0${o.app}`),
  );
  if (hooks.length === 0) return [];
  const live = await readLive(head, hooks, sources);
  return hooks.flatMap((o) => {
    const current = live.get(o.path);
    if (!current || isOwnHook(current, o.app)) return [];
    return [
      { cluster: o.cluster, object: describeManifest(o.object), app: o.app, hook: hookPhases(o) ?? "" },
    ];
  });
}
