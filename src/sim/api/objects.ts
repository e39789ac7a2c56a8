import { asMap, type JsonMap, valueAt } from "../../apimachinery/json.js";
import { scalePath } from "../api-resources.js";
import type { ObjectKey } from "../object-store.js";
import { badRequest, notFound } from "../status-error.js";
import type { ApiContext, Target } from "./api-context.js";
import { BUILT_IN_SCALE, labelSelectorText } from "./helpers.js";
/** The key of the object a request names; a namespaced kind needs its namespace. */
export function keyOf(target: Target): ObjectKey & { name: string } {
  if (target.resource.namespaced && target.namespace === undefined)
    throw badRequest(`the namespace of a ${target.resource.kind} is required`);
  return { resource: target.resource, namespace: target.namespace, name: target.name ?? "" };
}

/** The object a key names, or 404. */
export function existing(api: ApiContext, key: ObjectKey): JsonMap {
  const object = api.store.get(key);
  if (!object) throw notFound(key.resource, key.name);
  return object;
}

// A subresource's view of an object: the object for status, a Scale for scale.
export function viewOf(target: Target, object: JsonMap): JsonMap {
  if (target.subresource !== "scale") return object;
  const metadata = asMap(object.metadata);
  const paths = target.resource.scale ?? BUILT_IN_SCALE;
  return {
    kind: "Scale",
    apiVersion: "autoscaling/v1",
    metadata: {
      name: metadata.name ?? "",
      namespace: metadata.namespace ?? "",
      uid: metadata.uid ?? "",
      resourceVersion: metadata.resourceVersion ?? "",
      creationTimestamp: metadata.creationTimestamp ?? "",
    },
    spec: { replicas: valueAt(object, scalePath(paths.specReplicasPath)) ?? 0 },
    status: {
      replicas: valueAt(object, scalePath(paths.statusReplicasPath)) ?? 0,
      selector: paths.labelSelectorPath
        ? String(valueAt(object, scalePath(paths.labelSelectorPath)) ?? "")
        : labelSelectorText(asMap(asMap(object.spec).selector)),
    },
  };
}
