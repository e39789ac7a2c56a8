import { asList, asMap } from "../../apimachinery/json.js";
import type { WorldContext } from "./world-context.js";
// Objects whose controller is gone go too, as the garbage collector removes dependents.
export function collectGarbage(world: WorldContext): void {
  const alive = new Set(
    [
      "/apis/apps/v1/deployments",
      "/apis/apps/v1/replicasets",
      "/apis/apps/v1/statefulsets",
      "/apis/batch/v1/jobs",
      ...world.customWorkloads().map(({ prefix, collection }) => `${prefix}/${collection}`),
    ]
      .flatMap((path) => world.list(path))
      .map((object) => asMap(object.metadata).uid),
  );
  for (const [path, prefix, resource] of [
    ["/apis/apps/v1/replicasets", "/apis/apps/v1", "replicasets"],
    ["/api/v1/pods", "/api/v1", "pods"],
  ] as const)
    for (const object of world.list(path)) {
      const owners = asList(asMap(object.metadata).ownerReferences).map((r) => asMap(r).uid);
      if (owners.length > 0 && owners.every((uid) => !alive.has(uid))) world.remove(object, prefix, resource);
    }
}
