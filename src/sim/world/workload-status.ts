import { asMap, type JsonMap } from "../../apimachinery/json.js";
import { isReady, sameJson } from "./objects.js";
import type { WorldContext } from "./world-context.js";
/**
 * Writes a pod-owning workload's status as its controller computes it — its pods, the ready ones
 * (available at once: no minReadySeconds here), and `counted` fields equal to the pod count — when
 * it changed; through the status subresource unless the kind has none.
 */
export function writePodStatus(
  world: WorldContext,
  owner: JsonMap,
  prefix: string,
  collection: string,
  counted: readonly string[],
  viaStatus = true,
  readyCounted: readonly string[] = [],
): void {
  const metadata = asMap(owner.metadata);
  const pods = world.ownedBy(`/api/v1/namespaces/${String(metadata.namespace)}/pods`, metadata);
  const ready = pods.filter(isReady).length;
  const status: JsonMap = {
    observedGeneration: metadata.generation ?? 1,
    replicas: pods.length,
    readyReplicas: ready,
    availableReplicas: ready,
    ...Object.fromEntries(counted.map((field) => [field, pods.length])),
    ...Object.fromEntries(readyCounted.map((field) => [field, ready])),
  };
  if (!sameJson(asMap(owner.status), status))
    world.patch(owner, prefix, viaStatus ? `${collection}/status` : collection, { status }, collection);
}
