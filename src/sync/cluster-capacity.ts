import { asList, asMap, type JsonMap } from "../apimachinery/json.js";
import { parseQuantity } from "../apimachinery/quantity.js";
import {
  type Amounts,
  CAPACITY_RESOURCES,
  type CapacityResource,
  type ClusterCapacity,
  MAX_POOLS,
  type NodePool,
  readTaints,
  round,
} from "../model/node-capacity.js";
import type { Labels, Taint } from "../model/types.js";
import { podRequirements } from "../schedule/estimator.js";

// A member's capacity from its nodes and pods, read a page at a time: each node keeps running sums of
// what its pods request, never the pods. Settling turns the readings into pools, with each node's
// free amounts rounded down to a step and kept as recorded until they move a full step — so capacity
// noise (a pod started, a pod finished) changes no status file and makes no commit.

/** Free amounts are recorded in steps of this fraction of a node's allocatable (5%). */
export const CAPACITY_STEPS = 20;

/** Labels that name one node: a pool would hold one node each if they were kept. */
const PER_NODE_LABELS = new Set(["kubernetes.io/hostname"]);

/** One node as read so far: how it looks, what it offers, and what the pods bound to it request. */
export interface NodeReading {
  readonly name: string;
  readonly ready: boolean;
  readonly unschedulable: boolean;
  readonly allocatable: Amounts;
  readonly labels: Labels;
  readonly taints: readonly Taint[];
  /** Summed as pod pages arrive (cpu in cores, memory in bytes, pods by count). */
  readonly requested: Record<string, number>;
}

/** Per node name, the free amounts last recorded. */
export type RecordedFree = ReadonlyMap<string, Amounts>;

/** Adds a page of Node objects to the readings. */
export function readNodes(
  nodes: Iterable<JsonMap>,
  into = new Map<string, NodeReading>(),
): Map<string, NodeReading> {
  for (const node of nodes) {
    const name = String(asMap(node.metadata).name ?? "");
    into.set(name, {
      name,
      ready: nodeReady(node),
      unschedulable: asMap(node.spec).unschedulable === true,
      allocatable: allocatableOf(node),
      labels: poolLabels(node, name),
      taints: readTaints(asMap(node.spec).taints),
      requested: {},
    });
  }
  return into;
}

// The node's labels without those that name it.
function poolLabels(node: JsonMap, name: string): Labels {
  const labels: Record<string, string> = {};
  for (const [key, value] of Object.entries(asMap(asMap(node.metadata).labels)))
    if (typeof value === "string" && !PER_NODE_LABELS.has(key) && value !== name) labels[key] = value;
  return labels;
}

function allocatableOf(node: JsonMap): Amounts {
  const allocatable: Record<string, number> = {};
  for (const [resource, value] of Object.entries(asMap(asMap(node.status).allocatable))) {
    const amount = parseQuantity(String(value));
    if (amount !== undefined && amount > 0) allocatable[resource] = amount;
  }
  return allocatable;
}

/**
 * Adds a page of Pod objects: a pod bound to a known node that has not finished adds its effective
 * requests (containers summed, the largest init container, overhead) and one pod to that node.
 */
export function addPods(readings: ReadonlyMap<string, NodeReading>, pods: Iterable<JsonMap>): void {
  for (const pod of pods) {
    const phase = asMap(pod.status).phase;
    if (phase === "Succeeded" || phase === "Failed") continue;
    const node = readings.get(String(asMap(pod.spec).nodeName ?? ""));
    if (!node) continue;
    node.requested.pods = (node.requested.pods ?? 0) + 1;
    for (const [resource, request] of podRequirements(pod).requests) {
      const amount = resource === "cpu" ? request / 1000 : request;
      node.requested[resource] = (node.requested[resource] ?? 0) + amount;
    }
  }
}

/**
 * The capacity the readings give, and each node's free amounts as now recorded. A node keeps its
 * recorded amount of a resource while the live one stays within a step of it; otherwise the live
 * amount is recorded, rounded down to a step. Nodes with equal records form one pool. Pure.
 */
export function settleCapacity(
  readings: ReadonlyMap<string, NodeReading>,
  recorded: RecordedFree = new Map(),
): { capacity: ClusterCapacity; recorded: Map<string, Amounts> } {
  const pools = new Map<string, { pool: NodePool; count: number }>();
  const now = new Map<string, Amounts>();
  const allocatable = zero();
  const requested = zero();
  let readyNodes = 0;
  for (const node of readings.values()) {
    const free = recordedFree(node, recorded.get(node.name));
    now.set(node.name, free);
    if (node.ready) {
      readyNodes++;
      for (const resource of CAPACITY_RESOURCES) {
        allocatable[resource] += node.allocatable[resource] ?? 0;
        requested[resource] += (node.allocatable[resource] ?? 0) - (free[resource] ?? 0);
      }
    }
    const pool: NodePool = {
      count: 1,
      ready: node.ready,
      unschedulable: node.unschedulable,
      allocatable: sorted(node.allocatable),
      free,
      labels: sortedLabels(node.labels),
      taints: [...node.taints].sort((a, b) => (taintKey(a) < taintKey(b) ? -1 : 1)),
    };
    const key = JSON.stringify([
      pool.ready,
      pool.unschedulable,
      pool.allocatable,
      free,
      pool.labels,
      pool.taints,
    ]);
    const same = pools.get(key);
    if (same) same.count++;
    else pools.set(key, { pool, count: 1 });
  }
  const ordered = [...pools]
    .sort(([ka, a], [kb, b]) => b.count - a.count || (ka < kb ? -1 : ka > kb ? 1 : 0))
    .slice(0, MAX_POOLS)
    .map(([, { pool, count }]) => ({ ...pool, count }));
  for (const resource of CAPACITY_RESOURCES) {
    allocatable[resource] = round(allocatable[resource]);
    requested[resource] = round(requested[resource]);
  }
  return {
    capacity: { nodes: readings.size, readyNodes, allocatable, requested, pools: ordered },
    recorded: now,
  };
}

/** The capacity of listed nodes and pods, recorded afresh. */
export function summarizeCapacity(nodes: readonly JsonMap[], pods: readonly JsonMap[]): ClusterCapacity {
  const readings = readNodes(nodes);
  addPods(readings, pods);
  return settleCapacity(readings).capacity;
}

/** The step a resource's free amount is recorded in: 1/20 of the allocatable, whole units for counts. */
export function capacityStep(resource: string, allocatable: number): number {
  const step = allocatable / CAPACITY_STEPS;
  return countedResource(resource) ? Math.max(1, Math.floor(step)) : step;
}

// Resources counted in whole units: pods and devices (extended resources have a domain prefix).
function countedResource(resource: string): boolean {
  return resource === "pods" || (resource.includes("/") && !resource.startsWith("hugepages-"));
}

function recordedFree(node: NodeReading, before: Amounts | undefined): Amounts {
  const free: Record<string, number> = {};
  for (const resource of Object.keys(node.allocatable).sort()) {
    const total = node.allocatable[resource] ?? 0;
    const live = Math.max(0, total - (node.requested[resource] ?? 0));
    const step = capacityStep(resource, total);
    const kept = before?.[resource];
    free[resource] =
      kept !== undefined && kept <= total && Math.abs(live - kept) < step
        ? kept
        : recordedAmount(resource, Math.floor(live / step + 1e-9) * step);
  }
  return free;
}

// CPU to the milli-core, everything else in whole units, never above what was measured.
function recordedAmount(resource: string, value: number): number {
  return resource === "cpu" ? Math.floor(value * 1000 + 1e-6) / 1000 : Math.floor(value + 1e-6);
}

function sorted(amounts: Amounts): Amounts {
  const out: Record<string, number> = {};
  for (const key of Object.keys(amounts).sort()) out[key] = round(amounts[key] ?? 0);
  return out;
}

function sortedLabels(labels: Labels): Labels {
  const out: Record<string, string> = {};
  for (const key of Object.keys(labels).sort()) out[key] = labels[key] as string;
  return out;
}

function taintKey(taint: Taint): string {
  return `${taint.key}=${taint.value ?? ""}:${taint.effect}`;
}

function zero(): Record<CapacityResource, number> {
  return { cpu: 0, memory: 0, pods: 0 };
}

function nodeReady(node: JsonMap): boolean {
  return asList(asMap(node.status).conditions).some(
    (c) => asMap(c).type === "Ready" && asMap(c).status === "True",
  );
}
