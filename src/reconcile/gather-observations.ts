import type { RoundOutcome } from "../autoscale/autoscaling-round.js";
import type { ClusterCapacity } from "../model/node-capacity.js";
import type {
  EntryPoints,
  ObservedCondition,
  ObservedReplicas,
  ObservedState,
  TimedTaint,
} from "../model/observed-state.js";
import type { ServedApis } from "../model/served-apis.js";
import type { RestoreOverlay } from "../model/types.js";

/** A probed cluster as the prober keeps it: its health and the taints that health adds. */
export interface ProbedCluster {
  readonly health: { readonly ready: boolean; readonly reason?: string; readonly since: number };
  readonly taints: readonly TimedTaint[];
}

/** What a caller could observe; whatever it could not is left out (and counts as nothing observed). */
export interface Observations {
  /** Milliseconds since the epoch: the time decisions are made at. */
  readonly now: number;
  /** Probed clusters (the controller; a plan probes nothing). */
  readonly probes?: ReadonlyMap<string, ProbedCluster>;
  /** Per workload identity and cluster, the replicas the members and agents report. */
  readonly workloads?: ReadonlyMap<string, ReadonlyMap<string, ObservedReplicas>>;
  /** Per cluster, its nodes as last read (push-mode syncs, agents' reports, or the status branch). */
  readonly capacity?: ReadonlyMap<string, ClusterCapacity>;
  /** Per cluster, what its discovery says it serves. */
  readonly served?: ReadonlyMap<string, ServedApis>;
  /** Per cluster, its LoadBalancer Services' addresses. */
  readonly entryPoints?: ReadonlyMap<string, EntryPoints>;
  /** The autoscalers' totals, distributions and held divisions: a round's, or as the status branch records them. */
  readonly scaling?: Pick<RoundOutcome, "autoscaled" | "distributed" | "held">;
  /** Per hosted cluster, the version a started ControlPlaneUpgrade batch gives it. */
  readonly controlPlaneVersions?: ReadonlyMap<string, string>;
  /** Per hosted cluster, where its etcd restore stands. */
  readonly controlPlaneRestores?: ReadonlyMap<string, RestoreOverlay>;
}

/**
 * The observed state the render takes, from what was observed — one function for the controller
 * (probes, member reports, the autoscaling round) and `gitfleet plan` (the autoscalers' standing
 * totals from the status branch), so a plan renders with the inputs the controller would. Pure.
 */
export function gatherObservedState(observations: Observations): ObservedState {
  const clusters = new Map<string, ObservedCondition>();
  for (const [cluster, { health, taints }] of observations.probes ?? [])
    clusters.set(cluster, {
      ready: health.ready,
      ...(health.reason ? { reason: health.reason } : {}),
      since: health.since,
      taints,
    });
  const { scaling } = observations;
  return {
    now: observations.now,
    clusters,
    workloads: observations.workloads ?? new Map(),
    ...nonEmpty("capacity", observations.capacity),
    ...nonEmpty("served", observations.served),
    ...nonEmpty("entryPoints", observations.entryPoints),
    ...(scaling
      ? { autoscaled: scaling.autoscaled, distributed: scaling.distributed, held: scaling.held }
      : {}),
    ...nonEmpty("controlPlaneVersions", observations.controlPlaneVersions),
    ...nonEmpty("controlPlaneRestores", observations.controlPlaneRestores),
  };
}

// A map observed with something in it, under its name; nothing for an absent or empty one.
function nonEmpty<K extends string, V>(
  key: K,
  map: ReadonlyMap<string, V> | undefined,
): { [P in K]?: ReadonlyMap<string, V> } {
  return map && map.size > 0 ? ({ [key]: map } as { [P in K]: ReadonlyMap<string, V> }) : {};
}
