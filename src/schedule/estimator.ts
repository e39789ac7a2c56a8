import { asList, asMap, valueAt } from "../apimachinery/json.js";
import { matchesRequirement } from "../apimachinery/label-selector.js";
import { parseMilliQuantity, parseQuantity } from "../apimachinery/quantity.js";
import type { Labels, Toleration } from "../model/types.js";
import { tolerates } from "./plugins/taint-toleration.js";
import type { ClusterState, NodeState, ResourceList } from "./types.js";

/** What one replica needs from a node: resource requests, and where it may run. */
export interface PodRequirements {
  /** Requests per resource, cpu in milli-cores, everything else in base units. */
  readonly requests: ReadonlyMap<string, number>;
  readonly tolerations: readonly Toleration[];
  readonly nodeSelector: Labels;
  /** Required node affinity: a node must match at least one term (each term's expressions ANDed). */
  readonly nodeAffinityTerms: readonly (readonly NodeSelectorRequirement[])[];
  /** Identifies the pod shape, so estimates are shared by workloads with the same one. */
  readonly key: string;
}

/** One node selector requirement (Kubernetes NodeSelectorRequirement). */
export interface NodeSelectorRequirement {
  readonly key: string;
  readonly operator: string;
  readonly values?: readonly string[];
}

/**
 * How many more replicas a cluster can fit (Karmada's estimator, at node level). Per node: the
 * minimum over requested resources (and one pod slot) of floor(free / request), counting only Ready,
 * schedulable nodes whose taints the pod tolerates and whose labels match its node selector and
 * required affinity; summed over nodes. Without nodes, the cluster-wide summary as one node; without
 * either, the given fallback (an observed count); undefined
 * means unknown, which the scheduler treats as unlimited.
 */
export function estimateFreeReplicas(
  cluster: ClusterState,
  pod: PodRequirements,
  fallback: number | undefined,
): number | undefined {
  let total: number;
  if (cluster.nodes !== undefined) {
    total = 0;
    for (const node of cluster.nodes) {
      const fit = nodeFit(node, pod);
      if (fit > 0) total += fit * (node.count ?? 1);
    }
  } else if (cluster.summary !== undefined) {
    // Totals know no node boundaries, taints or labels: this can over-promise, as Karmada's does.
    total = resourceFit(cluster.summary, pod);
  } else {
    return fallback;
  }
  return Number.isFinite(total) ? total : undefined;
}

/** How many more replicas fit (undefined: unlimited) and the resource that bounds them. */
export interface FreeEstimate {
  readonly fits: number | undefined;
  /** cpu, memory, pods, nvidia.com/gpu…: what bounds most usable nodes; undefined when nothing does. */
  readonly limit: string | undefined;
}

/**
 * estimateFreeReplicas with what bounds the estimate, from the cluster's nodes or its summary;
 * undefined without either. As fast as the estimate alone: one pass, a tally of a few resources.
 */
export function estimateFit(cluster: ClusterState, pod: PodRequirements): FreeEstimate | undefined {
  if (cluster.nodes !== undefined) return nodesFit(cluster.nodes, pod);
  if (cluster.summary === undefined) return undefined;
  // Totals know no node boundaries, taints or labels: this can over-promise, as Karmada's does.
  const { fit, limit } = boundedFit(cluster.summary, pod);
  return Number.isFinite(fit) ? { fits: fit, limit } : UNLIMITED;
}

const UNLIMITED: FreeEstimate = Object.freeze({ fits: undefined, limit: undefined });

// Summed over usable nodes, with a tally of what bounds each (a pod requests a few resources).
function nodesFit(nodes: readonly NodeState[], pod: PodRequirements): FreeEstimate {
  let total = 0;
  const tally: [string, number][] = [];
  for (const node of nodes) {
    if (node.unschedulable || node.ready === false || !fitsPlacement(node, pod)) continue;
    const count = node.count ?? 1;
    const { fit, limit } = boundedFit(node, pod);
    if (fit > 0) total += fit * count;
    if (limit !== undefined) countInto(tally, limit, count);
  }
  return Number.isFinite(total) ? { fits: total, limit: mostCounted(tally) } : UNLIMITED;
}

function countInto(tally: [string, number][], key: string, count: number): void {
  const entry = tally.find(([resource]) => resource === key);
  if (entry) entry[1] += count;
  else tally.push([key, count]);
}

// The key counted most; a tie goes to the first by name.
function mostCounted(tally: readonly [string, number][]): string | undefined {
  let best: readonly [string, number] | undefined;
  for (const entry of tally)
    if (!best || entry[1] > best[1] || (entry[1] === best[1] && entry[0] < best[0])) best = entry;
  return best?.[0];
}

// Parsed free amounts per node: quantities are parsed once, not once per workload.
const freeByNode = new WeakMap<object, Map<string, number>>();

function podKey(pod: Omit<PodRequirements, "key">): string {
  return JSON.stringify([
    [...pod.requests],
    pod.tolerations,
    Object.entries(pod.nodeSelector),
    pod.nodeAffinityTerms,
  ]);
}

function nodeFit(node: NodeState, pod: PodRequirements): number {
  if (node.unschedulable || node.ready === false || !fitsPlacement(node, pod)) return 0;
  return resourceFit(node, pod);
}

// Replicas that fit in the free resources; Infinity when nothing bounds them (no pod count, no requests).
function resourceFit(
  node: Pick<NodeState, "allocatable" | "requested" | "free">,
  pod: PodRequirements,
): number {
  return boundedFit(node, pod).fit;
}

// Allocatable minus requested for one resource, in the units of PodRequirements (0 when absent).
function free(node: Pick<NodeState, "allocatable" | "requested" | "free">, resource: string): number {
  let parsed = freeByNode.get(node);
  if (!parsed) {
    parsed = new Map();
    freeByNode.set(node, parsed);
  }
  const known = parsed.get(resource);
  if (known !== undefined) return known;
  const value =
    node.free !== undefined
      ? amount(node.free, resource)
      : amount(node.allocatable, resource) - amount(node.requested ?? {}, resource);
  parsed.set(resource, value);
  return value;
}

function amount(list: ResourceList, resource: string): number {
  const value = list[resource];
  if (value === undefined) return 0;
  const parsed = resource === "cpu" ? parseMilliQuantity(String(value)) : parseQuantity(String(value));
  return parsed ?? 0;
}

function fitsPlacement(node: NodeState, pod: PodRequirements): boolean {
  const labels = node.labels ?? {};
  for (const taint of node.taints ?? []) {
    if (taint.effect !== "NoSchedule" && taint.effect !== "NoExecute") continue;
    if (!pod.tolerations.some((t) => tolerates(t, taint))) return false;
  }
  for (const [key, value] of Object.entries(pod.nodeSelector)) if (labels[key] !== value) return false;
  if (pod.nodeAffinityTerms.length === 0) return true;
  return pod.nodeAffinityTerms.some((term) =>
    term.every((requirement) => matchesRequirement(requirement, labels)),
  );
}

/** How many more replicas fit on a cluster's nodes, and why not more. */
export interface FitDetail {
  readonly fits: number;
  /** Nodes with room for at least one more replica. */
  readonly nodes: number;
  /** The resource that bounds most nodes (cpu, memory, pods, nvidia.com/gpu…); undefined when none does. */
  readonly limit: string | undefined;
  /** Nodes the pods cannot use at all: NotReady, cordoned, an untolerated taint, labels that do not match. */
  readonly excluded: number;
}

/** The estimate for a list of nodes, with what bounds it: the dashboard's "fits 14 more: cpu on 5 nodes". */
export function fitDetail(nodes: readonly NodeState[], pod: PodRequirements): FitDetail {
  let fits = 0;
  let withRoom = 0;
  let excluded = 0;
  const limits = new Map<string, number>();
  for (const node of nodes) {
    const count = node.count ?? 1;
    if (node.unschedulable || node.ready === false || !fitsPlacement(node, pod)) {
      excluded += count;
      continue;
    }
    const { fit, limit } = boundedFit(node, pod);
    if (fit > 0) {
      fits += fit * count;
      withRoom += count;
    }
    if (limit) limits.set(limit, (limits.get(limit) ?? 0) + count);
  }
  const limit = [...limits].sort(([a, m], [b, n]) => n - m || (a < b ? -1 : 1))[0]?.[0];
  return { fits, nodes: withRoom, limit, excluded };
}

/** "fits 14 more: cpu on 5 nodes", "fits none: memory full", "fits none: no node it may use". */
export function describeFit(detail: FitDetail): string {
  const nodes = (n: number) => `${n} node${n === 1 ? "" : "s"}`;
  if (!Number.isFinite(detail.fits)) return "no limit: its pods request nothing";
  if (detail.fits > 0) return `fits ${detail.fits} more: ${detail.limit ?? "room"} on ${nodes(detail.nodes)}`;
  if (detail.limit) return `fits none: ${detail.limit} full`;
  return `fits none: no node it may use (${nodes(detail.excluded)} tainted, cordoned, NotReady or unmatched)`;
}

// Replicas that fit in the free resources, and the resource that bounds them; Infinity when nothing
// bounds them (no pod count, no requests). A node without a pod count does not limit pods (real
// nodes always report one).
function boundedFit(
  node: Pick<NodeState, "allocatable" | "requested" | "free">,
  pod: PodRequirements,
): { fit: number; limit: string | undefined } {
  let fit = node.allocatable.pods === undefined ? Number.POSITIVE_INFINITY : free(node, "pods");
  let limit: string | undefined = node.allocatable.pods === undefined ? undefined : "pods";
  for (const [resource, request] of pod.requests) {
    if (request <= 0) continue;
    const here = Math.floor(free(node, resource) / request);
    if (here < fit) {
      fit = here;
      limit = resource;
    }
  }
  return { fit: Math.max(0, fit), limit };
}

/**
 * What one replica of a pod template needs. Effective requests follow Kubernetes: the larger of the
 * containers' sum and the largest init container, per resource, plus pod overhead.
 */
export function podRequirements(podTemplate: unknown): PodRequirements {
  const spec = asMap(valueAt(podTemplate, ["spec"]));
  const sum = new Map<string, number>();
  for (const container of asList(valueAt(spec, ["containers"])))
    addInto(sum, requestsOf(container), (a, b) => a + b);
  for (const container of asList(valueAt(spec, ["initContainers"])))
    addInto(sum, requestsOf(container), Math.max);
  addInto(sum, parseList(asMap(valueAt(spec, ["overhead"]))), (a, b) => a + b);
  const affinity = valueAt(spec, [
    "affinity",
    "nodeAffinity",
    "requiredDuringSchedulingIgnoredDuringExecution",
  ]);
  const requirements = {
    requests: sum,
    tolerations: asList(valueAt(spec, ["tolerations"])) as unknown as Toleration[],
    nodeSelector: asMap(valueAt(spec, ["nodeSelector"])) as Labels,
    nodeAffinityTerms: asList(valueAt(affinity, ["nodeSelectorTerms"])).map(
      (term) => asList(valueAt(term, ["matchExpressions"])) as unknown as NodeSelectorRequirement[],
    ),
  };
  return { ...requirements, key: podKey(requirements) };
}

function requestsOf(container: unknown): Map<string, number> {
  return parseList(asMap(valueAt(container, ["resources", "requests"])));
}

function parseList(list: Record<string, unknown>): Map<string, number> {
  const out = new Map<string, number>();
  for (const [resource, value] of Object.entries(list)) {
    const parsed = resource === "cpu" ? parseMilliQuantity(String(value)) : parseQuantity(String(value));
    if (parsed !== undefined) out.set(resource, parsed);
  }
  return out;
}

function addInto(
  target: Map<string, number>,
  source: ReadonlyMap<string, number>,
  combine: (a: number, b: number) => number,
): void {
  for (const [resource, value] of source) target.set(resource, combine(target.get(resource) ?? 0, value));
}
