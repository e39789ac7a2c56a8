import { type ClusterPlan, hasChanges, type Plan } from "./plan.js";

/**
 * A plan as a team's member sees it: only what changes for the apps they may see — those apps'
 * objects per cluster (with the cluster's deletion-budget verdict while any of their removals are
 * in it), their workloads' scheduling notes, replica distributions and hook conflicts. What belongs
 * to the fleet as a whole — hosted control planes, migrations, upgrades, exported services, sync
 * timing, warnings at other teams' files — is the platform team's and left out. Pure.
 */
export function planForApps(plan: Plan, seesApp: (app: string) => boolean): Plan {
  const clusters = plan.clusters.map((cluster) => clusterForApps(cluster, seesApp)).filter(hasChanges);
  const distributions = plan.distributions.filter((d) => seesApp(d.app));
  const hookConflicts = (plan.hookConflicts ?? []).filter((c) => seesApp(c.app));
  return {
    clusters,
    distributions,
    ...(hookConflicts.length > 0 ? { hookConflicts } : {}),
    changed: clusters.length > 0 || distributions.length > 0,
  };
}

function clusterForApps(cluster: ClusterPlan, seesApp: (app: string) => boolean): ClusterPlan {
  const removed = cluster.removed.filter((c) => seesApp(c.app));
  const { pruneBlocked, pruneAllowedBy, ...rest } = cluster;
  return {
    ...rest,
    added: cluster.added.filter((c) => seesApp(c.app)),
    changed: cluster.changed.filter((c) => seesApp(c.app)),
    removed,
    filteredOut: cluster.filteredOut.filter((n) => seesApp(n.app)),
    frozen: cluster.frozen.filter((n) => seesApp(n.app)),
    ...(removed.length > 0 && pruneBlocked ? { pruneBlocked } : {}),
    ...(removed.length > 0 && pruneAllowedBy ? { pruneAllowedBy } : {}),
  };
}
