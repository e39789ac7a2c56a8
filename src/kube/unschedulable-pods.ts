import { asList, asMap, type JsonMap } from "../apimachinery/json.js";
import type { DesiredObject } from "../sync/desired-objects.js";
import type { ObjectResult } from "../sync/sync-result.js";
import type { MemberClient } from "./member-client.js";

/** Container waiting reasons that mean a pod will not run without a change: application failover reads them. */
const STUCK = new Set(["CrashLoopBackOff", "ImagePullBackOff", "ErrImagePull"]);

/** At most this many short workloads have their pods listed per sync. */
const MAX_LISTED = 50;

/**
 * For each workload short of ready replicas, its pods that cannot run: those the member's scheduler
 * could not place (Pending, PodScheduled=False, reason Unschedulable) and those stuck in
 * CrashLoopBackOff, ImagePullBackOff or ErrImagePull — or, for a Deployment past its progress
 * deadline, every pod not ready. Pods are listed per workload by its spec.selector.matchLabels, only
 * when it is short, at most 50 workloads a sync.
 */
export async function withUnschedulable(
  client: MemberClient,
  desired: readonly DesiredObject[],
  objects: ObjectResult[],
): Promise<ObjectResult[]> {
  const short = objects.filter((o) => (o.readyReplicas ?? 0) < (o.desiredReplicas ?? 0)).slice(0, MAX_LISTED);
  if (short.length === 0) return objects;
  const byIdentity = new Map(desired.map((d) => [d.identity, d.object]));
  const counted = new Map<ObjectResult, ObjectResult>();
  for (const o of short) {
    const workload = byIdentity.get(o.identity);
    const selector = asMap(asMap(asMap(workload?.spec).selector).matchLabels);
    if (!workload || Object.keys(selector).length === 0) continue;
    const namespace = asMap(workload.metadata).namespace;
    const query = Object.entries(selector)
      .map(([k, v]) => `${k}=${String(v)}`)
      .join(",");
    const pods = (await client.list("v1", "Pod", query).catch(() => undefined)) ?? [];
    counted.set(
      o,
      counts(
        o,
        pods.filter((pod) => asMap(pod.metadata).namespace === namespace),
      ),
    );
  }
  return objects.map((o) => counted.get(o) ?? o);
}

function counts(o: ObjectResult, pods: readonly JsonMap[]): ObjectResult {
  let unschedulable = 0;
  let degraded = 0;
  let reason: string | undefined;
  for (const pod of pods) {
    const status = asMap(pod.status);
    if (status.phase === "Succeeded" || status.phase === "Failed") continue;
    if (unplaced(status)) unschedulable++;
    const stuck = stuckReason(status);
    if (stuck) {
      degraded++;
      reason ??= stuck;
    }
  }
  // A Deployment past its progress deadline: every replica short of ready is degraded.
  if (degraded === 0 && o.health.reason?.includes("ProgressDeadlineExceeded")) {
    degraded = Math.max(0, (o.desiredReplicas ?? 0) - (o.readyReplicas ?? 0) - unschedulable);
    reason = "ProgressDeadlineExceeded";
  }
  return {
    ...o,
    ...(unschedulable > 0 ? { unschedulableReplicas: unschedulable } : {}),
    ...(degraded > 0 ? { degradedReplicas: degraded, degradedReason: reason ?? "Degraded" } : {}),
  };
}

function unplaced(status: JsonMap): boolean {
  return (
    status.phase === "Pending" &&
    asList(status.conditions).some((c) => {
      const condition = asMap(c);
      return (
        condition.type === "PodScheduled" &&
        condition.status === "False" &&
        condition.reason === "Unschedulable"
      );
    })
  );
}

function stuckReason(status: JsonMap): string | undefined {
  for (const container of [...asList(status.initContainerStatuses), ...asList(status.containerStatuses)]) {
    const reason = asMap(asMap(asMap(container).state).waiting).reason;
    if (typeof reason === "string" && STUCK.has(reason)) return reason;
  }
  return undefined;
}
