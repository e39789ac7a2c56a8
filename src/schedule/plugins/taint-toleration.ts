import type { Taint, Toleration } from "../../model/types.js";
import { type FilterPlugin, SUCCESS } from "../framework.js";

/**
 * A taint the Placement does not tolerate keeps the workload away. NoSchedule lets a cluster keep the
 * replicas it already has (without growing); NoExecute removes even those — that is how failover
 * and drain move replicas off a cluster.
 */
export const TaintToleration: FilterPlugin = {
  name: "TaintToleration",
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
    const tolerations = problem.placement.tolerations ?? [];
    const untolerated = cluster.taints.filter((taint) => !tolerations.some((t) => tolerates(t, taint)));
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
