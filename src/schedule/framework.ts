import type { NameOrder } from "./division/fnv.js";
import type { ClusterRoom, ClusterState, SchedulingProblem } from "./types.js";

/** A filter's verdict on one cluster. */
export type FilterResult =
  | { readonly status: "Success" }
  /** Not eligible. With keepsExisting, a cluster that already holds replicas keeps them but cannot grow. */
  | { readonly status: "Unschedulable"; readonly reason: string; readonly keepsExisting?: boolean }
  | { readonly status: "Error"; readonly message: string };

/** The one Success value every filter returns, so passing a filter allocates nothing. */
export const SUCCESS: FilterResult = Object.freeze({ status: "Success" });

/** A cluster that passed the filters. */
export interface Candidate {
  readonly cluster: ClusterState;
  /** Replicas of this workload it holds now. */
  readonly current: number;
  /** Why it may keep but not grow its replicas (cordoned, not ready, untolerated NoSchedule). */
  readonly frozenReason: string | undefined;
  /** Replicas it can still fit beyond its current ones (estimator or input); undefined = unlimited. */
  readonly free: number | undefined;
  /** What bounds the estimate (cpu, memory, pods, a device), when the cluster's nodes were read. */
  readonly limit?: string | undefined;
}

/** A candidate with its summed score. */
export interface ScoredCandidate extends Candidate {
  readonly score: number;
  /** Replicas of this workload it can hold in all: free + current; Infinity when unknown. */
  readonly room: number;
}

/** The select stage's verdict. */
export type SelectResult =
  | {
      readonly status: "Success";
      readonly selected: readonly ScoredCandidate[];
      readonly dropped?: Readonly<Record<string, string>>;
    }
  | { readonly status: "Unschedulable"; readonly reason: string }
  | { readonly status: "Error"; readonly message: string };

/** The replicas stage's verdict: per-cluster counts (zeros allowed) and what found no place. */
export type ReplicasResult =
  | {
      readonly status: "Success";
      readonly assignment: ReadonlyMap<string, number>;
      readonly unschedulable: number;
      readonly reason?: string;
      /** Selected clusters the division could not use (no static weight), with the reason. */
      readonly excluded?: Readonly<Record<string, string>>;
      /** Per selected cluster with a bound, the most replicas it can hold and what sets it. */
      readonly room?: Readonly<Record<string, ClusterRoom>>;
    }
  | { readonly status: "Error"; readonly message: string };

/** What every plugin may read: the problem and values derived once for it. */
export interface SchedulingContext {
  readonly problem: SchedulingProblem;
  /** The per-workload tie-break for equal division priorities. */
  readonly order: NameOrder;
  readonly divided: boolean;
}

export interface FilterPlugin {
  readonly name: string;
  /**
   * True when the verdict depends on the workload, not only on the Placement and the cluster. Verdicts
   * of other filters are remembered per (Placement, cluster), since many workloads share both.
   */
  readonly readsWorkload?: boolean;
  /**
   * True when a cluster this filter removes is one the Placement never asked for (its clusterAffinity
   * does not select it): the diagnosis counts such clusters in its summary but does not list them,
   * so a workload placed on 2 of 500 clusters does not carry 498 reasons.
   */
  readonly scopes?: boolean;
  /**
   * True when this filter passes the cluster whatever the Placement and the workload (a Ready
   * cluster, one without taints): a cheap check on the cluster alone, never wrong when it says true.
   */
  passesAny?(cluster: ClusterState): boolean;
  /**
   * When the Placement names the only clusters this filter can pass (clusterAffinity.clusterNames):
   * those names and the one reason it removes every other cluster with (outright, not keeping
   * replicas). The scheduler then visits only the named clusters and those an earlier filter might
   * not pass, and counts the rest under that reason, exactly as if it had filtered each.
   */
  onlyNamed?(context: SchedulingContext): NamedClusters | undefined;
  filter(context: SchedulingContext, cluster: ClusterState): FilterResult;
}

/** The clusters a filter can pass, by name, and why it removes every other. */
export interface NamedClusters {
  readonly names: readonly string[];
  readonly reason: string;
}

export interface ScorePlugin {
  readonly name: string;
  /** A score from 0 to 100 for each candidate, in the same order; scores of all score plugins are summed. */
  score(context: SchedulingContext, candidates: readonly Candidate[]): readonly number[];
}

export interface SelectPlugin {
  readonly name: string;
  /** Receives candidates in rank order (score desc, capacity desc, name asc) and returns a subset in order. */
  select(context: SchedulingContext, candidates: readonly ScoredCandidate[]): SelectResult;
}

export interface ReplicasPlugin {
  readonly name: string;
  assign(context: SchedulingContext, selected: readonly ScoredCandidate[]): ReplicasResult;
}

/** The four stages, each an ordered list of plugins. */
export interface Profile {
  readonly filter: readonly FilterPlugin[];
  readonly score: readonly ScorePlugin[];
  readonly select: readonly SelectPlugin[];
  readonly replicas: readonly ReplicasPlugin[];
}

/** Stage names, in pipeline order. */
export const STAGES = ["filter", "score", "select", "replicas"] as const;
export type Stage = (typeof STAGES)[number];
