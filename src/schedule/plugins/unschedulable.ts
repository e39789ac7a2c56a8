import { type FilterPlugin, SUCCESS } from "../framework.js";

/** A cordoned cluster (spec.unschedulable) keeps its replicas and never grows. */
export const Unschedulable: FilterPlugin = {
  name: "Unschedulable",
  passesAny: (cluster) => !cluster.unschedulable,
  filter: (_context, cluster) =>
    cluster.unschedulable
      ? { status: "Unschedulable", reason: "cluster cordoned", keepsExisting: true }
      : SUCCESS,
};
