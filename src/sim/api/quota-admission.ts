import { asList, asMap, type JsonMap } from "../../apimachinery/json.js";
import { formatAmount, podAmounts, quotaAmounts } from "../../model/quota-amounts.js";
import type { QuotaList } from "../../model/quota-types.js";
import { BUILT_IN_RESOURCES } from "../api-resources.js";
import { StatusError } from "../status-error.js";
import type { ApiContext } from "./api-context.js";

// The ResourceQuota admission plugin, as a simulated member runs it on a new pod: once the quota
// controller has counted a quota (its status.hard is set), a pod that does not say a request or limit
// the quota tracks is refused, as is one that would take usage past a limit; an admitted pod is
// counted at once (status.used), so a burst of pods cannot overrun the quota between two counts.
// Messages as kube-apiserver words them.

const QUOTAS = BUILT_IN_RESOURCES.find((r) => r.group === "" && r.kind === "ResourceQuota");

/** Refuses the pod with a 403 when a quota of its namespace forbids it; else counts it. */
export function admitPod(api: ApiContext, namespace: string, pod: JsonMap): void {
  if (!QUOTAS) return;
  const counted = api.store
    .list(QUOTAS, namespace)
    .filter((q) => Object.keys(asMap(asMap(q.status).hard)).length > 0);
  if (counted.length === 0) return;
  const name = String(asMap(pod.metadata).name);
  for (const quota of counted) check(quota, name, pod);
  for (const quota of counted) count(api, namespace, quota, pod);
}

function check(quota: JsonMap, pod: string, object: JsonMap): void {
  const quotaName = String(asMap(quota.metadata).name);
  const hard = asMap(asMap(quota.status).hard) as QuotaList;
  const tracked = Object.keys(hard);
  const missing = missingRequests(object, tracked);
  if (missing.resources.length > 0)
    throw forbidden(
      pod,
      `failed quota: ${quotaName}: must specify ${missing.resources.join(",")} for: ${missing.containers.join(",")}`,
    );
  const limits = quotaAmounts(hard);
  const used = quotaAmounts(asMap(asMap(quota.status).used) as QuotaList);
  const asked = podAmounts(object, tracked);
  const over = [...limits].filter(
    ([resource, limit]) => (used.get(resource) ?? 0) + (asked.get(resource) ?? 0) > limit,
  );
  if (over.length === 0) return;
  const list = (values: ReadonlyMap<string, number>) =>
    over.map(([resource]) => `${resource}=${formatAmount(resource, values.get(resource) ?? 0)}`).join(",");
  throw forbidden(
    pod,
    `exceeded quota: ${quotaName}, requested: ${list(asked)}, used: ${list(used)}, limited: ${list(limits)}`,
  );
}

// Compute resources a quota tracks that some container does not request (or limit): the API server
// cannot count such a pod.
function missingRequests(
  pod: JsonMap,
  tracked: readonly string[],
): { resources: string[]; containers: string[] } {
  const compute = tracked.filter((r) => /^(requests\.|limits\.)?(cpu|memory)$/.test(r));
  const resources = new Set<string>();
  const containers: string[] = [];
  for (const container of asList(asMap(pod.spec).containers).map((c) => asMap(c))) {
    const resourcesOf = asMap(container.resources);
    const requests = { ...asMap(resourcesOf.limits), ...asMap(resourcesOf.requests) };
    const limits = asMap(resourcesOf.limits);
    const lacking = compute.filter((r) => {
      const base = r.replace(/^(requests|limits)\./, "");
      return r.startsWith("limits.") ? limits[base] === undefined : requests[base] === undefined;
    });
    if (lacking.length === 0) continue;
    for (const r of lacking) resources.add(r);
    containers.push(String(container.name));
  }
  return { resources: [...resources].sort(), containers };
}

function count(api: ApiContext, namespace: string, quota: JsonMap, pod: JsonMap): void {
  if (!QUOTAS) return;
  const status = asMap(quota.status);
  const hard = asMap(status.hard) as QuotaList;
  const used = quotaAmounts(asMap(status.used) as QuotaList);
  for (const [resource, amount] of podAmounts(pod, Object.keys(hard)))
    used.set(resource, (used.get(resource) ?? 0) + amount);
  const next = Object.fromEntries([...used].map(([r, milli]) => [r, formatAmount(r, milli)]));
  const name = String(asMap(quota.metadata).name);
  api.store.set(
    { resource: QUOTAS, namespace, name },
    {
      ...quota,
      metadata: { ...asMap(quota.metadata), resourceVersion: api.store.nextVersion() },
      status: { ...status, used: next },
    },
  );
}

function forbidden(pod: string, reason: string): StatusError {
  return new StatusError(403, "Forbidden", `pods "${pod}" is forbidden: ${reason}`, {
    name: pod,
    kind: "pods",
  });
}
