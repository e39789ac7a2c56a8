import { asMap } from "../apimachinery/json.js";
import type { DesiredObject } from "./desired-objects.js";
import { textDigest } from "./inventory.js";

/**
 * A digest of an app's objects in one cluster as a rollout sees them: everything but spec.replicas.
 * Two renderings with the same shape differ only in replica counts (an autoscaler's, a failover's):
 * a scale, not a new version. Pure.
 */
export function shapeOf(objects: readonly DesiredObject[]): string {
  const text = [...objects]
    .sort((a, b) => (a.identity < b.identity ? -1 : 1))
    .map((o) => {
      const spec = asMap(o.object.spec);
      if (!("replicas" in spec)) return `${o.identity} ${JSON.stringify(o.object)}`;
      const { replicas: _replicas, ...rest } = spec;
      return `${o.identity} ${JSON.stringify({ ...o.object, spec: rest })}`;
    })
    .join("\n");
  return textDigest(text);
}

/** True when the cluster holds the object as rendered (its inventory digest is the rendered one). */
export function holdsAsRendered(object: DesiredObject, inventoryDigest: string | undefined): boolean {
  const digest = inventoryDigest ?? "";
  return digest === object.digest || digest.startsWith(`${object.digest}~`);
}
