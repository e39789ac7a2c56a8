/**
 * The built-in plugins per stage, in their default order. Pure data, so the fleet repo validator can
 * check scheduler profiles in fleet.yaml without loading the scheduler.
 */
export const DEFAULT_PLUGINS = {
  filter: [
    "ClusterReady",
    "Unschedulable",
    "TaintToleration",
    "ClusterAffinity",
    "APIEnablement",
    "SpreadConstraint",
  ],
  score: ["ClusterLocality", "AvailableCapacity"],
  select: ["SpreadConstraints", "MaxClusters"],
  replicas: ["ReplicaDivision"],
} as const satisfies Record<string, readonly string[]>;
