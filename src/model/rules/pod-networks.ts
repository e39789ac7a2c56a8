import { DEFAULT_SERVICE_CIDR } from "../controlplane/hosted-control-plane.js";
import { cidrsOverlap, parseIpv4Cidr } from "../ipv4-cidr.js";
import type { Cluster, ControlPlaneClass } from "../types.js";
import type { RuleContext } from "./rule.js";

/** The prefix of each node's share of a class's pod range (kube-controller-manager --node-cidr-mask-size). */
export const NODE_MASK_BITS = 24;
/** The widest and the narrowest pod range a class may give (a /22 leaves four nodes). */
const WIDEST_BITS = 8;
const NARROWEST_BITS = 22;

/**
 * A class's pod network (addons.cni) must be one kube-controller-manager can divide and kube-proxy
 * can tell apart: an IPv4 range named by its first address, /8 to /22, overlapping neither the
 * class's Service range nor that of any cluster of the class; and every hosted cluster of the class
 * must fit its node pools' nodes into it, a /24 each.
 */
export function checkPodNetworks(context: RuleContext): void {
  for (const found of context.model.controlPlaneClasses)
    if (found.spec.addons?.cni) checkPodNetwork(context, found);
}

function checkPodNetwork(context: RuleContext, found: ControlPlaneClass): void {
  const podCIDR = found.spec.addons?.cni?.podCIDR ?? "";
  const at = (message: string) =>
    context.reporter.report({
      origin: found.origin,
      path: ["spec", "addons", "cni", "podCIDR"],
      code: "INVALID_FIELD_COMBINATION",
      message,
    });
  const range = parseIpv4Cidr(podCIDR);
  if (!range) {
    at(`podCIDR ${podCIDR} is not an IPv4 range`);
    return;
  }
  if (range.hostBitsSet)
    at(`podCIDR ${podCIDR} names an address inside its range; write the range's first address`);
  if (range.bits < WIDEST_BITS || range.bits > NARROWEST_BITS) {
    at(
      `podCIDR ${podCIDR} is a /${range.bits}: a pod range is /${WIDEST_BITS} to /${NARROWEST_BITS}, each node taking a /${NODE_MASK_BITS} of it`,
    );
    return;
  }
  const clusters = context.model.clusters.filter((c) => c.spec.controlPlane?.class === found.metadata.name);
  for (const service of serviceRanges(found, clusters)) {
    const other = parseIpv4Cidr(service);
    if (other && cidrsOverlap(range, other))
      at(
        `podCIDR ${podCIDR} overlaps the Service range ${service}: pods and Services need addresses of their own`,
      );
  }
  for (const cluster of clusters) checkRoom(context, cluster, found, 2 ** (NODE_MASK_BITS - range.bits));
}

// The Service ranges of a class's clusters: the class's, and each cluster's own.
function serviceRanges(found: ControlPlaneClass, clusters: readonly Cluster[]): Set<string> {
  const ranges = new Set([found.spec.serviceCIDR ?? DEFAULT_SERVICE_CIDR]);
  for (const cluster of clusters) {
    const own = cluster.spec.controlPlane?.serviceCIDR;
    if (own) ranges.add(own);
  }
  return ranges;
}

// A hosted cluster whose pools ask for more nodes than its class's pod range has /24s for.
function checkRoom(context: RuleContext, cluster: Cluster, found: ControlPlaneClass, room: number): void {
  const pools = cluster.spec.controlPlane?.nodePools ?? [];
  const nodes = pools.reduce((sum, pool) => sum + pool.replicas, 0);
  if (nodes <= room) return;
  context.reporter.report({
    origin: cluster.origin,
    path: ["spec", "controlPlane", "nodePools"],
    code: "INVALID_FIELD_COMBINATION",
    message: `the node pools ask for ${nodes} nodes, but class ${found.metadata.name}'s podCIDR ${found.spec.addons?.cni?.podCIDR} has room for ${room} (a /${NODE_MASK_BITS} each)`,
  });
}
