import { asMap, type JsonMap } from "../../model/json.js";
import { type ApiResource, groupVersion } from "../api-resources.js";
import { podMetrics } from "../pod-metrics.js";
import { meets, parseFieldSelectorQuery, parseLabelSelectorQuery } from "../query-selectors.js";
import { badRequest, StatusError } from "../status-error.js";
import type { ApiContext, ApiRequest, ApiResponse, Target } from "./api-context.js";
import { timestamp } from "./helpers.js";
// metrics.k8s.io: computed from the pods on each read, as metrics-server answers; read-only.
export function podMetricsAnswer(api: ApiContext, request: ApiRequest, target: Target): ApiResponse {
  if (request.method !== "GET")
    throw new StatusError(
      405,
      "MethodNotAllowed",
      `${request.method} is not supported on pods.metrics.k8s.io`,
    );
  const pods = api.resources().find((r) => r.group === "" && r.name === "pods") as ApiResource;
  const at = timestamp(api.now());
  const matches = selection(request.query, "Pod");
  const items = api.store
    .list(pods, target.namespace)
    .filter((pod) => target.name === undefined || asMap(pod.metadata).name === target.name)
    .filter(matches)
    .map((pod) => podMetrics(pod, api.load, at))
    .filter((m): m is JsonMap => m !== undefined);
  if (target.name === undefined)
    return {
      status: 200,
      body: { kind: "PodMetricsList", apiVersion: "metrics.k8s.io/v1beta1", metadata: {}, items },
    };
  const one = items[0];
  if (!one) throw new StatusError(404, "NotFound", `podmetrics.metrics.k8s.io "${target.name}" not found`);
  return { status: 200, body: one };
}

// The objects a list or watch with these selectors wants.
// Pods also select by phase and node, as a real API server's field selectors allow.
export function selection(query: URLSearchParams, kind: string): (object: JsonMap) => boolean {
  let labels: ReturnType<typeof parseLabelSelectorQuery>;
  let fields: ReturnType<typeof parseFieldSelectorQuery>;
  const podFields = kind === "Pod" ? ["status.phase", "spec.nodeName"] : [];
  try {
    labels = parseLabelSelectorQuery(query.get("labelSelector") ?? "");
    fields = parseFieldSelectorQuery(query.get("fieldSelector") ?? "", [
      "metadata.name",
      "metadata.namespace",
      ...podFields,
    ]);
  } catch (error) {
    throw badRequest((error as Error).message);
  }
  return (object) => {
    const metadata = asMap(object.metadata);
    const fieldValues: Record<string, string> = {
      "metadata.name": String(metadata.name ?? ""),
      "metadata.namespace": String(metadata.namespace ?? ""),
    };
    if (podFields.length > 0) {
      fieldValues["status.phase"] = String(asMap(object.status).phase ?? "");
      fieldValues["spec.nodeName"] = String(asMap(object.spec).nodeName ?? "");
    }
    return meets(labels, asMap(metadata.labels) as Record<string, string>) && meets(fields, fieldValues);
  };
}

/** A list, with the selectors asked for, at the store's resourceVersion. */
export function listObjects(api: ApiContext, target: Target, query: URLSearchParams): JsonMap {
  const { resource } = target;
  const items = api.store.list(resource, target.namespace).filter(selection(query, resource.kind));
  return {
    kind: `${resource.kind}List`,
    apiVersion: groupVersion(resource.group, resource.version),
    metadata: { resourceVersion: api.store.currentVersion() },
    items,
  };
}
