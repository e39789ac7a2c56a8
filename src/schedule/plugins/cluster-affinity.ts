import { explainAffinityMismatch } from "../../model/cluster-affinity.js";
import { type FilterPlugin, SUCCESS } from "../framework.js";

/** Only clusters the Placement's clusterAffinity selects (names, exclusions, labels, provider/region/zone). */
export const ClusterAffinity: FilterPlugin = {
  name: "ClusterAffinity",
  scopes: true,
  filter: ({ problem }, cluster) => {
    const affinity = problem.placement.clusterAffinity;
    const empty = affinity?.fieldSelector?.matchExpressions?.find((r) => (r.values ?? []).length === 0);
    if (empty)
      return { status: "Error", message: `fieldSelector ${empty.key} ${empty.operator} needs values` };
    const reason = affinity === undefined ? undefined : explainAffinityMismatch(affinity, cluster);
    return reason === undefined ? SUCCESS : { status: "Unschedulable", reason };
  },
};
