import type { ClusterCapacity } from "./node-capacity.js";
import type { ServedApis } from "./served-apis.js";
import type { HostedPlaneStates, RestoreOverlay, Taint } from "./types.js";

// What the controller has observed of the members, as the render reads it. The render stays a pure
// function: the same fleet, previous render and observations give the same output.

/** A probed cluster's condition and the taints it adds. */
export interface ObservedCondition {
  readonly ready: boolean;
  /** Why it is NotReady: it answered unready (NotReady) or not at all (Unreachable). */
  readonly reason?: string;
  /** When the condition last changed (ms since the epoch). */
  readonly since: number;
  readonly taints: readonly TimedTaint[];
}

/** One workload in one member, as the last sync saw it. */
export interface ObservedReplicas {
  /** The replicas the member's object asks for. */
  readonly desired: number;
  readonly ready: number;
  /** Pods Pending with PodScheduled=False, reason Unschedulable. */
  readonly unschedulable: number;
  /** Since when (ms) some of its pods have been unschedulable without a break, when they are. */
  readonly unschedulableSince?: number;
  /** A HorizontalPodAutoscaler in the member owns the count: `desired` is the HPA's, not gitfleet's. */
  readonly scaledByHpa?: boolean;
  /** Pods that cannot run: CrashLoopBackOff, ImagePullBackOff, ErrImagePull, or all of them past the progress deadline. */
  readonly degraded?: number;
  /** Why, in the member's words ("CrashLoopBackOff"). */
  readonly degradedReason?: string;
  /** Since when (ms) some of its pods have been degraded without a break, when they are. */
  readonly degradedSince?: number;
  /** The labels the workload's statePreservation rules read from its status there now. */
  readonly state?: Readonly<Record<string, string>>;
}

/** One member's Services' entry points: "namespace/name" → LoadBalancer ingress IPs or hostnames. */
export type EntryPoints = ReadonlyMap<string, readonly string[]>;

/** Everything observed that failover decisions read, and the time they are made at. */
export interface ObservedState {
  /** Milliseconds since the epoch. */
  readonly now: number;
  /** Probed clusters; a cluster not in the map counts as Ready. */
  readonly clusters: ReadonlyMap<string, ObservedCondition>;
  /** Per workload identity (group/kind/namespace/name), per cluster. */
  readonly workloads: ReadonlyMap<string, ReadonlyMap<string, ObservedReplicas>>;
  /**
   * Per workload identity: the global total a FederatedHPA decided, which replaces the replicas of
   * the source; the Placement divides it as it divides any total.
   */
  readonly autoscaled?: ReadonlyMap<string, Autoscaled>;
  /**
   * Per workload identity a distributed FederatedHPA scales: the members' replicas as last recorded
   * (the distribution its bounds are split by) and bounds a CronScale rule set.
   */
  readonly distributed?: ReadonlyMap<string, DistributedScaling>;
  /** Per workload identity: the division a targeted scale-down holds while the total is its own. */
  readonly held?: ReadonlyMap<string, HeldDivision>;
  /**
   * Per cluster, its nodes as the last reading recorded them (push-mode syncs, pull-mode agents, or
   * the status branch): the scheduler's estimator counts what fits from them. A cluster not in the
   * map has unknown capacity, which counts as unlimited.
   */
  readonly capacity?: ReadonlyMap<string, ClusterCapacity>;
  /** Per cluster, what its discovery says it serves; a cluster not in the map serves everything (unknown). */
  readonly served?: ReadonlyMap<string, ServedApis>;
  /**
   * Per cluster, the entry points of its Services that gitfleet reads (exported ones, the fleet's
   * gateway): "namespace/name" → the LoadBalancer ingress addresses, as last recorded.
   */
  readonly entryPoints?: ReadonlyMap<string, EntryPoints>;
  /**
   * Per hosted cluster, the version a started ControlPlaneUpgrade batch renders its control plane
   * with (status/upgrades/); a hosted cluster not in the map renders with its class's version.
   */
  readonly controlPlaneVersions?: ReadonlyMap<string, string>;
  /** Per hosted cluster, where its etcd restore stands (status/restores/); absent: none ever ran. */
  readonly controlPlaneRestores?: ReadonlyMap<string, RestoreOverlay>;
}

/** What the observations give the hosted control planes: the versions and restores the render takes. Pure. */
export function planeStatesOf(observations: ObservedState | undefined): HostedPlaneStates {
  return {
    versions: observations?.controlPlaneVersions ?? new Map(),
    restores: observations?.controlPlaneRestores ?? new Map(),
  };
}

/** What a done targeted scale-down keeps in the render. */
export interface HeldDivision {
  /** The total it applies to: a different total divides afresh. */
  readonly total: number;
  /** Per cluster, the replicas it holds. */
  readonly clusters: Readonly<Record<string, number>>;
  /** Per cluster, the pod names its pods-to-delete field gets. */
  readonly podsToDelete: Readonly<Record<string, readonly string[]>>;
  /** The ScaleDownRequest. */
  readonly by: string;
}

/** What a distributed FederatedHPA's member HPAs are rendered from, besides its spec. */
export interface DistributedScaling {
  /** Per cluster, the replicas the member's HPA keeps, as recorded on the status branch. */
  readonly distribution?: Readonly<Record<string, number>>;
  readonly bounds?: CronBounds;
}

/** Nothing observed: every cluster Ready, nothing known about workloads. */
export function noObservations(now: number): ObservedState {
  return { now, clusters: new Map(), workloads: new Map() };
}

/** A taint with the time it was added, when known (observed health taints): tolerationSeconds count from it. */
export interface TimedTaint extends Taint {
  readonly addedAt?: number;
}

/** minReplicas/maxReplicas a CronScale rule set on a FederatedHPA. */
export interface CronBounds {
  readonly minReplicas?: number;
  readonly maxReplicas?: number;
  /** "cronScale/rule" that set them. */
  readonly by: string;
}

/** A total an autoscaler decided for a workload, the render's input in place of the source's count. */
export interface Autoscaled {
  readonly replicas: number;
  /** The FederatedHPA (or "cronscale/<name>", "scaledown/<name>") that decided it. */
  readonly by: string;
  /** Why it last changed. */
  readonly reason?: string;
}
