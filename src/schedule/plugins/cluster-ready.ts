import { type FilterPlugin, SUCCESS } from "../framework.js";

/** A cluster that is not Ready takes no new replicas but keeps the ones it has (they may still be running). */
export const ClusterReady: FilterPlugin = {
  name: "ClusterReady",
  passesAny: (cluster) => cluster.ready,
  filter: (_context, cluster) =>
    cluster.ready ? SUCCESS : { status: "Unschedulable", reason: "cluster not ready", keepsExisting: true },
};
