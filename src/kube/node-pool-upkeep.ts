import { asList, asMap, type JsonMap } from "../apimachinery/json.js";
import type { NodePoolRecord } from "../model/controlplane/credential-record.js";
import type { HostedControlPlane } from "../model/controlplane/hosted-control-plane.js";
import {
  KUBELET_VERSION_ANNOTATION,
  type PoolAction,
  type PoolNode,
  type PoolPlan,
  planNodePool,
  UPGRADE_STARTED_ANNOTATION,
} from "../model/controlplane/node-pool-plan.js";
import { NODE_POOL_LABEL, type ResolvedNodePool } from "../model/controlplane/node-pools.js";
import { oneLine } from "../model/one-line.js";
import { CREDENTIALS_FIELD_MANAGER } from "./hosted-secrets.js";
import { MemberApiError, type MemberClient } from "./member-client.js";

/** The most Nodes of one pool a pass reads; a pool is bounded by its replicas (at most 5,000). */
const MAX_POOL_NODES = 5000;
/** The most pods one pass evicts from one node; the rest go on the next pass. */
export const MAX_EVICTIONS_PER_NODE = 50;
/** The most removed machines the host's node-pool ConfigMap lists. */
export const MAX_REMOVED_LISTED = 20;

/** The host ConfigMap a pool's provisioner reads: node-pool-<pool> in the control plane's namespace. */
export function nodePoolConfigMapName(pool: string): string {
  return `node-pool-${pool}`;
}

/**
 * Keeps a hosted cluster's node pools as the fleet repo says, after the host's sync: repairs (removes
 * Nodes NotReady too long) and moves kubelets to the pool's version a few nodes at a time
 * (model/controlplane/node-pool-plan.ts decides; this reads the Nodes and carries it out), then
 * writes what the pool's provisioner needs into the host's ConfigMap node-pool-<pool>: how many
 * machines are missing, the version they run, and the machines removed.
 */
export async function keepNodePools(
  host: MemberClient,
  hosted: MemberClient,
  plane: HostedControlPlane,
  now: number,
): Promise<NodePoolRecord[]> {
  // Read fresh, not the version the hosted cluster's own sync last read: the host's sync just before
  // this pass may have rolled its API server back, and a kubelet told a version from an older read
  // could end up newer than the API server. One GET per pass with pools.
  const apiServer = await hosted.version().catch(() => undefined);
  const out: NodePoolRecord[] = [];
  for (const pool of plane.nodePools) {
    const nodes = await poolNodes(hosted, pool.name, now);
    const plan = planNodePool(pool, nodes, apiServer, now);
    const told: string[] = [];
    const errors: string[] = [];
    for (const action of plan.actions) {
      try {
        if (await carryOut(hosted, action, now)) told.push(action.node);
      } catch (error) {
        errors.push(
          `${action.kind} ${action.node}: ${oneLine(error instanceof Error ? error.message : String(error))}`,
        );
      }
    }
    await writePoolConfigMap(host, plane, pool, plan, now);
    out.push(poolRecord(plan, told, errors));
  }
  return out;
}

function poolRecord(plan: PoolPlan, told: readonly string[], errors: readonly string[]): NodePoolRecord {
  const { actions, target, ...standing } = plan;
  const nodesOf = (kind: PoolAction["kind"]) => actions.filter((a) => a.kind === kind).map((a) => a.node);
  return {
    ...standing,
    kubeletVersion: target,
    cordoned: nodesOf("cordon"),
    told,
    uncordoned: nodesOf("uncordon"),
    removed: actions.flatMap((a) =>
      a.kind === "remove" ? [{ node: a.node, notReadyForMs: a.notReadyForMs }] : [],
    ),
    errors,
  };
}

async function poolNodes(hosted: MemberClient, pool: string, now: number): Promise<PoolNode[]> {
  const nodes: PoolNode[] = [];
  await hosted.pages("v1", "Node", { labelSelector: `${NODE_POOL_LABEL}=${pool}`, limit: 500 }, (items) => {
    for (const item of items) if (nodes.length < MAX_POOL_NODES) nodes.push(poolNode(item, now));
  });
  return nodes;
}

/** A Node as the plan reads it; what the hosted cluster reports is untrusted and bounded. */
export function poolNode(node: JsonMap, now: number): PoolNode {
  const metadata = asMap(node.metadata);
  const annotations = asMap(metadata.annotations);
  const status = asMap(node.status);
  const ready = asList(status.conditions)
    .map((c) => asMap(c))
    .find((c) => c.type === "Ready");
  const readyStatus = ready?.status === "True" || ready?.status === "False" ? ready.status : "Unknown";
  const since = Date.parse(String(ready?.lastTransitionTime ?? metadata.creationTimestamp ?? ""));
  const started = Date.parse(String(annotations[UPGRADE_STARTED_ANNOTATION] ?? ""));
  const text = (value: unknown) => (typeof value === "string" ? oneLine(value, 64) : undefined);
  return {
    name: oneLine(String(metadata.name ?? ""), 253),
    uid: String(metadata.uid ?? ""),
    kubeletVersion: text(asMap(status.nodeInfo).kubeletVersion),
    ready: readyStatus,
    // A time that does not read is taken as now: a Node is never removed for a time it did not give.
    readySince: Number.isNaN(since) ? now : since,
    told: text(annotations[KUBELET_VERSION_ANNOTATION]),
    upgradeStarted: Number.isNaN(started) ? undefined : started,
  };
}

// Carries one action out; true when a node was told its version.
async function carryOut(hosted: MemberClient, action: PoolAction, now: number): Promise<boolean> {
  const address = { apiVersion: "v1", kind: "Node", namespace: undefined, name: action.node };
  switch (action.kind) {
    case "cordon":
      await hosted.mergePatch(
        address,
        {
          metadata: { annotations: { [UPGRADE_STARTED_ANNOTATION]: new Date(now).toISOString() } },
          spec: { unschedulable: true },
        },
        CREDENTIALS_FIELD_MANAGER,
      );
      return false;
    case "drain": {
      if ((await evictPods(hosted, action.node)) > 0 || action.told) return false;
      await hosted.mergePatch(
        address,
        { metadata: { annotations: { [KUBELET_VERSION_ANNOTATION]: action.version } } },
        CREDENTIALS_FIELD_MANAGER,
      );
      return true;
    }
    case "uncordon":
      await hosted.mergePatch(
        address,
        { metadata: { annotations: { [UPGRADE_STARTED_ANNOTATION]: null } }, spec: { unschedulable: false } },
        CREDENTIALS_FIELD_MANAGER,
      );
      return false;
    case "remove":
      await hosted.delete(address, action.uid);
      return false;
  }
}

/**
 * Evicts the node's pods as `kubectl drain` does — through the Eviction API, so PodDisruptionBudgets
 * hold (a refused eviction waits for the next pass) — leaving DaemonSet pods, mirror pods and pods
 * that have ended. Returns how many are still to go: those to evict and those still terminating (a
 * drain waits until they are gone).
 */
async function evictPods(hosted: MemberClient, node: string): Promise<number> {
  const pods: JsonMap[] = [];
  let terminating = 0;
  await hosted.pages("v1", "Pod", { fieldSelector: `spec.nodeName=${node}`, limit: 500 }, (items) => {
    for (const pod of items) {
      if (!drained(pod)) continue;
      if (asMap(pod.metadata).deletionTimestamp === undefined) pods.push(pod);
      else terminating++;
    }
  });
  for (const pod of pods.slice(0, MAX_EVICTIONS_PER_NODE)) {
    const metadata = asMap(pod.metadata);
    const namespace = encodeURIComponent(String(metadata.namespace ?? ""));
    const name = encodeURIComponent(String(metadata.name ?? ""));
    await hosted
      .raw("POST", `/api/v1/namespaces/${namespace}/pods/${name}/eviction`, {
        apiVersion: "policy/v1",
        kind: "Eviction",
        metadata: { name: metadata.name, namespace: metadata.namespace },
      })
      .catch((error: unknown) => {
        // 429: a PodDisruptionBudget says not now; 404: gone already. Anything else fails the pass.
        if (!(error instanceof MemberApiError && (error.code === 429 || error.code === 404))) throw error;
      });
  }
  return pods.length + terminating;
}

// A pod a drain takes off the node: not a DaemonSet's or a mirror pod, and not ended.
function drained(pod: JsonMap): boolean {
  const metadata = asMap(pod.metadata);
  if (asMap(metadata.annotations)["kubernetes.io/config.mirror"] !== undefined) return false;
  if (asList(metadata.ownerReferences).some((o) => asMap(o).kind === "DaemonSet")) return false;
  const phase = asMap(pod.status).phase;
  return phase !== "Succeeded" && phase !== "Failed";
}

/** One removed machine as the node-pool ConfigMap lists it. */
interface RemovedMachine {
  readonly node: string;
  readonly at: string;
}

async function writePoolConfigMap(
  host: MemberClient,
  plane: HostedControlPlane,
  pool: ResolvedNodePool,
  plan: PoolPlan,
  now: number,
): Promise<void> {
  const name = nodePoolConfigMapName(pool.name);
  const live = await host.get({ apiVersion: "v1", kind: "ConfigMap", namespace: plane.namespace, name });
  const removed = [
    ...plan.actions
      .filter((a) => a.kind === "remove")
      .map((a) => ({ node: a.node, at: new Date(now).toISOString() })),
    ...removedListed(asMap(live?.data).removed),
  ].slice(0, MAX_REMOVED_LISTED);
  await host.apply(
    {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: {
        name,
        namespace: plane.namespace,
        labels: { [NODE_POOL_LABEL]: pool.name, "gitfleet.io/hosted-cluster": plane.cluster },
      },
      data: {
        replicas: String(pool.replicas),
        "kubelet-version": pool.kubeletVersion,
        nodes: String(plan.nodes),
        "up-to-date": String(plan.upToDate),
        missing: String(plan.missing),
        removed: JSON.stringify(removed),
      },
    },
    true,
    CREDENTIALS_FIELD_MANAGER,
  );
}

// The removed machines the ConfigMap listed before (gitfleet wrote them; read back bounded).
function removedListed(value: unknown): RemovedMachine[] {
  if (typeof value !== "string" || value.length > 64 * 1024) return [];
  try {
    return asList(JSON.parse(value))
      .map((entry) => asMap(entry))
      .filter((e) => typeof e.node === "string" && typeof e.at === "string")
      .map((e) => ({ node: oneLine(String(e.node), 253), at: oneLine(String(e.at), 40) }))
      .slice(0, MAX_REMOVED_LISTED);
  } catch {
    return [];
  }
}
