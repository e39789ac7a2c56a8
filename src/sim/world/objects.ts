import { createHash } from "node:crypto";
import {
  asList,
  asMap,
  canonicalJson as canonicalJsonOf,
  type Json,
  type JsonMap,
} from "../../apimachinery/json.js";
import { parseQuantity } from "../../apimachinery/quantity.js";
// Names in order, numbers by value: web-2 before web-10.
export function compareNames(a: string, b: string): number {
  return a.localeCompare(b, "en", { numeric: true });
}

// Equal as JSON values, whatever the order of keys; a null field counts as absent (merge patch deletes it).
export function sameJson(a: Json, b: Json): boolean {
  return canonicalJson(a) === canonicalJson(b);
}

/** JSON text with keys sorted and null fields left out: the same for equal values, whatever their keys' order. */
export function canonicalJson(value: Json): string {
  return canonicalJsonOf(value, { nullFieldsAbsent: true });
}

/** The controller owner reference a workload puts on what it creates. */
export function ownerReference(owner: JsonMap, apiVersion: string, kind: string): JsonMap {
  const metadata = asMap(owner.metadata);
  return {
    apiVersion,
    kind,
    name: metadata.name ?? "",
    uid: metadata.uid ?? "",
    controller: true,
    blockOwnerDeletion: true,
  };
}

// A pod or a node with the condition Ready=True.
export function isReady(pod: JsonMap): boolean {
  return asList(asMap(pod.status).conditions).some(
    (c) => asMap(c).type === "Ready" && asMap(c).status === "True",
  );
}

// A pod's requests in base units (cpu in millicores), plus one pod slot.
export function requestsOf(pod: JsonMap): Record<string, number> {
  const total: Record<string, number> = { pods: 1 };
  for (const container of asList(asMap(pod.spec).containers))
    for (const [name, value] of Object.entries(asMap(asMap(asMap(container).resources).requests)))
      total[name] = (total[name] ?? 0) + quantity(name, value);
  return total;
}

/** Whether a pod fits a node: Ready, its node selector, tolerated taints, and room for its requests. */
export function fits(pod: JsonMap, node: JsonMap, used: Readonly<Record<string, number>>): boolean {
  return unfitReasons(pod, node, used).length === 0;
}

/** Why a pod does not fit a node, in kube-scheduler's words; empty when it fits. */
export function unfitReasons(pod: JsonMap, node: JsonMap, used: Readonly<Record<string, number>>): string[] {
  const labels = asMap(asMap(node.metadata).labels);
  const selector = asMap(asMap(pod.spec).nodeSelector);
  if (Object.entries(selector).some(([k, v]) => labels[k] !== v))
    return ["node(s) didn't match Pod's node affinity/selector"];
  const tolerations = asList(asMap(pod.spec).tolerations).map((t) => asMap(t));
  const taints = asList(asMap(node.spec).taints).map((t) => asMap(t));
  // A node not Ready carries the not-ready taint on a real cluster.
  if (!isReady(node) && taints.length === 0)
    taints.push({ key: "node.kubernetes.io/not-ready", effect: "NoSchedule" });
  const tolerated = (taint: JsonMap) =>
    tolerations.some(
      (t) =>
        (t.operator === "Exists" && (t.key === undefined || t.key === taint.key)) ||
        (t.key === taint.key && t.value === taint.value),
    );
  const untolerated = taints.find((taint) => taint.effect !== "PreferNoSchedule" && !tolerated(taint));
  if (untolerated)
    return [`node(s) had untolerated taint {${String(untolerated.key)}: ${String(untolerated.value ?? "")}}`];
  const allocatable = asMap(asMap(node.status).allocatable);
  return Object.entries(requestsOf(pod))
    .filter(
      ([name, amount]) =>
        (used[name] ?? 0) + amount > quantity(name, allocatable[name] ?? (name === "pods" ? "110" : "0")),
    )
    .map(([name]) => (name === "pods" ? "Too many pods" : `Insufficient ${name}`));
}

/** A resource quantity in base units (cpu in millicores). */
export function quantity(name: string, value: Json | undefined): number {
  const parsed = parseQuantity(String(value ?? "0"));
  const amount = parsed === undefined ? 0 : Number(parsed);
  return name === "cpu" ? Math.round(amount * 1000) : amount;
}

/** Adds a pod's requests to what a node has given out. */
export function add(
  used: Map<string, Record<string, number>>,
  node: string,
  requests: Record<string, number>,
): void {
  const entry = used.get(node) ?? {};
  for (const [name, amount] of Object.entries(requests)) entry[name] = (entry[name] ?? 0) + amount;
  used.set(node, entry);
}

/**
 * The pod-template-hash of a Deployment's template: named by its content, whatever its keys' order,
 * so a template brought back (`kubectl rollout undo`) finds its ReplicaSet again.
 */
export function templateHash(template: JsonMap): string {
  return createHash("sha256").update(canonicalJson(template)).digest("hex").slice(0, 10);
}
