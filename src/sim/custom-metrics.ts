import { asMap, type JsonMap } from "../apimachinery/json.js";
import { matchesRequirement } from "../apimachinery/label-selector.js";
import { parseLabelSelectorQuery } from "../apimachinery/selector-query.js";
import type { ApiResource } from "./api-resources.js";
import type { ObjectStore } from "./object-store.js";
import { type LoadRule, loadRuleOf } from "./pod-metrics.js";
import { badRequest, StatusError } from "./status-error.js";

// A metrics adapter's APIs, as a simulated member serves them (prometheus-adapter, KEDA):
// custom.metrics.k8s.io/v1beta2 — per-pod values from the load rules' `custom` map, per-object values
// set on the member — and external.metrics.k8s.io/v1beta1 — series set on the member.

export const CUSTOM_METRICS_PREFIX = "/apis/custom.metrics.k8s.io/v1beta2/";
export const EXTERNAL_METRICS_PREFIX = "/apis/external.metrics.k8s.io/v1beta1/";

/** What a member's metrics adapter answers besides the per-pod load rules. */
export interface AdapterMetrics {
  /** "namespace/resource/name/metric" → value ("ingresses.networking.k8s.io" as the resource). */
  readonly objects: Readonly<Record<string, string>>;
  /** "namespace/metric" → series: each a value and its labels. */
  readonly external: Readonly<
    Record<string, readonly { readonly value: string; readonly labels?: Record<string, string> }[]>
  >;
}

export const NO_ADAPTER_METRICS: AdapterMetrics = { objects: {}, external: {} };

/** The answer to a GET under one of the two prefixes. Throws a 404 StatusError for what is not there. */
export function adapterAnswer(
  path: string,
  query: URLSearchParams,
  sources: { store: ObjectStore; pods: ApiResource; rules: readonly LoadRule[]; metrics: AdapterMetrics },
): JsonMap {
  const timestamp = new Date().toISOString();
  if (path.startsWith(EXTERNAL_METRICS_PREFIX)) {
    const [, namespace, metric] = path
      .slice(EXTERNAL_METRICS_PREFIX.length)
      .split("/")
      .map(decodeURIComponent);
    const series = sources.metrics.external[`${namespace}/${metric}`];
    if (!namespace || !metric || !series) throw notFound(metric ?? "");
    const selector = query.get("labelSelector") ?? "";
    return {
      kind: "ExternalMetricValueList",
      apiVersion: "external.metrics.k8s.io/v1beta1",
      metadata: {},
      items: series
        .filter((s) => matchesSelectorText(selector, s.labels ?? {}))
        .map((s) => ({ metricName: metric, metricLabels: s.labels ?? {}, timestamp, value: s.value })),
    };
  }
  const [, namespace, resource, name, metric] = path
    .slice(CUSTOM_METRICS_PREFIX.length)
    .split("/")
    .map(decodeURIComponent);
  if (!namespace || !resource || !name || !metric) throw notFound(metric ?? "");
  const item = (described: JsonMap, value: string) => ({
    describedObject: described,
    metric: { name: metric },
    timestamp,
    value,
  });
  if (resource === "pods") {
    const selector = query.get("labelSelector") ?? "";
    const pods = sources.store
      .list(sources.pods, namespace)
      .filter(
        (pod) =>
          (name === "*" || asMap(pod.metadata).name === name) &&
          matchesSelectorText(selector, asMap(asMap(pod.metadata).labels) as Record<string, string>),
      );
    const items = pods.flatMap((pod) => {
      const value = loadRuleOf(pod, sources.rules)?.custom?.[metric];
      return value === undefined
        ? []
        : [item({ kind: "Pod", namespace, name: asMap(pod.metadata).name ?? "", apiVersion: "/v1" }, value)];
    });
    if (items.length === 0) throw notFound(metric);
    return { kind: "MetricValueList", apiVersion: "custom.metrics.k8s.io/v1beta2", metadata: {}, items };
  }
  const value = sources.metrics.objects[`${namespace}/${resource}/${name}/${metric}`];
  if (value === undefined) throw notFound(metric);
  return {
    kind: "MetricValueList",
    apiVersion: "custom.metrics.k8s.io/v1beta2",
    metadata: {},
    items: [item({ kind: resource, namespace, name }, value)],
  };
}

// Whether labels satisfy a selector in the API's query syntax; a selector that does not parse is a 400.
function matchesSelectorText(text: string, labels: Readonly<Record<string, string>>): boolean {
  let requirements: ReturnType<typeof parseLabelSelectorQuery>;
  try {
    requirements = parseLabelSelectorQuery(text);
  } catch (error) {
    throw badRequest((error as Error).message);
  }
  return requirements.every((r) => matchesRequirement(r, labels));
}

function notFound(metric: string): StatusError {
  return new StatusError(
    404,
    "NotFound",
    `the server could not find the metric ${metric} for the requested object`,
  );
}
