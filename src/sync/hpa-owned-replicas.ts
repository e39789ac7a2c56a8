import { asMap, isJsonMap, type JsonMap } from "../model/json.js";
import type { ResourceInterpreterSpec } from "../model/types.js";
import type { DesiredObject } from "./cluster-sync.js";

/** The workloads HorizontalPodAutoscalers scale (rendered ones and the member's own), by identity. */
export function hpaTargets(hpas: Iterable<JsonMap>): Set<string> {
  const targets = new Set<string>();
  for (const hpa of hpas) {
    const ref = asMap(asMap(hpa.spec).scaleTargetRef);
    if (typeof ref.kind !== "string" || typeof ref.name !== "string") continue;
    const apiVersion = String(ref.apiVersion ?? "apps/v1");
    const group = apiVersion.includes("/") ? apiVersion.slice(0, apiVersion.indexOf("/")) : "";
    targets.add(`${group}/${ref.kind}/${String(asMap(hpa.metadata).namespace ?? "")}/${ref.name}`);
  }
  return targets;
}

const BUILT_IN_REPLICAS = new Set(["apps/v1 Deployment", "apps/v1 StatefulSet", "apps/v1 ReplicaSet"]);

/**
 * A workload an HPA scales, without the replicas field: with server-side apply gitfleet then owns
 * everything it renders but replicas, so it and the autoscaler never fight. The digest changes, so
 * the switch is applied once. Objects that are not scaled, or whose replicas path is unknown, are
 * returned as they are. Pure.
 */
export function leaveReplicasToHpa(
  desired: DesiredObject,
  targets: ReadonlySet<string>,
  interpreterFor?: (apiVersion: string, kind: string) => ResourceInterpreterSpec | undefined,
): DesiredObject {
  if (!targets.has(desired.identity)) return desired;
  const apiVersion = String(desired.object.apiVersion);
  const kind = String(desired.object.kind);
  const path = BUILT_IN_REPLICAS.has(`${apiVersion} ${kind}`)
    ? "spec.replicas"
    : interpreterFor?.(apiVersion, kind)?.replicasPath;
  if (!path) return desired;
  return { ...desired, object: without(desired.object, path.split(".")), digest: `${desired.digest}~hpa` };
}

function without(object: JsonMap, path: readonly string[]): JsonMap {
  const [head, ...rest] = path;
  if (head === undefined || !(head in object)) return object;
  const { [head]: value, ...others } = object;
  if (rest.length === 0) return others;
  return isJsonMap(value) ? { ...others, [head]: without(value, rest) } : object;
}
