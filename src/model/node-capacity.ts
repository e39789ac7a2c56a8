import { isJsonMap, type Json, type JsonMap } from "../apimachinery/json.js";
import { oneLine } from "./one-line.js";
import type { Labels, Taint } from "./types.js";

// What a member can take, as the status branch records it and the scheduler reads it: nodes grouped
// into pools of nodes that look alike (same allocatable, labels, taints, readiness, and free amounts
// as recorded), so a 5,000-node member is a few dozen entries, never a pod list.

/** Resource amounts in base units: CPU in cores, memory and storage in bytes, pods and devices by count. */
export type Amounts = Readonly<Record<string, number>>;

/** Nodes that look alike to the scheduler, and how many there are. */
export interface NodePool {
  readonly count: number;
  readonly ready: boolean;
  readonly unschedulable: boolean;
  /** What each node offers pods. */
  readonly allocatable: Amounts;
  /** What each node can still take: allocatable minus what its bound, unfinished pods request, rounded down to its step. */
  readonly free: Amounts;
  /** The nodes' labels, without per-node ones (kubernetes.io/hostname). */
  readonly labels: Labels;
  readonly taints: readonly Taint[];
}

/** The resources the totals count (the dashboard's bars): CPU in cores, memory in bytes, pods by number. */
export const CAPACITY_RESOURCES = ["cpu", "memory", "pods"] as const;
export type CapacityResource = (typeof CAPACITY_RESOURCES)[number];

/**
 * A member's capacity: its nodes as pools, and totals over its Ready nodes — what they offer, and
 * what is taken of it (allocatable minus the recorded free amounts, so the totals move only when
 * the pools do).
 */
export interface ClusterCapacity {
  readonly nodes: number;
  readonly readyNodes: number;
  readonly allocatable: Readonly<Record<CapacityResource, number>>;
  readonly requested: Readonly<Record<CapacityResource, number>>;
  readonly pools: readonly NodePool[];
  /**
   * Per workload identity ("apps/Deployment/shop/web"), its pods on Ready, schedulable nodes when
   * the pools' free amounts were recorded: the room the scheduler may add back for it. Absent in a
   * reading that did not count them.
   */
  readonly running?: Readonly<Record<string, number>>;
}

/** At most this many pools are recorded or read back: pools beyond it are the smallest, and dropped. */
export const MAX_POOLS = 500;
const MAX_LABELS = 64;
const MAX_TAINTS = 32;
const MAX_RESOURCES = 32;
const MAX_NODES = 1_000_000;
/** At most this many workloads' counted pods are read back per member. */
export const MAX_RUNNING = 5_000;

/** The capacity as status/clusters/<cluster>.yaml records it under observed.capacity. */
export function capacityRecord(capacity: ClusterCapacity): JsonMap {
  const record: JsonMap = { nodes: capacity.nodes, readyNodes: capacity.readyNodes };
  for (const resource of CAPACITY_RESOURCES)
    record[resource] = {
      allocatable: round(capacity.allocatable[resource]),
      requested: round(capacity.requested[resource]),
    };
  record.pools = capacity.pools.slice(0, MAX_POOLS).map(poolRecord);
  if (capacity.running) {
    const running: JsonMap = {};
    for (const [identity, pods] of Object.entries(capacity.running).sort(([a], [b]) => (a < b ? -1 : 1)))
      if (pods > 0) running[identity] = pods;
    record.running = running;
  }
  return record;
}

function poolRecord(pool: NodePool): JsonMap {
  return {
    count: pool.count,
    ...(pool.ready ? {} : { ready: false }),
    ...(pool.unschedulable ? { unschedulable: true } : {}),
    allocatable: amountsRecord(pool.allocatable),
    free: amountsRecord(pool.free),
    ...(Object.keys(pool.labels).length > 0 ? { labels: { ...pool.labels } } : {}),
    ...(pool.taints.length > 0 ? { taints: pool.taints.map((t) => ({ ...t })) } : {}),
  };
}

function amountsRecord(amounts: Amounts): JsonMap {
  const out: JsonMap = {};
  for (const key of Object.keys(amounts).sort()) out[key] = round(amounts[key] ?? 0);
  return out;
}

/**
 * Reads a recorded capacity back (the status branch, an agent's report: untrusted), bounded: at most
 * 500 pools, numbers finite and not negative, labels and taints as Kubernetes allows them. Undefined
 * when there is none or it has no pools (a record from before pools were kept: unknown capacity).
 */
export function readCapacityRecord(value: Json | undefined): ClusterCapacity | undefined {
  if (!isJsonMap(value) || !Array.isArray(value.pools)) return undefined;
  const pools: NodePool[] = [];
  for (const entry of value.pools.slice(0, MAX_POOLS)) {
    const pool = readPool(entry);
    if (pool) pools.push(pool);
  }
  const totals = (key: "allocatable" | "requested") => {
    const out = { cpu: 0, memory: 0, pods: 0 };
    for (const resource of CAPACITY_RESOURCES) {
      const entry = value[resource];
      const n = isJsonMap(entry) ? entry[key] : undefined;
      out[resource] = isAmount(n) ? n : 0;
    }
    return out;
  };
  const running = readRunning(value.running);
  return {
    nodes: count(value.nodes) ?? pools.reduce((sum, p) => sum + p.count, 0),
    readyNodes: count(value.readyNodes) ?? 0,
    allocatable: totals("allocatable"),
    requested: totals("requested"),
    pools,
    ...(running ? { running } : {}),
  };
}

// Workload identities as gitfleet writes them: group/Kind/namespace/name.
const IDENTITY = /^[a-z0-9.-]{0,253}\/[A-Za-z][A-Za-z0-9]{0,62}\/[a-z0-9-]{1,63}\/[a-z0-9.-]{1,253}$/;

// Counted pods per workload, bounded: at most MAX_RUNNING entries, identities as gitfleet writes them.
function readRunning(value: Json | undefined): Record<string, number> | undefined {
  if (!isJsonMap(value)) return undefined;
  const out: Record<string, number> = {};
  for (const [identity, pods] of Object.entries(value).slice(0, MAX_RUNNING)) {
    const n = count(pods);
    if (n !== undefined && n > 0 && IDENTITY.test(identity)) out[identity] = n;
  }
  return out;
}

function readPool(value: Json | undefined): NodePool | undefined {
  if (!isJsonMap(value)) return undefined;
  const n = count(value.count);
  const allocatable = readAmounts(value.allocatable);
  const free = readAmounts(value.free);
  if (n === undefined || n === 0 || !allocatable || !free) return undefined;
  return {
    count: n,
    ready: value.ready !== false,
    unschedulable: value.unschedulable === true,
    allocatable,
    free,
    labels: readLabels(value.labels),
    taints: readTaints(value.taints),
  };
}

function readLabels(value: Json | undefined): Labels {
  const labels: Record<string, string> = {};
  if (!isJsonMap(value)) return labels;
  for (const [key, v] of Object.entries(value).slice(0, MAX_LABELS))
    if (typeof v === "string") labels[oneLine(key, 317)] = oneLine(v, 63);
  return labels;
}

/** Node taints that keep pods off (NoSchedule, NoExecute), from a record or a Node's spec. */
export function readTaints(value: Json | undefined): Taint[] {
  const taints: Taint[] = [];
  if (!Array.isArray(value)) return taints;
  for (const t of value.slice(0, MAX_TAINTS)) {
    if (!isJsonMap(t) || typeof t.key !== "string") continue;
    if (t.effect !== "NoSchedule" && t.effect !== "NoExecute") continue;
    const taint: Taint = { key: oneLine(t.key, 317), effect: t.effect };
    taints.push(typeof t.value === "string" ? { ...taint, value: oneLine(t.value, 63) } : taint);
  }
  return taints;
}

function readAmounts(value: Json | undefined): Amounts | undefined {
  if (!isJsonMap(value)) return undefined;
  const out: Record<string, number> = {};
  for (const [key, n] of Object.entries(value).slice(0, MAX_RESOURCES))
    if (isAmount(n) && /^[A-Za-z0-9][-A-Za-z0-9_./]{0,252}$/.test(key)) out[key] = n;
  return out;
}

function isAmount(value: unknown): value is number {
  return typeof value === "number" && Number.isFinite(value) && value >= 0;
}

function count(value: unknown): number | undefined {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0 && value <= MAX_NODES
    ? value
    : undefined;
}

/** Three decimals: CPU to the milli-core, and no floating-point noise in a status file. */
export function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}
