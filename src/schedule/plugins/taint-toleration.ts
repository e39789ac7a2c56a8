import type { TimedTaint } from "../../model/observed-state.js";
import type { PlacementSpec, Taint, Toleration } from "../../model/types.js";
import { type FilterPlugin, SUCCESS } from "../framework.js";

/**
 * A taint the Placement does not tolerate keeps the workload away. NoSchedule lets a cluster keep the
 * replicas it already has (without growing); NoExecute removes even those — that is how failover
 * and drain move replicas off a cluster.
 */
export const TaintToleration: FilterPlugin = {
  name: "TaintToleration",
  passesAny: (cluster) => cluster.taints.length === 0,
  filter: ({ problem }, cluster) => {
    if (cluster.taints.length === 0) return SUCCESS;
    const unknown = cluster.taints.find(
      (taint) => taint.effect !== "NoSchedule" && taint.effect !== "NoExecute",
    );
    if (unknown)
      return {
        status: "Error",
        message: `taint ${unknown.key} has unknown effect ${JSON.stringify(unknown.effect)}`,
      };
    const tolerations = placementTolerations(problem.placement);
    const now = problem.now ?? Number.NEGATIVE_INFINITY;
    const untolerated = cluster.taints.filter(
      (taint) => !tolerations.some((t) => tolerates(t, taint) && stillTolerated(t, taint, now)),
    );
    const noExecute = untolerated.find((taint) => taint.effect === "NoExecute");
    const blocking = noExecute ?? untolerated[0];
    if (!blocking) return SUCCESS;
    return {
      status: "Unschedulable",
      reason: `untolerated taint ${formatTaint(blocking)}`,
      keepsExisting: noExecute === undefined,
    };
  },
};

/** The taint keys gitfleet's health probes add to a NotReady cluster (Karmada's, in gitfleet's domain). */
export const NOT_READY_TAINT = "gitfleet.io/not-ready";
export const UNREACHABLE_TAINT = "gitfleet.io/unreachable";

/** How long replicas stay on a cluster whose health taint says NoExecute, unless the Placement says otherwise (Karmada's default). */
export const DEFAULT_FAILOVER_TOLERATION_SECONDS = 300;

/**
 * The Placement's tolerations plus the failover toleration: the health taints' NoExecute is
 * tolerated for `failover.cluster.tolerationSeconds` (default 300), Karmada's default tolerations.
 */
export function placementTolerations(placement: PlacementSpec): readonly Toleration[] {
  const seconds = placement.failover?.cluster?.tolerationSeconds ?? DEFAULT_FAILOVER_TOLERATION_SECONDS;
  return [
    ...(placement.tolerations ?? []),
    { key: NOT_READY_TAINT, operator: "Exists", effect: "NoExecute", tolerationSeconds: seconds },
    { key: UNREACHABLE_TAINT, operator: "Exists", effect: "NoExecute", tolerationSeconds: seconds },
  ];
}

/** When a NoExecute taint stops being tolerated (ms), if a matching toleration has seconds and the taint a time; undefined = never. */
export function toleratedUntil(toleration: Toleration, taint: TimedTaint): number | undefined {
  if (taint.effect !== "NoExecute" || toleration.tolerationSeconds === undefined) return undefined;
  if (taint.addedAt === undefined) return undefined;
  return taint.addedAt + toleration.tolerationSeconds * 1000;
}

// A toleration with tolerationSeconds tolerates a NoExecute taint only that long after it was added;
// a taint with no time (written in a Cluster file) counts as added long ago.
function stillTolerated(toleration: Toleration, taint: TimedTaint, now: number): boolean {
  if (taint.effect !== "NoExecute" || toleration.tolerationSeconds === undefined) return true;
  const until = toleratedUntil(toleration, taint);
  return until !== undefined && now < until;
}

/** Kubernetes toleration matching: key (empty with Exists matches all), value for Equal, effect (empty matches all). */
export function tolerates(
  toleration: Toleration,
  taint: { readonly key: string; readonly value?: string; readonly effect: string },
): boolean {
  if (toleration.effect !== undefined && toleration.effect !== taint.effect) return false;
  const operator = toleration.operator ?? "Equal";
  if ((toleration.key ?? "") === "") return operator === "Exists";
  if (toleration.key !== taint.key) return false;
  return operator === "Exists" || (toleration.value ?? "") === (taint.value ?? "");
}

/** "{gpu=true:NoSchedule}", as Kubernetes prints a taint. */
export function formatTaint(taint: Taint): string {
  return `{${taint.key}${taint.value ? `=${taint.value}` : ""}:${taint.effect}}`;
}
