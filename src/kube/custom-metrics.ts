import { asList, asMap } from "../apimachinery/json.js";
import { parseQuantity } from "../apimachinery/quantity.js";
import type { PodSample } from "../autoscale/hpa-algorithm.js";
import type { MetricIdentifier } from "../model/types.js";
import type { MemberClient } from "./member-client.js";

// A member's custom and external metrics, as the HPA controller reads them: Pods and Object metrics
// from custom.metrics.k8s.io (v1beta2), External metrics from external.metrics.k8s.io (v1beta1), each
// served by the member's metrics adapter (prometheus-adapter, KEDA, a cloud's). A member that serves
// none answers 404: the metric has no value there. Values are quantities; what does not read is none.

const CUSTOM = "/apis/custom.metrics.k8s.io/v1beta2";
const EXTERNAL = "/apis/external.metrics.k8s.io/v1beta1";
/** The most series one answer may hold: more is not read (the answer counts as none). */
const MAX_SERIES = 10_000;

export type MetricsReader = Pick<MemberClient, "cluster" | "raw">;

/** A per-pod metric for the pods a label selector picks: each pod's value, by name. */
export async function podMetricValues(
  client: MetricsReader,
  namespace: string,
  podSelector: string,
  metric: MetricIdentifier,
): Promise<Map<string, number>> {
  const query = new URLSearchParams({ labelSelector: podSelector });
  const series = selectorOf(metric);
  if (series) query.set("metricLabelSelector", series);
  const list = await client.raw(
    "GET",
    `${CUSTOM}/namespaces/${encodeURIComponent(namespace)}/pods/*/${encodeURIComponent(metric.name)}?${query}`,
  );
  const values = new Map<string, number>();
  for (const item of bounded(list)) {
    const value = parseQuantity(String(asMap(item).value));
    const pod = asMap(asMap(item).describedObject).name;
    if (value !== undefined && typeof pod === "string") values.set(pod, value);
  }
  return values;
}

/** A metric of one object (an Ingress's requests per second), or undefined when there is none. */
export async function objectMetricValue(
  client: MetricsReader,
  namespace: string,
  described: { readonly apiVersion: string; readonly kind: string; readonly name: string },
  metric: MetricIdentifier,
): Promise<number | undefined> {
  const group = described.apiVersion.includes("/") ? described.apiVersion.split("/")[0] : "";
  const resource = `${plural(described.kind)}${group ? `.${group}` : ""}`;
  const series = selectorOf(metric);
  const query = series ? `?${new URLSearchParams({ metricLabelSelector: series })}` : "";
  const list = await client.raw(
    "GET",
    `${CUSTOM}/namespaces/${encodeURIComponent(namespace)}/${encodeURIComponent(resource)}/${encodeURIComponent(described.name)}/${encodeURIComponent(metric.name)}${query}`,
  );
  const item = bounded(list)[0];
  return item === undefined ? undefined : parseQuantity(String(asMap(item).value));
}

/** An external metric's series summed (a queue's length), or undefined when there is none. */
export async function externalMetricValue(
  client: MetricsReader,
  namespace: string,
  metric: MetricIdentifier,
): Promise<number | undefined> {
  const series = selectorOf(metric);
  const query = series ? `?${new URLSearchParams({ labelSelector: series })}` : "";
  const list = await client.raw(
    "GET",
    `${EXTERNAL}/namespaces/${encodeURIComponent(namespace)}/${encodeURIComponent(metric.name)}${query}`,
  );
  const items = bounded(list);
  if (items.length === 0) return undefined;
  let sum = 0;
  for (const item of items) {
    const value = parseQuantity(String(asMap(item).value));
    if (value === undefined) return undefined;
    sum += value;
  }
  return sum;
}

/** Pod samples of a Pods metric: every pod the resource samples listed, with its value if it has one. */
export function withPodMetric(pods: readonly PodSample[], values: ReadonlyMap<string, number>): PodSample[] {
  return pods.map((pod) => ({ ...pod, usage: values.get(pod.pod), request: 0 }));
}

function bounded(list: unknown): readonly unknown[] {
  const items = asList(asMap(list as never).items);
  return items.length > MAX_SERIES ? [] : items;
}

function selectorOf(metric: MetricIdentifier): string | undefined {
  const labels = Object.entries(metric.selector?.matchLabels ?? {});
  return labels.length > 0 ? labels.map(([k, v]) => `${k}=${v}`).join(",") : undefined;
}

// The resource name of a kind, as the API names most: ingresses, services, queues, policies.
function plural(kind: string): string {
  const lower = kind.toLowerCase();
  if (/[^aeiou]y$/.test(lower)) return `${lower.slice(0, -1)}ies`;
  if (/(s|x|z|ch|sh)$/.test(lower)) return `${lower}es`;
  return `${lower}s`;
}
