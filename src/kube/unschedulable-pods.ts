import { asList, asMap } from "../model/json.js";
import type { DesiredObject } from "../sync/desired-objects.js";
import type { ObjectResult } from "../sync/sync-result.js";
import type { MemberClient } from "./member-client.js";

/**
 * Counts, for each workload short of ready replicas, its pods the member's scheduler could not place
 * (Pending, PodScheduled=False, reason Unschedulable), matched by namespace and the workload's
 * spec.selector.matchLabels. One list of Pending pods per sync, and only when a workload is short.
 */
export async function withUnschedulable(
  client: MemberClient,
  desired: readonly DesiredObject[],
  objects: ObjectResult[],
): Promise<ObjectResult[]> {
  const short = objects.filter((o) => (o.readyReplicas ?? 0) < (o.desiredReplicas ?? 0));
  if (short.length === 0) return objects;
  const pending = await client.list("v1", "Pod", "", "status.phase=Pending").catch(() => undefined);
  const unschedulable = (pending ?? []).filter((pod) =>
    asList(asMap(pod.status).conditions).some((c) => {
      const condition = asMap(c);
      return (
        condition.type === "PodScheduled" &&
        condition.status === "False" &&
        condition.reason === "Unschedulable"
      );
    }),
  );
  if (unschedulable.length === 0) return objects;
  const byIdentity = new Map(desired.map((d) => [d.identity, d.object]));
  return objects.map((o) => {
    const workload = short.includes(o) ? byIdentity.get(o.identity) : undefined;
    const selector = asMap(asMap(asMap(workload?.spec).selector).matchLabels);
    if (!workload || Object.keys(selector).length === 0) return o;
    const namespace = asMap(workload.metadata).namespace;
    const count = unschedulable.filter((pod) => {
      const metadata = asMap(pod.metadata);
      const labels = asMap(metadata.labels);
      return metadata.namespace === namespace && Object.entries(selector).every(([k, v]) => labels[k] === v);
    }).length;
    return count > 0 ? { ...o, unschedulableReplicas: count } : o;
  });
}
