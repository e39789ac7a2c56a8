import { asMap, type JsonMap } from "../apimachinery/json.js";

/** The phases of a sync, applied in this order and pruned in the reverse. */
export type ApplyPhase = "crds" | "namespaces" | "cluster" | "admission" | "namespaced";

export const APPLY_PHASES: readonly ApplyPhase[] = [
  "crds",
  "namespaces",
  "cluster",
  "admission",
  "namespaced",
];

// What the API server's admission reads as pods are created: a ResourceQuota counts only the pods
// created after its controller first counted it, and a LimitRange defaults only pods created after it.
const ADMISSION_KINDS: ReadonlySet<string> = new Set(["ResourceQuota", "LimitRange"]);

/**
 * Which phase an object belongs to: CRDs first (their kinds must be served), then Namespaces, other
 * cluster-scoped objects, the namespaces' ResourceQuotas and LimitRanges (Helm installs them as
 * early), then every other namespaced object.
 */
export function phaseOf(object: JsonMap): ApplyPhase {
  const apiVersion = String(object.apiVersion ?? "");
  if (object.kind === "CustomResourceDefinition" && apiVersion.startsWith("apiextensions.k8s.io/"))
    return "crds";
  if (object.kind === "Namespace" && apiVersion === "v1") return "namespaces";
  if (asMap(object.metadata).namespace === undefined) return "cluster";
  return apiVersion === "v1" && ADMISSION_KINDS.has(String(object.kind)) ? "admission" : "namespaced";
}

/** A ResourceQuota its controller has counted (status.hard says its spec's limits), or any other object. */
export function admissionReady(live: JsonMap): boolean {
  if (live.apiVersion !== "v1" || live.kind !== "ResourceQuota") return true;
  return sameMap(asMap(asMap(live.status).hard), asMap(asMap(live.spec).hard));
}

function sameMap(a: JsonMap, b: JsonMap): boolean {
  const keys = Object.keys(b);
  return Object.keys(a).length === keys.length && keys.every((key) => a[key] === b[key]);
}

// Within the namespaced phase, what pods need comes before the workloads that make pods.
const KIND_WEIGHT: Readonly<Record<string, number>> = {
  ServiceAccount: 0,
  Secret: 1,
  ConfigMap: 1,
  PersistentVolumeClaim: 2,
  Role: 3,
  RoleBinding: 4,
  Service: 5,
};
const WORKLOAD_WEIGHT = 6;

/**
 * Objects grouped by phase, in apply order; within a phase by kind weight (ServiceAccounts,
 * Secrets and ConfigMaps, PVCs, RBAC, Services, then workloads and everything else), then as given.
 * Empty phases are left out. Pure.
 */
export function applyPlan<T>(
  items: readonly T[],
  objectOf: (item: T) => JsonMap,
): { phase: ApplyPhase; items: T[] }[] {
  const groups = new Map<ApplyPhase, T[]>(APPLY_PHASES.map((phase) => [phase, []]));
  for (const item of items) groups.get(phaseOf(objectOf(item)))?.push(item);
  const weight = (item: T) => KIND_WEIGHT[String(objectOf(item).kind)] ?? WORKLOAD_WEIGHT;
  return APPLY_PHASES.map((phase) => ({
    phase,
    // Array.prototype.sort is stable: equal weights keep their given order.
    items: (groups.get(phase) ?? []).slice().sort((a, b) => weight(a) - weight(b)),
  })).filter((group) => group.items.length > 0);
}
