import type { ClusterFacts } from "../model/cluster-affinity.js";
import type { TimedTaint } from "../model/observed-state.js";
import type { Labels, PlacementSpec } from "../model/types.js";

/** A resource amount as Kubernetes writes it ("500m", "16Gi", 4) keyed by resource name. */
export type ResourceList = Readonly<Record<string, string | number>>;

/** One node of a member cluster, as the estimator sees it. */
export interface NodeState {
  readonly name?: string;
  readonly allocatable: ResourceList;
  /** What pods already bound to the node request, including the `pods` count. Default nothing. */
  readonly requested?: ResourceList;
  readonly labels?: Labels;
  readonly taints?: readonly { readonly key: string; readonly value?: string; readonly effect: string }[];
  readonly unschedulable?: boolean;
  /** Default true. */
  readonly ready?: boolean;
  /** What the node can still take, when known as such (a recorded pool); else allocatable minus requested. */
  readonly free?: ResourceList;
  /** Nodes exactly like this one (a pool); default 1. */
  readonly count?: number;
}

/**
 * A member cluster as the scheduler sees it: facts from the fleet repo plus observed state. Nothing
 * here is about one workload, so a reconcile builds one per cluster and shares it between workloads.
 */
export interface ClusterState extends ClusterFacts {
  /** The Cluster file's taints and those observed health adds; `addedAt` (ms) times a NoExecute toleration's seconds. */
  readonly taints: readonly TimedTaint[];
  /** Cordoned: keeps its replicas, takes no new ones. */
  readonly unschedulable: boolean;
  readonly ready: boolean;
  /**
   * Cluster-wide totals (a resource summary, as Karmada's general estimator uses), for clusters whose
   * nodes are not known: the estimator treats them as one node, which can over-promise.
   */
  readonly summary?: { readonly allocatable: ResourceList; readonly requested?: ResourceList };
  /** Nodes, when known: the estimator computes how many replicas of a workload fit from them. */
  readonly nodes?: readonly NodeState[];
  /**
   * Per workload identity ("apps/Deployment/shop/web"), its pods the capacity reading counted as
   * taking the nodes' room; the scheduler adds back exactly these. Undefined for a reading that did
   * not count them (one from before they were counted): the previous decision's counts are added back.
   */
  readonly running?: ReadonlyMap<string, number>;
  /** The group/version/kinds the cluster serves ("apps/v1/Deployment", "v1/ConfigMap"); undefined = unknown = all. */
  readonly apiEnablements?: readonly string[];
}

/** The workload being scheduled: its identity, and its pod template for the estimator. */
export interface WorkloadInfo {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly namespace?: string;
  readonly name?: string;
  /** metadata.uid: keys the division's tie-break. */
  readonly uid?: string;
  /** The pod template (with metadata and spec), if the workload has one. */
  readonly podTemplate?: unknown;
}

/** One scheduling problem: a workload, its total, its Placement's spec, and the candidate clusters. */
export interface SchedulingProblem {
  readonly workload: WorkloadInfo;
  readonly replicas: number;
  readonly placement: PlacementSpec;
  readonly clusters: readonly ClusterState[];
  /** Replicas of this workload each cluster holds now (the previous decision); a missing cluster holds 0. */
  readonly current?: Readonly<Record<string, number>>;
  /**
   * Replicas of this workload each cluster can still fit beyond its current ones, for clusters whose
   * nodes are unknown; a missing cluster is unknown, which counts as unlimited.
   */
  readonly available?: Readonly<Record<string, number>>;
  /** Recompute the division from scratch (a rebalance trigger), ignoring current counts. */
  readonly rebalance?: boolean;
  /**
   * Keep the current counts where the total allows, as avoidDisruption does: after a failover,
   * replicas do not move back to a cluster that recovers.
   */
  readonly keepCurrent?: boolean;
  /** The most replicas of this workload a cluster may hold (application failover: what runs there). */
  readonly caps?: Readonly<Record<string, number>>;
  /** Milliseconds since the epoch: when NoExecute tolerations with tolerationSeconds run out. Default: never. */
  readonly now?: number;
  /** The room a FederatedResourceQuota's static assignments leave this workload, per cluster. */
  readonly quota?: QuotaCaps;
}

/** Per cluster, the most replicas of a workload its namespace's quota leaves room for; `by` names the quota. */
export interface QuotaCaps {
  readonly caps: Readonly<Record<string, number>>;
  readonly by: string;
}

/** Why clusters were left out and how the decision was reached, for people and for status. */
export interface Diagnosis {
  /** "3/5 clusters available: 1 untolerated taint {gpu=true:NoSchedule}, 1 not in region [us-east]". */
  readonly summary: string;
  /**
   * Clusters removed by a filter, with the reason: those the Placement's clusterAffinity selects. The
   * others (never asked for) are only counted in the summary.
   */
  readonly filtered: Readonly<Record<string, string>>;
  /** Clusters that keep their current replicas but take no new ones, with the reason. */
  readonly frozen: Readonly<Record<string, string>>;
  /** Candidates the select stage left out, with the reason. */
  readonly notSelected: Readonly<Record<string, string>>;
  /** The selected clusters, in selection order. */
  readonly selected: readonly string[];
  /** Why some replicas could not be placed, when any could not. */
  readonly unschedulableReason?: string;
  /** A Placement with overflow tiers: each tier's clusters and the replicas it got, in order. */
  readonly tiers?: readonly TierShare[];
  /**
   * Divided workloads: per selected cluster with a bound, the most replicas of the workload it can
   * hold and what sets that number. Clusters whose room is unknown (unlimited) are not listed.
   */
  readonly room?: Readonly<Record<string, ClusterRoom>>;
}

/** The most replicas of a workload one cluster can hold, and what sets it. */
export interface ClusterRoom {
  readonly holds: number;
  /** cpu, memory, pods or a device (its nodes' room), maxReplicas, a quota's name, failover, frozen, capacity. */
  readonly by: string;
}

/** One overflow tier's part of a decision. */
export interface TierShare {
  readonly name: string;
  readonly clusters: readonly string[];
  readonly replicas: number;
}

/** The scheduler's answer: replicas per cluster (zeros omitted) and what could not be placed. */
export interface ScheduleDecision {
  readonly clusters: Readonly<Record<string, number>>;
  readonly unschedulable: number;
  readonly diagnosis: Diagnosis;
}

/** A scheduling run either decides or hits a plugin error (a bug or bad input, never "does not fit"). */
export type ScheduleResult =
  | { readonly ok: true; readonly decision: ScheduleDecision }
  | { readonly ok: false; readonly error: string };
