import { explainAffinityMismatch, NOT_IN_CLUSTER_NAMES } from "../../model/cluster-affinity.js";
import type { ClusterAffinity as Affinity } from "../../model/types.js";
import { type FilterPlugin, SUCCESS } from "../framework.js";

/** Only clusters the Placement's clusterAffinity selects (names, exclusions, labels, provider/region/zone). */
export const ClusterAffinity: FilterPlugin = {
  name: "ClusterAffinity",
  scopes: true,
  filter: ({ problem }, cluster) => {
    const affinity = problem.placement.clusterAffinity;
    const empty = emptyRequirement(affinity);
    if (empty)
      return { status: "Error", message: `fieldSelector ${empty.key} ${empty.operator} needs values` };
    const reason = affinity === undefined ? undefined : explainAffinityMismatch(affinity, cluster);
    return reason === undefined ? SUCCESS : { status: "Unschedulable", reason };
  },
  // clusterNames is checked first: a cluster it does not list is removed for that, whatever else holds.
  onlyNamed: ({ problem }) => {
    const affinity = problem.placement.clusterAffinity;
    const names = affinity?.clusterNames ?? [];
    // An affinity in error must reach filter(), which says so.
    if (names.length === 0 || emptyRequirement(affinity)) return undefined;
    return { names, reason: NOT_IN_CLUSTER_NAMES };
  },
};

function emptyRequirement(affinity: Affinity | undefined) {
  return affinity?.fieldSelector?.matchExpressions?.find((r) => (r.values ?? []).length === 0);
}
