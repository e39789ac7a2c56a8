import { asMap, type JsonMap } from "../../apimachinery/json.js";
import {
  meets,
  parseFieldSelectorQuery,
  parseLabelSelectorQuery,
} from "../../apimachinery/selector-query.js";
import { type ApiResource, groupVersion } from "../api-resources.js";
import { nodeMetrics, podMetrics } from "../pod-metrics.js";
import { badRequest, StatusError } from "../status-error.js";
import type { ApiContext, ApiRequest, ApiResponse, Target } from "./api-context.js";
import { timestamp } from "./helpers.js";
// metrics.k8s.io, computed on each read as metrics-server answers, read-only: PodMetrics from each
// pod's requests and the load rules, NodeMetrics from the pods on each node.
export function metricsAnswer(api: ApiContext, request: ApiRequest, target: Target): ApiResponse {
  const { kind } = target.resource;
  const type = `${kind.toLowerCase()}.metrics.k8s.io`;
  if (request.method !== "GET")
    throw new StatusError(405, "MethodNotAllowed", `${request.method} is not supported on ${type}`);
  const core = (name: string) =>
    api.resources().find((r) => r.group === "" && r.name === name) as ApiResource;
  const at = timestamp(api.now());
  const ofPods = kind === "PodMetrics";
  const pods = api.store.list(core("pods"), ofPods ? target.namespace : undefined);
  const measured = ofPods ? pods : api.store.list(core("nodes"), undefined);
  const measure = (object: JsonMap) =>
    ofPods ? podMetrics(object, api.load, at) : nodeMetrics(object, pods, api.load, at);
  const matches = selection(request.query, ofPods ? "Pod" : "Node");
  const items = measured
    .filter((object) => target.name === undefined || asMap(object.metadata).name === target.name)
    .filter(matches)
    .map(measure)
    .filter((m): m is JsonMap => m !== undefined);
  if (target.name === undefined)
    return {
      status: 200,
      body: { kind: `${kind}List`, apiVersion: "metrics.k8s.io/v1beta1", metadata: {}, items },
    };
  const one = items[0];
  if (!one) throw new StatusError(404, "NotFound", `${type} "${target.name}" not found`);
  return { status: 200, body: one };
}

// The objects a list or watch with these selectors wants. Besides metadata.name and
// metadata.namespace, pods select by phase and node and events by what they are about, as a real
// API server's field selectors allow (`kubectl describe` asks for an object's events so).
export function selection(query: URLSearchParams, kind: string): (object: JsonMap) => boolean {
  let labels: ReturnType<typeof parseLabelSelectorQuery>;
  let fields: ReturnType<typeof parseFieldSelectorQuery>;
  const extra = EXTRA_FIELDS[kind] ?? {};
  try {
    labels = parseLabelSelectorQuery(query.get("labelSelector") ?? "");
    fields = parseFieldSelectorQuery(query.get("fieldSelector") ?? "", [
      "metadata.name",
      "metadata.namespace",
      ...Object.keys(extra),
    ]);
  } catch (error) {
    throw badRequest((error as Error).message);
  }
  // No selector (the world's own lists, most clients' watches): every object, nothing read per object.
  if ((query.get("labelSelector") ?? "").trim() === "" && (query.get("fieldSelector") ?? "").trim() === "")
    return () => true;
  return (object) => {
    const metadata = asMap(object.metadata);
    const fieldValues: Record<string, string> = {
      "metadata.name": String(metadata.name ?? ""),
      "metadata.namespace": String(metadata.namespace ?? ""),
    };
    for (const [field, path] of Object.entries(extra)) fieldValues[field] = fieldText(object, path);
    return meets(labels, asMap(metadata.labels) as Record<string, string>) && meets(fields, fieldValues);
  };
}

// The further fields each kind selects by, and where they are.
const EXTRA_FIELDS: Readonly<Record<string, Readonly<Record<string, readonly string[]>>>> = {
  Pod: { "status.phase": ["status", "phase"], "spec.nodeName": ["spec", "nodeName"] },
  CertificateSigningRequest: { "spec.signerName": ["spec", "signerName"] },
  Event: {
    "involvedObject.kind": ["involvedObject", "kind"],
    "involvedObject.namespace": ["involvedObject", "namespace"],
    "involvedObject.name": ["involvedObject", "name"],
    "involvedObject.uid": ["involvedObject", "uid"],
    "involvedObject.apiVersion": ["involvedObject", "apiVersion"],
    "involvedObject.resourceVersion": ["involvedObject", "resourceVersion"],
    "involvedObject.fieldPath": ["involvedObject", "fieldPath"],
    reason: ["reason"],
    reportingComponent: ["reportingComponent"],
    source: ["source", "component"],
    type: ["type"],
  },
};

function fieldText(object: JsonMap, path: readonly string[]): string {
  let current: unknown = object;
  for (const key of path) current = asMap(current)[key];
  return current === undefined || current === null ? "" : String(current);
}

/**
 * A list, with the selectors asked for, at the store's resourceVersion; with `limit`, a page of at
 * most that many and a `continue` token for the rest (the objects after the page's last, in the
 * store's namespace/name order), as a real API server chunks a list.
 */
export function listObjects(api: ApiContext, target: Target, query: URLSearchParams): JsonMap {
  const { resource } = target;
  const selected = selection(query, resource.kind);
  const all = api.store.list(resource, target.namespace);
  const limit = Number(query.get("limit") ?? "0");
  if (!Number.isInteger(limit) || limit < 0) throw badRequest(`invalid limit "${query.get("limit")}"`);
  const token = query.get("continue") ?? "";
  let start = 0;
  if (token !== "") {
    const after = readContinue(token);
    start = firstAfter(all, after);
  }
  const items: JsonMap[] = [];
  let next = all.length;
  for (let i = start; i < all.length; i++) {
    const object = all[i] as JsonMap;
    if (!selected(object)) continue;
    if (limit > 0 && items.length === limit) {
      next = i;
      break;
    }
    items.push(object);
  }
  const last = items[items.length - 1];
  const more = next < all.length && last !== undefined;
  return {
    kind: `${resource.kind}List`,
    apiVersion: groupVersion(resource.group, resource.version),
    metadata: {
      resourceVersion: api.store.currentVersion(),
      ...(more ? { continue: continueToken(sortKey(last)) } : {}),
    },
    items,
  };
}

// The order the store lists in: namespace, then name.
function sortKey(object: JsonMap): string {
  const metadata = asMap(object.metadata);
  return `${String(metadata.namespace ?? "")}\u0000${String(metadata.name ?? "")}`;
}

function continueToken(after: string): string {
  return Buffer.from(JSON.stringify({ v: 1, after })).toString("base64url");
}

function readContinue(token: string): string {
  try {
    const value = JSON.parse(Buffer.from(token, "base64url").toString("utf8")) as { after?: unknown };
    if (typeof value.after === "string") return value.after;
  } catch {
    // Falls through to the error below.
  }
  throw badRequest("continue key is not valid: it was not issued by this server");
}

// The index of the first object listed after the key (binary search: the list is sorted).
function firstAfter(all: readonly JsonMap[], after: string): number {
  let low = 0;
  let high = all.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (sortKey(all[middle] as JsonMap) <= after) low = middle + 1;
    else high = middle;
  }
  return low;
}
