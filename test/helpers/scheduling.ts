import type { PlacementSpec } from "../../src/model/types.js";
import type { SchedulingContext } from "../../src/schedule/framework.js";
import type { ClusterState, SchedulingProblem } from "../../src/schedule/types.js";

/** A ready, untainted cluster with no location, overridden by `fields`. */
export function cluster(name: string, fields: Partial<ClusterState> = {}): ClusterState {
  return {
    name,
    labels: {},
    provider: "",
    region: "",
    zone: "",
    taints: [],
    unschedulable: false,
    ready: true,
    currentReplicas: 0,
    ...fields,
  };
}

/** A scheduling problem with sensible defaults. */
export function problem(
  placement: PlacementSpec,
  clusters: readonly ClusterState[],
  replicas = 10,
  extra: Partial<SchedulingProblem> = {},
): SchedulingProblem {
  return {
    workload: { apiVersion: "apps/v1", kind: "Deployment", namespace: "shop", name: "web" },
    replicas,
    placement,
    clusters,
    ...extra,
  };
}

/** The context a plugin sees for a problem. */
export function contextOf(p: SchedulingProblem): SchedulingContext {
  return {
    problem: p,
    order: "ascending",
    divided:
      p.placement.replicaScheduling !== undefined &&
      (p.placement.replicaScheduling.type ?? "Divided") === "Divided",
  };
}

/** A Divided placement with equal weights. */
export const DIVIDED: PlacementSpec = { replicaScheduling: { type: "Divided" } };
