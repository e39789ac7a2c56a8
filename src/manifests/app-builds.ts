import { matchesLabelSelector } from "../apimachinery/label-selector.js";
import type { ClusterFacts } from "../model/cluster-affinity.js";
import { identityOf } from "../model/identity.js";
import type { App, AppBuilds, BuildTarget, Resource } from "../model/types.js";

// Apps whose objects are built (by kustomize or Helm) rather than read: each cluster gets what its
// target's build made — the first target whose clusterName and clusterSelector match it, as Fleet's
// targetCustomizations — or the default build. Placement and replica division use the default
// build; objects only a target builds go only to the clusters of that target.

/** The target build a cluster gets: the first whose clusterName and clusterSelector match. */
export function targetFor(builds: AppBuilds, cluster: ClusterFacts): BuildTarget | undefined {
  return builds.targets.find((target) => matchesTarget(target, cluster));
}

/** Whether a target (its clusterName and clusterSelector, each when given) is for a cluster. */
export function matchesTarget(
  target: Pick<BuildTarget, "clusterName" | "clusterSelector">,
  cluster: ClusterFacts,
): boolean {
  return (
    (target.clusterName === undefined || target.clusterName === cluster.name) &&
    (target.clusterSelector === undefined || matchesLabelSelector(target.clusterSelector, cluster.labels))
  );
}

/**
 * The body of an app's resource in one cluster: for a built app, the object its cluster's target
 * (or the default) built, or undefined when that build has no such object.
 */
export function resourceForCluster(
  app: App | undefined,
  resource: Resource,
  cluster: ClusterFacts,
): Resource | undefined {
  const builds = app?.builds;
  if (!builds) return resource;
  const objects = targetFor(builds, cluster)?.objects ?? builds.defaults;
  return objects.get(identityOf(resource.group, resource.kind, resource.namespace, resource.name));
}

/** What builds an app's objects for a cluster, for status and plans; undefined for plain manifests. */
export function sourceForCluster(app: App | undefined, cluster: ClusterFacts): string | undefined {
  const builds = app?.builds;
  if (!builds) return undefined;
  return targetFor(builds, cluster)?.source ?? builds.source;
}

/** Every object an app's builds make, by identity: the default build's, then each target's. */
export function allBuilt(
  defaults: ReadonlyMap<string, Resource>,
  targets: readonly BuildTarget[],
): Resource[] {
  const resources = new Map(defaults);
  for (const target of targets)
    for (const [identity, resource] of target.objects)
      if (!resources.has(identity)) resources.set(identity, resource);
  return [...resources.values()];
}
