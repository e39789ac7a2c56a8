import { countOf } from "../model/count-or-percent.js";
import { compareStrings } from "../model/file-tree.js";
import type { Cluster, RolloutSpec } from "../model/types.js";

/** Where one app stands in one cluster, for the rollout of its current rendering. */
export interface ClusterRolloutState {
  /** The cluster holds the app's current rendering (every object applied as rendered, nothing left to prune). */
  readonly updated: boolean;
  /** The app is Healthy there. */
  readonly healthy: boolean;
  /** Milliseconds the cluster has been updating (allowed, not yet updated and Healthy); absent when not. */
  readonly updatingForMs?: number;
  /**
   * The rollout does not wait for this cluster: its member did not answer the last sync (it takes the
   * change when it returns), failover is moving the app off it, or its agent pulls (pull mode).
   */
  readonly passedOver?: boolean;
}

/** Which clusters may take an app's current rendering now, and why the others wait. */
export interface RolloutGate {
  readonly allowed: ReadonlySet<string>;
  /** Per held cluster, why it waits. */
  readonly held: ReadonlyMap<string, string>;
  /** Set when a cluster did not become Healthy within the timeout: the rollout stops there until a new commit. */
  readonly halted?: string;
}

/**
 * The clusters of an app in rollout order: for Serial, `order` first as listed, or by `orderByLabel`'s
 * value; the rest by name. Pure.
 */
export function rolloutOrder(
  clusters: readonly Cluster[],
  appClusters: readonly string[],
  spec: RolloutSpec,
): string[] {
  const labelOf = (name: string) =>
    spec.orderByLabel
      ? (clusters.find((c) => c.metadata.name === name)?.metadata.labels?.[spec.orderByLabel] ?? "\uffff")
      : "";
  const listed = spec.order ?? [];
  const rank = (name: string) => (listed.includes(name) ? listed.indexOf(name) : listed.length);
  return [...appClusters].sort(
    (a, b) => rank(a) - rank(b) || compareStrings(labelOf(a), labelOf(b)) || compareStrings(a, b),
  );
}

/** maxUnavailableClusters as a count of `total`: a number, or a percentage rounded down, never below 1. */
export function maxUnavailable(value: number | string | undefined, total: number): number {
  return value === undefined ? total : countOf(value, total);
}

/**
 * Which clusters may take the app's current rendering. Serial: clusters in order, each only once the
 * one before holds it and is Healthy. Parallel: every cluster that holds it already, plus at most
 * maxUnavailableClusters updating at once. A cluster updating for longer than the timeout halts the
 * rollout: the clusters after it wait until a new commit supersedes this one. Unreachable clusters
 * and those failover moves the app off are passed over: waiting for them would hold back the very
 * replicas that replace theirs. Pure.
 */
export function rolloutGate(
  fullOrder: readonly string[],
  spec: RolloutSpec,
  states: ReadonlyMap<string, ClusterRolloutState>,
  timeoutMs: number | undefined,
): RolloutGate {
  const passedOver = fullOrder.filter((c) => states.get(c)?.passedOver === true);
  const order = fullOrder.filter((c) => states.get(c)?.passedOver !== true);
  const settled = (c: string) => states.get(c)?.updated === true && states.get(c)?.healthy === true;
  const overdue = order.find(
    (c) => !settled(c) && timeoutMs !== undefined && (states.get(c)?.updatingForMs ?? 0) > timeoutMs,
  );
  const gate =
    spec.strategy === "Serial"
      ? serialGate(order, settled, overdue)
      : parallelGate(
          order,
          states,
          settled,
          maxUnavailable(spec.maxUnavailableClusters, order.length),
          overdue,
        );
  for (const cluster of passedOver) gate.allowed.add(cluster);
  return { ...gate, ...(overdue ? { halted: overdue } : {}) };
}

function serialGate(
  order: readonly string[],
  settled: (cluster: string) => boolean,
  overdue: string | undefined,
): { allowed: Set<string>; held: Map<string, string> } {
  const allowed = new Set<string>();
  const held = new Map<string, string>();
  let last: string | undefined;
  for (const cluster of order) {
    if (last === undefined || (settled(last) && allowed.has(last))) {
      allowed.add(cluster);
      last = cluster;
    } else held.set(cluster, waiting(last, overdue));
  }
  return { allowed, held };
}

function parallelGate(
  order: readonly string[],
  states: ReadonlyMap<string, ClusterRolloutState>,
  settled: (cluster: string) => boolean,
  max: number,
  overdue: string | undefined,
): { allowed: Set<string>; held: Map<string, string> } {
  const allowed = new Set<string>();
  const held = new Map<string, string>();
  const updated = (c: string) => states.get(c)?.updated === true;
  let budget = max - order.filter((c) => updated(c) && !settled(c)).length;
  for (const cluster of order) {
    if (updated(cluster)) allowed.add(cluster);
    else if (budget > 0 && overdue === undefined) {
      allowed.add(cluster);
      budget--;
    } else
      held.set(
        cluster,
        overdue ? waiting(overdue, overdue) : "waiting: maxUnavailableClusters clusters are updating",
      );
  }
  return { allowed, held };
}

function waiting(on: string, overdue: string | undefined): string {
  return overdue === on
    ? `rollout halted: ${on} did not become Healthy in time`
    : `waiting for ${on} to be Healthy`;
}
