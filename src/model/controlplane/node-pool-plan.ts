import { compareVersions, format, parseGitVersion } from "../../apimachinery/kube-version.js";
import { countOf } from "../count-or-percent.js";
import { compareStrings } from "../file-tree.js";
import type { ResolvedNodePool } from "./node-pools.js";

/** On a pool's Node: the kubelet version its machine should run. The machine's agent reads it. */
export const KUBELET_VERSION_ANNOTATION = "gitfleet.io/kubelet-version";
/** On a pool's Node: when gitfleet cordoned it to upgrade it (ISO); it uncordons only what it cordoned. */
export const UPGRADE_STARTED_ANNOTATION = "gitfleet.io/upgrade-started";

/** A Node of a pool as the hosted API server reports it. */
export interface PoolNode {
  readonly name: string;
  readonly uid: string;
  /** status.nodeInfo.kubeletVersion; undefined before the kubelet reports it. */
  readonly kubeletVersion: string | undefined;
  /** The Ready condition's status; Unknown when there is none. */
  readonly ready: "True" | "False" | "Unknown";
  /** Since when (ms) the Ready condition has had that status: its lastTransitionTime, else the Node's creation. */
  readonly readySince: number;
  /** The version gitfleet told it (KUBELET_VERSION_ANNOTATION). */
  readonly told: string | undefined;
  /** When gitfleet cordoned it for an upgrade (UPGRADE_STARTED_ANNOTATION), ms. */
  readonly upgradeStarted: number | undefined;
}

/** What to do to one Node in this pass. */
export type PoolAction =
  /** Cordon it and mark it upgrading (it is drained and told its version next). */
  | { readonly kind: "cordon"; readonly node: string }
  /**
   * Evict its pods; once none is left to evict, tell it `version` — unless `told` says the Node's
   * annotation already names it (as read for this pass).
   */
  | { readonly kind: "drain"; readonly node: string; readonly version: string; readonly told: boolean }
  /** It runs the version Ready: uncordon it. */
  | { readonly kind: "uncordon"; readonly node: string; readonly version: string }
  /** It has been NotReady too long: remove it for its machine to be replaced. */
  | { readonly kind: "remove"; readonly node: string; readonly uid: string; readonly notReadyForMs: number };

/** One pool's pass: what to do, and what the status branch says of the pool. */
export interface PoolPlan {
  readonly pool: string;
  /** The version the pool moves to. */
  readonly target: string;
  readonly actions: readonly PoolAction[];
  /** Nodes of the pool after the pass (removed ones left out). */
  readonly nodes: number;
  /** Of them, Ready at the target version. */
  readonly upToDate: number;
  /** Nodes being upgraded after the pass, by name. */
  readonly upgrading: readonly string[];
  /** Upgrading nodes past the progress deadline, with why. */
  readonly stalled: Readonly<Record<string, string>>;
  /** Why no node's upgrade may start or go on now. */
  readonly held?: string;
  /** Why NotReady nodes were left in place. */
  readonly repairHeld?: string;
  /** Machines the pool lacks: replicas less the nodes left. */
  readonly missing: number;
  /**
   * A pass soon would move the pool on: a node upgrading within its deadline, or a NotReady node that
   * repair will remove once it has been NotReady long enough. (A stalled or held pool is not moving.)
   */
  readonly moving: boolean;
}

/**
 * One pass over a pool's Nodes, a function of what the hosted cluster reports:
 *
 * - **Repair**: a Node whose Ready condition has been False or Unknown for `notReadyFor` is removed
 *   (its machine is the provisioner's to replace) — unless more of the pool than `maxUnhealthy` is in
 *   that state, when nothing is removed (a partition or a control-plane fault looks like that).
 * - **Gray upgrade** to the pool's kubeletVersion: a node is cordoned, drained and told its version;
 *   once it reports that version Ready it is uncordoned. Nodes upgrading and nodes NotReady together
 *   stay within `maxUnavailable`; new ones start in name order. A node past `progressDeadline` is
 *   stalled: it keeps its place (so the upgrade goes no further) and is named. Nothing starts, and no
 *   node is told a version, while the API server reports an older one (a kubelet is never newer than
 *   its API server) or reports none.
 */
export function planNodePool(
  pool: ResolvedNodePool,
  nodes: readonly PoolNode[],
  apiServerVersion: string | undefined,
  now: number,
): PoolPlan {
  const sorted = [...nodes].sort((a, b) => compareStrings(a.name, b.name));
  const repair = planRepair(pool, sorted, now);
  const removed = new Set(repair.actions.map((a) => a.node));
  const kept = sorted.filter((n) => !removed.has(n.name));
  const target = pool.kubeletVersion;
  const held = holdReason(target, apiServerVersion);
  const done = (n: PoolNode) => n.ready === "True" && sameVersion(n.kubeletVersion, target);
  const flight = planInFlight(pool, kept, held === undefined, done, now);
  const starts = held === undefined ? planStarts(pool, kept, flight.upgrading.length, done) : [];
  const upgrading = [...flight.upgrading, ...starts];
  return {
    pool: pool.name,
    target,
    actions: [
      ...repair.actions,
      ...flight.actions,
      ...starts.flatMap((node): PoolAction[] => [
        { kind: "cordon", node },
        { kind: "drain", node, version: target, told: kept.find((n) => n.name === node)?.told === target },
      ]),
    ],
    nodes: kept.length,
    upToDate: kept.filter(done).length,
    upgrading: upgrading.sort(compareStrings),
    stalled: flight.stalled,
    ...(held === undefined || kept.every(done) ? {} : { held }),
    ...(repair.held === undefined ? {} : { repairHeld: repair.held }),
    missing: Math.max(0, pool.replicas - kept.length),
    moving:
      (held === undefined && upgrading.some((n) => flight.stalled[n] === undefined)) ||
      (pool.repair.enabled && repair.held === undefined && kept.some((n) => n.ready !== "True")),
  };
}

// The nodes gitfleet cordoned: uncordoned once done, else drained and told (unless held), stalled
// past the progress deadline.
function planInFlight(
  pool: ResolvedNodePool,
  nodes: readonly PoolNode[],
  going: boolean,
  done: (node: PoolNode) => boolean,
  now: number,
): { actions: PoolAction[]; upgrading: string[]; stalled: Record<string, string> } {
  const target = pool.kubeletVersion;
  const actions: PoolAction[] = [];
  const upgrading: string[] = [];
  const stalled: Record<string, string> = {};
  for (const node of nodes) {
    if (node.upgradeStarted === undefined) continue;
    if (done(node)) {
      actions.push({ kind: "uncordon", node: node.name, version: target });
      continue;
    }
    upgrading.push(node.name);
    if (going) actions.push({ kind: "drain", node: node.name, version: target, told: node.told === target });
    const elapsed = now - node.upgradeStarted;
    if (elapsed > pool.progressDeadlineMs)
      stalled[node.name] =
        `it has not reported ${target} Ready ${seconds(elapsed)} after it was cordoned (progressDeadline ${seconds(pool.progressDeadlineMs)})`;
  }
  return { actions, upgrading, stalled };
}

// The nodes whose upgrade starts now, in name order: Ready, not at the version, within what
// maxUnavailable leaves once the nodes upgrading and those NotReady are counted.
function planStarts(
  pool: ResolvedNodePool,
  nodes: readonly PoolNode[],
  upgrading: number,
  done: (node: PoolNode) => boolean,
): string[] {
  const idle = nodes.filter((n) => n.upgradeStarted === undefined);
  const notReady = idle.filter((n) => n.ready !== "True").length;
  const budget = countOf(pool.maxUnavailable, nodes.length) - upgrading - notReady;
  return idle
    .filter((n) => n.ready === "True" && !done(n))
    .slice(0, Math.max(0, budget))
    .map((n) => n.name);
}

function planRepair(
  pool: ResolvedNodePool,
  nodes: readonly PoolNode[],
  now: number,
): { actions: PoolAction[]; held?: string } {
  if (!pool.repair.enabled) return { actions: [] };
  const { notReadyForMs } = pool.repair;
  const failing = nodes.filter((n) => n.ready !== "True" && now - n.readySince >= notReadyForMs);
  if (failing.length === 0) return { actions: [] };
  const allowed = countOf(pool.repair.maxUnhealthy, nodes.length, 0);
  if (failing.length > allowed)
    return {
      actions: [],
      held: `${failing.length} of ${nodes.length} nodes have been NotReady for ${seconds(notReadyForMs)} or more, more than maxUnhealthy (${pool.repair.maxUnhealthy}): none is removed (${failing.map((n) => n.name).join(", ")})`,
    };
  return {
    actions: failing.map((n) => ({
      kind: "remove",
      node: n.name,
      uid: n.uid,
      notReadyForMs: now - n.readySince,
    })),
  };
}

// Why a pool's kubelets may not move to `target` now: the API server is older, or says nothing.
function holdReason(target: string, apiServerVersion: string | undefined): string | undefined {
  const server = apiServerVersion === undefined ? undefined : parseGitVersion(apiServerVersion);
  if (server === undefined) return "the API server's version is not known yet";
  const kubelet = parseGitVersion(target);
  if (kubelet && compareVersions(kubelet, server) > 0)
    return `kubelet ${target} would be newer than the API server, which reports ${format(server)}: the pool waits for the control plane`;
  return undefined;
}

/** A kubelet's reported version is the target when they are the same release (build metadata aside). */
export function sameVersion(reported: string | undefined, target: string): boolean {
  const a = reported === undefined ? undefined : parseGitVersion(reported);
  const b = parseGitVersion(target);
  return a !== undefined && b !== undefined && compareVersions(a, b) === 0;
}

function seconds(ms: number): string {
  return `${Math.round(ms / 1000)}s`;
}
