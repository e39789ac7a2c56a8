import { asList, asMap, type JsonMap } from "../apimachinery/json.js";
import { parseQuantity } from "../apimachinery/quantity.js";
import type { PodSample } from "../autoscale/hpa-algorithm.js";
import type { MemberClient } from "./member-client.js";

/** The resources an autoscaler reads per pod. */
export const SAMPLED_RESOURCES = ["cpu", "memory"] as const;

/**
 * One member's pods of a workload (by its selector) as an autoscaler samples them: readiness, the
 * summed requests of their containers, and their usage from metrics.k8s.io (none while the member
 * serves no metrics API, or the pod has no metrics yet). CPU in cores, memory in bytes.
 */
/** What sampling needs of a member: list objects of a kind by label (and field) selector. */
export type PodLister = Pick<MemberClient, "cluster" | "list">;

export async function podSamples(
  client: PodLister,
  namespace: string,
  matchLabels: Readonly<Record<string, string>>,
): Promise<Record<string, PodSample[]>> {
  const selector = Object.entries(matchLabels)
    .map(([k, v]) => `${k}=${v}`)
    .join(",");
  const inNamespace = `metadata.namespace=${namespace}`;
  const pods = (await client.list("v1", "Pod", selector, inNamespace)) ?? [];
  const metrics = await client.list("metrics.k8s.io/v1beta1", "PodMetrics", selector).catch(() => undefined);
  const usageOf = new Map(
    (metrics ?? [])
      .filter((m) => asMap(m.metadata).namespace === namespace)
      .map((m) => [String(asMap(m.metadata).name), containerSum(asList(m.containers), "usage")]),
  );
  const samples: Record<string, PodSample[]> = {};
  for (const resource of SAMPLED_RESOURCES)
    samples[resource] = pods
      .filter((pod) => !asMap(pod.metadata).deletionTimestamp && asMap(pod.status).phase !== "Succeeded")
      .map((pod) => {
        const name = String(asMap(pod.metadata).name);
        const usage = usageOf.get(name)?.[resource];
        return {
          cluster: client.cluster,
          pod: name,
          ready: isReady(pod),
          usage,
          request: containerSum(asList(asMap(pod.spec).containers), "requests")[resource] ?? 0,
        };
      });
  return samples;
}

// Per resource, the sum over containers of `usage` (PodMetrics) or `resources.requests` (a pod spec).
function containerSum(containers: readonly unknown[], field: "usage" | "requests"): Record<string, number> {
  const total: Record<string, number> = {};
  for (const container of containers) {
    const c = asMap(container as JsonMap);
    const values = asMap(field === "usage" ? c.usage : asMap(c.resources).requests);
    for (const resource of SAMPLED_RESOURCES) {
      const value = values[resource] === undefined ? undefined : parseQuantity(String(values[resource]));
      if (value !== undefined) total[resource] = (total[resource] ?? 0) + value;
    }
  }
  return total;
}

function isReady(pod: JsonMap): boolean {
  return (
    asMap(pod.status).phase === "Running" &&
    asList(asMap(pod.status).conditions).some((c) => asMap(c).type === "Ready" && asMap(c).status === "True")
  );
}
