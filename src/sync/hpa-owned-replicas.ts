import { asList, asMap, type JsonMap, valueAt, withoutValueAt, withValueAt } from "../apimachinery/json.js";
import { groupOf } from "../apimachinery/kinds.js";
import { identityOf } from "../model/identity.js";
import type { ObjectInterpreterLookup } from "../model/interpreter-index.js";
import type { DesiredObject } from "./desired-objects.js";
import { FIELD_MANAGER } from "./field-manager.js";

/** The workloads HorizontalPodAutoscalers scale (rendered ones and the member's own), by identity. */
export function hpaTargets(hpas: Iterable<JsonMap>): Set<string> {
  const targets = new Set<string>();
  for (const hpa of hpas) {
    const ref = asMap(asMap(hpa.spec).scaleTargetRef);
    if (typeof ref.kind !== "string" || typeof ref.name !== "string") continue;
    const namespace = asMap(hpa.metadata).namespace;
    targets.add(
      identityOf(
        groupOf(String(ref.apiVersion ?? "apps/v1")),
        ref.kind,
        typeof namespace === "string" ? namespace : undefined,
        ref.name,
      ),
    );
  }
  return targets;
}

const BUILT_IN_REPLICAS = new Set(["apps/v1 Deployment", "apps/v1 StatefulSet", "apps/v1 ReplicaSet"]);

/**
 * A workload an HPA scales, as gitfleet applies it, so that the two never fight: created with the
 * rendered replicas; once it exists, with the member's own count while only gitfleet owns the field
 * (so server-side apply does not remove it and reset the workload to one replica), and without the
 * field once another manager (the autoscaler) owns it. The digest changes, so the switch is applied
 * once. Objects that are not scaled, or whose replicas path is unknown, are returned as they are. Pure.
 */
export function leaveReplicasToHpa(
  desired: DesiredObject,
  live: JsonMap | undefined,
  targets: ReadonlySet<string>,
  interpreterFor?: ObjectInterpreterLookup,
): DesiredObject {
  if (!live || !targets.has(desired.identity)) return desired;
  const apiVersion = String(desired.object.apiVersion);
  const kind = String(desired.object.kind);
  const path = BUILT_IN_REPLICAS.has(`${apiVersion} ${kind}`)
    ? "spec.replicas"
    : interpreterFor?.(apiVersion, kind)?.replicasPath;
  if (!path) return desired;
  const segments = path.split(".");
  const current = valueAt(live, segments);
  const object =
    ownedByAnother(live, segments) || typeof current !== "number"
      ? withoutValueAt(desired.object, segments)
      : withValueAt(desired.object, segments, current);
  return { ...desired, object, digest: `${desired.digest}~hpa` };
}

// Some field manager other than gitfleet's owns the field (managedFields, FieldsV1).
function ownedByAnother(live: JsonMap, path: readonly string[]): boolean {
  return asList(asMap(live.metadata).managedFields).some((entry) => {
    const managed = asMap(entry);
    if (managed.manager === FIELD_MANAGER) return false;
    return (
      valueAt(
        managed.fieldsV1,
        path.map((segment) => `f:${segment}`),
      ) !== undefined
    );
  });
}
