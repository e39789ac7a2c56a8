import { asList, asMap, type JsonMap } from "../model/json.js";
import { parseQuantity } from "../model/quantity.js";

/** The resources a capacity summary counts: CPU in cores, memory in bytes, pods by number. */
export const CAPACITY_RESOURCES = ["cpu", "memory", "pods"] as const;
export type CapacityResource = (typeof CAPACITY_RESOURCES)[number];

/**
 * What a member can still take, as Karmada's cluster resource summary has it: the allocatable
 * resources of its Ready nodes, and what the pods bound to them request (pods that finished count
 * for nothing). A NotReady node's allocatable is not capacity anyone can use.
 */
export interface ClusterCapacity {
  readonly nodes: number;
  readonly readyNodes: number;
  readonly allocatable: Readonly<Record<CapacityResource, number>>;
  readonly requested: Readonly<Record<CapacityResource, number>>;
}

/** The summary of a member's nodes and pods (as listed from its API). */
export function summarizeCapacity(nodes: readonly JsonMap[], pods: readonly JsonMap[]): ClusterCapacity {
  const ready = new Set<string>();
  const allocatable = zero();
  for (const node of nodes) {
    if (!nodeReady(node)) continue;
    ready.add(String(asMap(node.metadata).name));
    const values = asMap(asMap(node.status).allocatable);
    for (const resource of CAPACITY_RESOURCES) allocatable[resource] += quantity(values[resource]);
  }
  const requested = zero();
  for (const pod of pods) {
    const phase = asMap(pod.status).phase;
    if (phase === "Succeeded" || phase === "Failed" || !ready.has(String(asMap(pod.spec).nodeName))) continue;
    requested.pods += 1;
    for (const container of asList(asMap(pod.spec).containers)) {
      const requests = asMap(asMap(asMap(container as JsonMap).resources).requests);
      requested.cpu += quantity(requests.cpu);
      requested.memory += quantity(requests.memory);
    }
  }
  return { nodes: nodes.length, readyNodes: ready.size, allocatable, requested };
}

/** The summary as status/clusters/ records it: CPU in cores (3 decimals), memory in bytes. */
export function capacityRecord(capacity: ClusterCapacity): JsonMap {
  const round = (value: number) => Math.round(value * 1000) / 1000;
  const record: JsonMap = { nodes: capacity.nodes, readyNodes: capacity.readyNodes };
  for (const resource of CAPACITY_RESOURCES)
    record[resource] = {
      allocatable: round(capacity.allocatable[resource]),
      requested: round(capacity.requested[resource]),
    };
  return record;
}

function zero(): Record<CapacityResource, number> {
  return { cpu: 0, memory: 0, pods: 0 };
}

function quantity(value: unknown): number {
  return value === undefined || value === null ? 0 : (parseQuantity(String(value)) ?? 0);
}

function nodeReady(node: JsonMap): boolean {
  return asList(asMap(node.status).conditions).some(
    (c) => asMap(c as JsonMap).type === "Ready" && asMap(c as JsonMap).status === "True",
  );
}
