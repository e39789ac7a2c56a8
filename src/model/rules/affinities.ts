import type { ClusterAffinity, FleetModel, Origin } from "../types.js";
import type { Path } from "./rule.js";

/** One ClusterAffinity written somewhere in the repo, with where it was written. */
export interface AffinityAt {
  readonly origin: Origin;
  readonly path: Path;
  readonly affinity: ClusterAffinity;
}

/** Every ClusterAffinity in Placements (affinity, overflow tiers, weight rules, limits) and Override rules. */
export function clusterAffinitiesOf(model: FleetModel): AffinityAt[] {
  const out: AffinityAt[] = [];
  const add = (origin: Origin, path: Path, affinity: ClusterAffinity | undefined) => {
    if (affinity) out.push({ origin, path, affinity });
  };
  for (const { origin, spec } of model.placements) {
    add(origin, ["spec", "clusterAffinity"], spec.clusterAffinity);
    for (const [i, tier] of (spec.overflow?.tiers ?? []).entries())
      add(origin, ["spec", "overflow", "tiers", i, "clusterAffinity"], tier.clusterAffinity);
    const scheduling = ["spec", "replicaScheduling"];
    for (const [i, rule] of (spec.replicaScheduling?.weightPreference?.staticWeightList ?? []).entries()) {
      add(
        origin,
        [...scheduling, "weightPreference", "staticWeightList", i, "targetCluster"],
        rule.targetCluster,
      );
    }
    for (const [i, limit] of (spec.replicaScheduling?.clusterLimits ?? []).entries()) {
      add(origin, [...scheduling, "clusterLimits", i, "targetCluster"], limit.targetCluster);
    }
  }
  for (const { origin, spec } of model.overrides) {
    for (const [i, rule] of spec.overrideRules.entries()) {
      add(origin, ["spec", "overrideRules", i, "targetCluster"], rule.targetCluster);
    }
  }
  return out;
}
