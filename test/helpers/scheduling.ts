import type { PlacementSpec } from "../../src/model/types.js";
import type { SchedulingContext } from "../../src/schedule/framework.js";
import type { ClusterState, SchedulingProblem } from "../../src/schedule/types.js";

/** A cluster as tests write it: shared state plus this workload's counts (as `gitfleet schedule` takes them). */
export type ClusterInput = ClusterState & {
  readonly currentReplicas?: number;
  readonly availableReplicas?: number;
};

/** A ready, untainted cluster with no location, overridden by `fields`. */
export function cluster(name: string, fields: Partial<ClusterInput> = {}): ClusterInput {
  return {
    name,
    labels: {},
    provider: "",
    region: "",
    zone: "",
    taints: [],
    unschedulable: false,
    ready: true,
    ...fields,
  };
}

/** A scheduling problem with sensible defaults; per-cluster counts move into `current` and `available`. */
export function problem(
  placement: PlacementSpec,
  clusters: readonly ClusterInput[],
  replicas = 10,
  extra: Partial<SchedulingProblem> = {},
): SchedulingProblem {
  const counts = (field: "currentReplicas" | "availableReplicas") =>
    Object.fromEntries(clusters.flatMap((c) => (c[field] === undefined ? [] : [[c.name, c[field]]])));
  return {
    workload: { apiVersion: "apps/v1", kind: "Deployment", namespace: "shop", name: "web" },
    replicas,
    placement,
    clusters: clusters.map(({ currentReplicas: _c, availableReplicas: _a, ...state }) => state),
    current: counts("currentReplicas"),
    available: counts("availableReplicas"),
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
