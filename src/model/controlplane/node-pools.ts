import { parseDuration } from "../duration.js";
import type { Labels, NodePoolSpec, NodeTaint } from "../types.js";

/** The label every node of a pool carries: the pool's name. */
export const NODE_POOL_LABEL = "gitfleet.io/node-pool";
/** The join token a pool gets unless it says: kubeadm's default lifetime. */
export const DEFAULT_TOKEN_TTL = "24h";
/** The shortest join token lifetime a pool may ask for. */
export const MIN_TOKEN_TTL_MS = 10_000;
/** How long a node may take from cordon to reporting its new kubelet version Ready, unless the pool says. */
export const DEFAULT_PROGRESS_DEADLINE = "10m";
/** How long a node stays NotReady before it is removed for repair, unless the pool says. */
export const DEFAULT_NOT_READY_FOR = "5m";
/** The shortest notReadyFor a pool may ask for. */
export const MIN_NOT_READY_FOR_MS = 10_000;
/** The share of a pool that may be NotReady for repair to go on, unless the pool says. */
export const DEFAULT_MAX_UNHEALTHY = "40%";

/** A pool of a hosted cluster's worker nodes with every default applied. */
export interface ResolvedNodePool {
  readonly name: string;
  readonly replicas: number;
  readonly kubeletVersion: string;
  /** The pool's labels with gitfleet.io/node-pool=<name>. */
  readonly labels: Labels;
  readonly taints: readonly NodeTaint[];
  readonly tokenTTL: string;
  /** The extra group the pool's bootstrap tokens authenticate in (and the RBAC for joining names). */
  readonly bootstrapGroup: string;
  /** Nodes unavailable at once during an upgrade: a count or a percentage of the pool's nodes. */
  readonly maxUnavailable: number | string;
  readonly progressDeadlineMs: number;
  readonly repair: {
    readonly enabled: boolean;
    readonly notReadyForMs: number;
    /** A count or a percentage of the pool's nodes. */
    readonly maxUnhealthy: number | string;
  };
}

/** The node pools of a hosted cluster whose API server runs `apiServerVersion`. */
export function resolveNodePools(
  pools: readonly NodePoolSpec[] | undefined,
  apiServerVersion: string,
): ResolvedNodePool[] {
  return (pools ?? []).map((pool) => ({
    name: pool.name,
    replicas: pool.replicas,
    kubeletVersion: pool.kubeletVersion ?? apiServerVersion,
    labels: { ...(pool.labels ?? {}), [NODE_POOL_LABEL]: pool.name },
    taints: pool.taints ?? [],
    tokenTTL: pool.join?.tokenTTL ?? DEFAULT_TOKEN_TTL,
    bootstrapGroup: bootstrapGroupOf(pool.name),
    maxUnavailable: pool.upgrade?.maxUnavailable ?? 1,
    progressDeadlineMs: durationMs(pool.upgrade?.progressDeadline, DEFAULT_PROGRESS_DEADLINE),
    repair: {
      enabled: pool.repair?.enabled ?? true,
      notReadyForMs: durationMs(pool.repair?.notReadyFor, DEFAULT_NOT_READY_FOR),
      maxUnhealthy: pool.repair?.maxUnhealthy ?? DEFAULT_MAX_UNHEALTHY,
    },
  }));
}

// A duration as written (validated by the schema), or the default's.
function durationMs(text: string | undefined, fallback: string): number {
  return parseDuration(text ?? fallback) ?? (parseDuration(fallback) as number);
}

/** system:bootstrappers:gitfleet:<pool>: what a pool's join tokens say about who joins with them. */
export function bootstrapGroupOf(pool: string): string {
  return `system:bootstrappers:gitfleet:${pool}`;
}

// What the NodeRestriction admission plugin lets a kubelet set on its own Node (k8s.io/kubelet's
// apis/well_known_labels.go): in kubernetes.io and k8s.io only these keys and these two namespaces.
const KUBELET_LABELS = new Set([
  "kubernetes.io/hostname",
  "kubernetes.io/arch",
  "kubernetes.io/os",
  "beta.kubernetes.io/instance-type",
  "node.kubernetes.io/instance-type",
  "beta.kubernetes.io/os",
  "beta.kubernetes.io/arch",
  "failure-domain.beta.kubernetes.io/zone",
  "failure-domain.beta.kubernetes.io/region",
  "topology.kubernetes.io/zone",
  "topology.kubernetes.io/region",
]);
const KUBELET_LABEL_NAMESPACES = ["kubelet.kubernetes.io", "node.kubernetes.io"];

/** Why a kubelet may not register with this label (NodeRestriction refuses it), or undefined. */
export function explainNodeLabel(key: string): string | undefined {
  const slash = key.indexOf("/");
  if (slash < 0) return undefined;
  const domain = key.slice(0, slash);
  const restricted = ["kubernetes.io", "k8s.io"].some((d) => domain === d || domain.endsWith(`.${d}`));
  if (!restricted || KUBELET_LABELS.has(key)) return undefined;
  if (KUBELET_LABEL_NAMESPACES.some((d) => domain === d || domain.endsWith(`.${d}`))) return undefined;
  return `a kubelet may not set labels under ${domain} on its own Node (the NodeRestriction admission plugin refuses them); only kubelet.kubernetes.io/, node.kubernetes.io/ and the well-known topology, os and arch labels`;
}
