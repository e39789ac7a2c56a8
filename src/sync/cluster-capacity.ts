import { asList, asMap, isJsonMap, type JsonMap } from "../apimachinery/json.js";
import {
  type LabelSelector,
  type LabelSelectorRequirement,
  matchesLabelSelector,
} from "../apimachinery/label-selector.js";
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
import type { DesiredObject } from "./desired-objects.js";

// A member's capacity from its nodes and pods, read a page at a time: each node keeps running sums of
// what its pods request, never the pods. Settling turns the readings into pools, with each node's
// free amounts rounded down to a step and kept as recorded until they move a full step — so capacity
// noise (a pod started, a pod finished) changes no status file and makes no commit.

/** Free amounts are recorded in steps of this fraction of a node's allocatable (5%). */
export const CAPACITY_STEPS = 20;

/** Labels that name one node: a pool would hold one node each if they were kept. */
const PER_NODE_LABELS = new Set(["kubernetes.io/hostname"]);

/** At most this many workloads have their pods counted per member. */
export const MAX_COUNTED_WORKLOADS = 5_000;

/** A workload whose pods a reading counts: its identity, namespace and pod selector. */
export interface CountedWorkload {
  readonly identity: string;
  readonly namespace: string;
  readonly selector: LabelSelector;
}

/**
 * The workloads of a member's desired objects whose pods a capacity reading counts: each object
 * with a pod template and a non-empty spec.selector in a namespace, in identity order, at most
 * MAX_COUNTED_WORKLOADS.
 */
export function countedWorkloads(desired: readonly DesiredObject[]): CountedWorkload[] {
  const out: CountedWorkload[] = [];
  for (const d of desired) {
    const spec = asMap(d.object.spec);
    const namespace = asMap(d.object.metadata).namespace;
    const selector = asMap(spec.selector);
    const matchLabels = asMap(selector.matchLabels);
    const matchExpressions = asList(selector.matchExpressions);
    if (typeof namespace !== "string" || !isJsonMap(spec.template)) continue;
    if (Object.keys(matchLabels).length === 0 && matchExpressions.length === 0) continue;
    out.push({
      identity: d.identity,
      namespace,
      selector: {
        matchLabels: Object.fromEntries(Object.entries(matchLabels).map(([k, v]) => [k, String(v)])),
        matchExpressions: matchExpressions as unknown as LabelSelectorRequirement[],
      },
    });
  }
  return out.sort((a, b) => (a.identity < b.identity ? -1 : 1)).slice(0, MAX_COUNTED_WORKLOADS);
}

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
  /** Per counted workload's identity, its pods bound here. */
  readonly running: Map<string, number>;
}

/**
 * One node as last recorded, whole: its free amounts and the counted workloads' pods on it at that
 * moment, and which workloads were counted (so the two always describe the same instant).
 */
export interface RecordedNode {
  readonly free: Amounts;
  readonly running: ReadonlyMap<string, number>;
  /** The counted workloads' identities, joined: a node is recorded afresh when they change. */
  readonly counted: string;
}

/** Per node name, what was last recorded. */
export type RecordedFree = ReadonlyMap<string, RecordedNode>;

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
      running: new Map(),
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
 * requests (containers summed, the largest init container, overhead) and one pod to that node, and
 * counts towards the first counted workload (by identity) in its namespace whose selector it matches.
 */
export function addPods(
  readings: ReadonlyMap<string, NodeReading>,
  pods: Iterable<JsonMap>,
  workloads: WorkloadIndex = NO_WORKLOADS,
): void {
  for (const pod of pods) {
    const phase = asMap(pod.status).phase;
    if (phase === "Succeeded" || phase === "Failed") continue;
    const node = readings.get(String(asMap(pod.spec).nodeName ?? ""));
    if (!node) continue;
    addRequests(node, pod);
    const owner = workloads.ownerOf(pod);
    if (owner !== undefined) node.running.set(owner, (node.running.get(owner) ?? 0) + 1);
  }
}

// One pod and its effective requests on the node it is bound to.
function addRequests(node: NodeReading, pod: JsonMap): void {
  node.requested.pods = (node.requested.pods ?? 0) + 1;
  for (const [resource, request] of podRequirements(pod).requests) {
    const amount = resource === "cpu" ? request / 1000 : request;
    node.requested[resource] = (node.requested[resource] ?? 0) + amount;
  }
}

/** Counted workloads by namespace, to find the one a pod belongs to. */
export class WorkloadIndex {
  private readonly byNamespace = new Map<string, CountedWorkload[]>();
  /** The identities counted, joined: what a node's record says it counted. */
  readonly key: string;

  constructor(workloads: readonly CountedWorkload[]) {
    for (const w of workloads) {
      const list = this.byNamespace.get(w.namespace) ?? [];
      list.push(w);
      this.byNamespace.set(w.namespace, list);
    }
    this.key = workloads.map((w) => w.identity).join("\n");
  }

  /** The identity of the counted workload a pod belongs to, if any. */
  ownerOf(pod: JsonMap): string | undefined {
    const metadata = asMap(pod.metadata);
    const candidates = this.byNamespace.get(String(metadata.namespace ?? ""));
    if (!candidates) return undefined;
    const labels = asMap(metadata.labels) as Labels;
    return candidates.find((w) => matchesLabelSelector(w.selector, labels))?.identity;
  }
}

const NO_WORKLOADS = new WorkloadIndex([]);

/**
 * The capacity the readings give, and each node as now recorded. A node keeps its record — free
 * amounts and the counted workloads' pods on it — while every live amount stays within a step of the
 * recorded one and the same workloads are counted; otherwise it is recorded afresh, amounts rounded
 * down to a step. So the recorded free amounts and pod counts always describe the same moment, and
 * adding back a workload's counted pods never promises room that was not there. Nodes with equal
 * records form one pool; `running` sums, per counted workload, its pods on Ready, schedulable nodes
 * (present only when workloads were counted). Pure.
 */
export function settleCapacity(
  readings: ReadonlyMap<string, NodeReading>,
  recorded: RecordedFree = new Map(),
  counted?: string,
): { capacity: ClusterCapacity; recorded: Map<string, RecordedNode> } {
  const pools = new Map<string, { pool: NodePool; count: number }>();
  const now = new Map<string, RecordedNode>();
  const allocatable = zero();
  const requested = zero();
  const running = new Map<string, number>();
  let readyNodes = 0;
  for (const node of readings.values()) {
    const record = recordedNode(node, recorded.get(node.name), counted ?? "");
    const free = record.free;
    now.set(node.name, record);
    if (node.ready && !node.unschedulable) addCounts(running, record.running);
    if (node.ready) {
      readyNodes++;
      for (const resource of CAPACITY_RESOURCES) {
        allocatable[resource] += node.allocatable[resource] ?? 0;
        requested[resource] += (node.allocatable[resource] ?? 0) - (free[resource] ?? 0);
      }
    }
    addToPool(pools, node, free);
  }
  const ordered = [...pools]
    .sort(([ka, a], [kb, b]) => b.count - a.count || (ka < kb ? -1 : ka > kb ? 1 : 0))
    .slice(0, MAX_POOLS)
    .map(([, { pool, count }]) => ({ ...pool, count }));
  for (const resource of CAPACITY_RESOURCES) {
    allocatable[resource] = round(allocatable[resource]);
    requested[resource] = round(requested[resource]);
  }
  const counts = [...running].sort(([a], [b]) => (a < b ? -1 : 1));
  return {
    capacity: {
      nodes: readings.size,
      readyNodes,
      allocatable,
      requested,
      pools: ordered,
      ...(counted !== undefined ? { running: Object.fromEntries(counts) } : {}),
    },
    recorded: now,
  };
}

function addCounts(into: Map<string, number>, counts: ReadonlyMap<string, number>): void {
  for (const [identity, pods] of counts) into.set(identity, (into.get(identity) ?? 0) + pods);
}

// The node into the pool of nodes that look alike to the scheduler (a new pool when none does).
function addToPool(
  pools: Map<string, { pool: NodePool; count: number }>,
  node: NodeReading,
  free: Amounts,
): void {
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

/** The capacity of listed nodes and pods, recorded afresh (with the given workloads' pods counted). */
export function summarizeCapacity(
  nodes: readonly JsonMap[],
  pods: readonly JsonMap[],
  workloads?: readonly CountedWorkload[],
): ClusterCapacity {
  const readings = readNodes(nodes);
  const index = new WorkloadIndex(workloads ?? []);
  addPods(readings, pods, index);
  return settleCapacity(readings, new Map(), workloads ? index.key : undefined).capacity;
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

// The node's record kept whole while every amount is within a step of it and the same workloads are
// counted; otherwise a fresh one.
function recordedNode(node: NodeReading, before: RecordedNode | undefined, counted: string): RecordedNode {
  if (before && before.counted === counted && withinStep(node, before.free)) return before;
  const free: Record<string, number> = {};
  for (const resource of Object.keys(node.allocatable).sort()) {
    const total = node.allocatable[resource] ?? 0;
    const live = Math.max(0, total - (node.requested[resource] ?? 0));
    const step = capacityStep(resource, total);
    free[resource] = recordedAmount(resource, Math.floor(live / step + 1e-9) * step);
  }
  return { free, running: new Map(node.running), counted };
}

function withinStep(node: NodeReading, kept: Amounts): boolean {
  const resources = Object.keys(node.allocatable);
  if (resources.length !== Object.keys(kept).length) return false;
  return resources.every((resource) => {
    const total = node.allocatable[resource] ?? 0;
    const live = Math.max(0, total - (node.requested[resource] ?? 0));
    const was = kept[resource];
    return was !== undefined && was <= total && Math.abs(live - was) < capacityStep(resource, total);
  });
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
