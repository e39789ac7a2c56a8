import type { ObservedReplicas } from "../model/observed-state.js";
import type { WorkloadDecision } from "../render/render-result.js";
import type { AgentReport } from "../status/observed-status.js";
import type { ClusterSyncResult } from "../sync/sync-result.js";

/** What the members report per workload and cluster, from push-mode syncs and pull-mode agents' reports. */
export interface WorkloadReports {
  readonly results: ReadonlyMap<string, ClusterSyncResult>;
  readonly reports: ReadonlyMap<string, AgentReport>;
  /** The workloads of the render (agents report them by kind and name). */
  readonly decisions: readonly WorkloadDecision[];
  readonly now: number;
}

/**
 * Per workload identity and cluster, the desired, ready and unschedulable replicas the members
 * report. `since` remembers (identity, cluster) → when its pods were first seen unschedulable, and is
 * updated: an entry starts when they are, and goes when they are not any more.
 */
export function observedWorkloads(
  input: WorkloadReports,
  since: Map<string, number>,
): Map<string, Map<string, ObservedReplicas>> {
  const seen: Seen = new Map();
  fromResults(input, seen);
  fromReports(input, seen);
  const observed = new Map<string, Map<string, ObservedReplicas>>();
  const still = new Set<string>();
  for (const [identity, clusters] of seen) {
    const entry = new Map<string, ObservedReplicas>();
    for (const [cluster, value] of clusters) {
      const key = `${identity}\0${cluster}`;
      // When each condition began: kept while it lasts, forgotten when it ends.
      const began = (what: string, present: boolean) => {
        if (!present) return undefined;
        const first = since.get(`${key}\0${what}`) ?? input.now;
        since.set(`${key}\0${what}`, first);
        still.add(`${key}\0${what}`);
        return first;
      };
      const unschedulableSince = began("unschedulable", value.unschedulable > 0);
      const degradedSince = began("degraded", (value.degraded ?? 0) > 0);
      entry.set(cluster, {
        ...value,
        ...(unschedulableSince !== undefined ? { unschedulableSince } : {}),
        ...(degradedSince !== undefined ? { degradedSince } : {}),
      });
    }
    observed.set(identity, entry);
  }
  for (const key of [...since.keys()]) if (!still.has(key)) since.delete(key);
  return observed;
}

type Seen = Map<string, Map<string, Omit<ObservedReplicas, "unschedulableSince" | "degradedSince">>>;

function add(
  seen: Seen,
  identity: string,
  cluster: string,
  value: Omit<ObservedReplicas, "unschedulableSince" | "degradedSince">,
) {
  const clusters = seen.get(identity) ?? new Map();
  clusters.set(cluster, value);
  seen.set(identity, clusters);
}

function degradedOf(o: ClusterSyncResult["objects"][number]): Partial<ObservedReplicas> {
  return o.degradedReplicas ? { degraded: o.degradedReplicas, degradedReason: o.degradedReason ?? "" } : {};
}

function flagsOf(o: ClusterSyncResult["objects"][number]): Partial<ObservedReplicas> {
  return { ...(o.scaledByHpa ? { scaledByHpa: true } : {}), ...(o.state ? { state: o.state } : {}) };
}

// Push mode: the controller's own syncs.
function fromResults(input: WorkloadReports, seen: Seen): void {
  for (const result of input.results.values())
    for (const o of result.objects)
      if (o.desiredReplicas !== undefined)
        add(seen, o.identity, result.cluster, {
          desired: o.desiredReplicas,
          ready: o.readyReplicas ?? 0,
          unschedulable: o.unschedulableReplicas ?? 0,
          ...flagsOf(o),
          ...degradedOf(o),
        });
}

// Pull mode: agents report each workload's replicas as numbers, by identity.
function fromReports(input: WorkloadReports, seen: Seen): void {
  for (const [cluster, report] of input.reports) {
    if (input.results.has(cluster)) continue;
    for (const decision of input.decisions) {
      const value = report.replicas[decision.identity];
      if (value) add(seen, decision.identity, cluster, value);
    }
  }
}
