import { isJsonMap, type Json, type JsonMap, ownValue, setOwn } from "../apimachinery/json.js";
import type { GroupKind } from "../apimachinery/kinds.js";
import type { ResourceInterpreter } from "../model/types.js";
import type { NameOrder } from "../schedule/division/fnv.js";
import { dealByWebster } from "../schedule/division/webster.js";

const REPLICAS_FIELD: ReadonlyMap<GroupKind, readonly string[]> = new Map([
  ["apps/Deployment", ["spec", "replicas"]],
  ["apps/StatefulSet", ["spec", "replicas"]],
  ["apps/ReplicaSet", ["spec", "replicas"]],
  ["/ReplicationController", ["spec", "replicas"]],
  // A Job's share of the work is its parallelism; completions are divided separately.
  ["batch/Job", ["spec", "parallelism"]],
]);

/**
 * Writes a cluster's scheduled replica count into a copy of the object, through the kind's
 * interpreter: spec.replicas for Deployments, StatefulSets and ReplicaSets, spec.parallelism for Jobs,
 * and a ResourceInterpreter's replicasPath for custom kinds. Kinds without a replica count are returned
 * unchanged.
 */
export function writeReplicas(
  object: Json,
  kind: GroupKind,
  count: number,
  interpreter: ResourceInterpreter | undefined,
): Json {
  const path = REPLICAS_FIELD.get(kind) ?? interpreter?.spec.replicasPath?.split(".");
  if (path === undefined || typeof object !== "object" || object === null || Array.isArray(object))
    return object;
  const copy = structuredClone(object);
  let node: JsonMap = copy;
  // Own properties only, set as own properties: a path can never walk into or replace a prototype.
  for (const segment of path.slice(0, -1)) {
    const child = ownValue(node, segment);
    const next: JsonMap = isJsonMap(child) ? child : {};
    setOwn(node, segment, next);
    node = next;
  }
  setOwn(node, path.at(-1) ?? "replicas", count);
  return copy;
}

/**
 * Divides a divided Job's completions over the clusters it runs in, weighted by the parallelism each
 * got (Karmada's rule), with the same Webster dealing and tie-break as replicas. A cluster with no
 * parallelism gets no completions.
 */
export function divideJobCompletions(
  completions: number,
  parallelism: ReadonlyMap<string, number>,
  order: NameOrder,
): Map<string, number> {
  const shares = [...parallelism].map(([name, weight]) => ({ name, weight }));
  return new Map(dealByWebster(completions, shares, order).seats);
}
