import { asList, asMap, type JsonMap } from "../apimachinery/json.js";
import { parseMilliQuantity, parseQuantity } from "../apimachinery/quantity.js";
import type { ApiResource } from "./api-resources.js";

// metrics.k8s.io as metrics-server serves it, computed from the member's pods: every Running pod's
// containers report usage — by default a tenth of their CPU request and half their memory request,
// or what a load rule drives (tests and the demo raise a workload's CPU to make an autoscaler act).

/** PodMetrics: read-only, namespaced, get and list. */
export const POD_METRICS: ApiResource = {
  group: "metrics.k8s.io",
  version: "v1beta1",
  name: "pods",
  singularName: "",
  kind: "PodMetrics",
  namespaced: true,
  verbs: ["get", "list"],
};

/** Drives the usage of matching pods: per container CPU (a quantity, e.g. "900m") and memory. */
export interface LoadRule {
  readonly namespace: string;
  /** matchLabels on the pods. */
  readonly selector: Readonly<Record<string, string>>;
  readonly cpu?: string;
  readonly memory?: string;
  /** Per-pod custom metrics the member's metrics adapter serves for these pods: name → value. */
  readonly custom?: Readonly<Record<string, string>>;
}

/** The load rule that drives a pod (the last that matches it), if any. */
export function loadRuleOf(pod: JsonMap, rules: readonly LoadRule[]): LoadRule | undefined {
  const metadata = asMap(pod.metadata);
  const labels = asMap(metadata.labels);
  return [...rules]
    .reverse()
    .find(
      (r) =>
        r.namespace === metadata.namespace && Object.entries(r.selector).every(([k, v]) => labels[k] === v),
    );
}

/** The PodMetrics of one pod, or undefined while it is not Running (metrics-server has none yet). */
export function podMetrics(pod: JsonMap, rules: readonly LoadRule[], timestamp: string): JsonMap | undefined {
  if (asMap(pod.status).phase !== "Running") return undefined;
  const metadata = asMap(pod.metadata);
  const labels = asMap(metadata.labels);
  const rule = loadRuleOf(pod, rules);
  return {
    kind: "PodMetrics",
    apiVersion: "metrics.k8s.io/v1beta1",
    metadata: { name: metadata.name ?? "", namespace: metadata.namespace ?? "", labels },
    timestamp,
    window: "15s",
    containers: asList(asMap(pod.spec).containers).map((c) => {
      const requests = asMap(asMap(asMap(c).resources).requests);
      const cpuRequest = parseMilliQuantity(String(requests.cpu ?? "0")) ?? 0;
      const memoryRequest = parseQuantity(String(requests.memory ?? "0")) ?? 0;
      const cpu = rule?.cpu ? (parseMilliQuantity(rule.cpu) ?? 0) : Math.max(1, Math.round(cpuRequest / 10));
      const memory = rule?.memory
        ? (parseQuantity(rule.memory) ?? 0)
        : Math.round(memoryRequest / 2) || 1024 ** 2;
      return {
        name: asMap(c).name ?? "",
        usage: { cpu: `${cpu}m`, memory: `${Math.round(memory / 1024)}Ki` },
      };
    }),
  };
}

/** metrics.k8s.io's nodes: what `kubectl top nodes` reads. */
export const NODE_METRICS: ApiResource = {
  group: "metrics.k8s.io",
  version: "v1beta1",
  name: "nodes",
  singularName: "",
  kind: "NodeMetrics",
  namespaced: false,
  verbs: ["get", "list"],
};

// What a node's own system (kubelet, runtime, system daemons) uses beside its pods.
const SYSTEM_CPU_MILLIS = 100;
const SYSTEM_MEMORY_BYTES = 512 * 1024 ** 2;

/** A node's NodeMetrics: its running pods' usage plus the system's own, as metrics-server reports it. */
export function nodeMetrics(
  node: JsonMap,
  pods: readonly JsonMap[],
  rules: readonly LoadRule[],
  timestamp: string,
): JsonMap {
  const name = String(asMap(node.metadata).name ?? "");
  let cpu = SYSTEM_CPU_MILLIS;
  let memory = SYSTEM_MEMORY_BYTES;
  for (const pod of pods) {
    if (asMap(pod.spec).nodeName !== name) continue;
    for (const container of asList(podMetrics(pod, rules, timestamp)?.containers)) {
      const usage = asMap(asMap(container).usage);
      cpu += parseMilliQuantity(String(usage.cpu ?? "0")) ?? 0;
      memory += parseQuantity(String(usage.memory ?? "0")) ?? 0;
    }
  }
  return {
    kind: "NodeMetrics",
    apiVersion: "metrics.k8s.io/v1beta1",
    metadata: { name, labels: asMap(asMap(node.metadata).labels) },
    timestamp,
    window: "20s",
    usage: { cpu: `${Math.round(cpu)}m`, memory: `${Math.round(memory / 1024)}Ki` },
  };
}
