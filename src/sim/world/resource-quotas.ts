import { asMap, type JsonMap } from "../../apimachinery/json.js";
import { formatAmount, podAmounts, quotaAmounts } from "../../model/quota-amounts.js";
import type { QuotaList } from "../../model/quota-types.js";
import type { WorldContext } from "./world-context.js";

// The resource-quota controller: each ResourceQuota's status says its limits (status.hard) and what
// the namespace's pods that have not finished use of each (status.used), as kube-controller-manager
// counts them: pods, and the pods' effective requests and limits. Admission (api/quota-admission.ts)
// refuses pods past them once counted.
export function syncResourceQuotas(world: WorldContext, touched: (object: JsonMap) => boolean): void {
  for (const quota of world.list("/api/v1/resourcequotas")) {
    if (!touched(quota)) continue;
    const namespace = String(asMap(quota.metadata).namespace);
    const hard = asMap(asMap(quota.spec).hard) as QuotaList;
    const totals = usage(world, namespace, Object.keys(hard));
    const used = Object.fromEntries([...totals].map(([r, milli]) => [r, formatAmount(r, milli)]));
    const limits = Object.fromEntries(
      [...quotaAmounts(hard)].map(([r, milli]) => [r, formatAmount(r, milli)]),
    );
    const status = asMap(quota.status);
    if (
      JSON.stringify(status.used) === JSON.stringify(used) &&
      JSON.stringify(status.hard) === JSON.stringify(limits)
    )
      continue;
    world.patch(
      quota,
      "/api/v1",
      "resourcequotas/status",
      { status: { hard: limits, used } },
      "resourcequotas",
    );
  }
}

// What the namespace's pods that have not finished use of each resource, in milli-units.
function usage(world: WorldContext, namespace: string, resources: readonly string[]): Map<string, number> {
  const totals = new Map(resources.map((r) => [r, 0]));
  for (const pod of world.list("/api/v1/pods")) {
    if (asMap(pod.metadata).namespace !== namespace) continue;
    const phase = asMap(pod.status).phase;
    if (phase === "Succeeded" || phase === "Failed") continue;
    for (const [resource, amount] of podAmounts(pod, resources))
      totals.set(resource, (totals.get(resource) ?? 0) + amount);
  }
  return totals;
}
