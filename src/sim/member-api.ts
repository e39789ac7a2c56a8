import { asList, asMap, isJsonMap, type JsonMap } from "../apimachinery/json.js";
import type { ApiContext, ApiRequest, ApiResponse, MemberOptions, Target } from "./api/api-context.js";
import { dryRunAnswer, dryRunContext } from "./api/dry-run.js";
import { evictionAnswer } from "./api/eviction.js";
import { type DecodedBody, decodedBody } from "./api/field-validation.js";
import { hashOf, missing, NAMESPACES, namespace, notFoundPath } from "./api/helpers.js";
import { existing, keyOf, viewOf } from "./api/objects.js";
import { patchObject } from "./api/patch.js";
import { podLogAnswer } from "./api/pod-log.js";
import { listObjects, metricsAnswer } from "./api/read.js";
import { type WriteOptions, writeOptions } from "./api/request-options.js";
import { REVIEW_RESOURCES, reviewAnswer } from "./api/reviews.js";
import { asTable, tableRequest, tableWatch } from "./api/tables.js";
import { tokenAnswer } from "./api/token-request.js";
import { watchObjects } from "./api/watch.js";
import { createObject, deleteCollection, deleteObject, requestWriter, updateObject } from "./api/write.js";
import { type ApiResource, BUILT_IN_RESOURCES } from "./api-resources.js";
import { ContainerLogs } from "./container-logs.js";
import {
  type AdapterMetrics,
  adapterAnswer,
  CUSTOM_METRICS_PREFIX,
  EXTERNAL_METRICS_PREFIX,
  NO_ADAPTER_METRICS,
} from "./custom-metrics.js";
import {
  coreVersionsBody,
  groupBody,
  groupListBody,
  openApiDocumentBody,
  openApiRootBody,
  resourceListBody,
  versionBody,
} from "./discovery.js";
import { ObjectStore } from "./object-store.js";
import { type LoadRule, loadRuleOf, NODE_METRICS, POD_METRICS } from "./pod-metrics.js";
import { StatusError } from "./status-error.js";

export type { ApiRequest, ApiResponse, MemberOptions } from "./api/api-context.js";

// A pod's subresources besides status: its log, and the streaming ones — a simulated container has
// no process to exec in, attach to or forward a port to.
const notRunnable = (_api: ApiContext, _request: ApiRequest, target: Target): ApiResponse => {
  throw new StatusError(
    400,
    "BadRequest",
    `${target.subresource ?? ""} is not supported by simulated members: their containers do not run; see docs/simulated-members.md`,
  );
};
// Subresources answered by a handler of their own, by "<core resource>/<subresource>".
const SUBRESOURCE_ANSWERS = new Map<
  string,
  (api: ApiContext, request: ApiRequest, target: Target) => ApiResponse
>([
  ["pods/log", podLogAnswer],
  ["pods/exec", notRunnable],
  ["pods/attach", notRunnable],
  ["pods/portforward", notRunnable],
  ["serviceaccounts/token", tokenAnswer],
  ["pods/eviction", evictionAnswer],
]);

/**
 * The Kubernetes API of one simulated member cluster, without the HTTP: discovery, and create, get,
 * list (label and field selectors), update, patch (JSON, merge, strategic merge) and delete with the
 * API server's semantics — one resourceVersion counter, uid, generation bumped on spec changes,
 * creationTimestamp, finalizers holding deletion, namespaces that must exist, errors as `Status`
 * objects. CustomResourceDefinitions created through it become served resources.
 */
export class MemberApi implements ApiContext {
  readonly store = new ObjectStore();
  readonly custom: ApiResource[] = [];
  readonly logs = new ContainerLogs();

  constructor(
    readonly clusterName: string,
    readonly options: MemberOptions = {},
    readonly now: () => Date = () => new Date(),
  ) {
    createObject(
      this,
      { resource: NAMESPACES, namespace: undefined, name: undefined, subresource: undefined },
      namespace("default"),
    );
    createObject(
      this,
      { resource: NAMESPACES, namespace: undefined, name: undefined, subresource: undefined },
      namespace("kube-system"),
    );
  }

  /** Every resource served: the built-in ones, metrics.k8s.io's pods, and those CRDs added. */
  resources(): readonly ApiResource[] {
    return [...BUILT_IN_RESOURCES, ...REVIEW_RESOURCES, POD_METRICS, NODE_METRICS, ...this.custom];
  }

  load: readonly LoadRule[] = [];

  /** Drives the CPU and memory usage metrics.k8s.io reports for matching pods (the last rule that matches wins). */
  setLoad(rules: readonly LoadRule[]): void {
    this.load = [...rules];
    // The containers say what they are now asked to do, as an application logs a change of load.
    const pods = this.resources().find((r) => r.group === "" && r.name === "pods") as ApiResource;
    for (const pod of this.store.list(pods, undefined)) {
      const rule = loadRuleOf(pod, rules);
      if (!rule || asMap(pod.status).phase !== "Running") continue;
      const usage = [rule.cpu ? `cpu ${rule.cpu}` : "", rule.memory ? `memory ${rule.memory}` : ""]
        .filter(Boolean)
        .join(", ");
      for (const container of asList(asMap(pod.spec).containers))
        this.logs.write(
          String(asMap(pod.metadata).uid),
          String(asMap(container).name),
          `gitfleet simulator: load now ${usage}`,
          this.now(),
        );
    }
  }

  /** What the member's metrics adapter serves besides per-pod load rules (custom-metrics.ts). */
  adapterMetrics: AdapterMetrics = NO_ADAPTER_METRICS;

  handle(request: ApiRequest, serverAddress = "127.0.0.1"): ApiResponse {
    try {
      if (
        request.path.startsWith(CUSTOM_METRICS_PREFIX) ||
        request.path.startsWith(EXTERNAL_METRICS_PREFIX)
      ) {
        if (request.method !== "GET") throw new StatusError(405, "MethodNotAllowed", "metrics are read-only");
        return {
          status: 200,
          body: adapterAnswer(request.path, request.query, {
            store: this.store,
            pods: this.resources().find((r) => r.group === "" && r.name === "pods") as ApiResource,
            rules: this.load,
            metrics: this.adapterMetrics,
          }),
        };
      }
      const discovery = this.discovery(request.path, serverAddress);
      if (discovery) return { status: 200, body: discovery };
      const target = this.target(request.path);
      return this.route(request, target);
    } catch (error) {
      if (error instanceof StatusError) return { status: error.code, body: error.body() };
      throw error;
    }
  }

  private discovery(path: string, serverAddress: string): unknown {
    if (path === "/version" || path === "/version/") return versionBody();
    const parts = path.split("/").filter(Boolean);
    const resources = this.resources();
    const [root, first = "", second = ""] = parts;
    const answers: Record<string, () => unknown> = {
      "api/1": () => coreVersionsBody(serverAddress),
      "api/2": () => resourceListBody(resources, "", first),
      "apis/1": () => groupListBody(resources),
      "apis/2": () => groupBody(resources, first),
      "apis/3": () => resourceListBody(resources, first, second),
      "openapi/2": () => (first === "v3" ? openApiRootBody(resources, hashOf) : undefined),
      "openapi/4": () =>
        parts[2] === "api" ? openApiDocumentBody(resources, "", parts[3] ?? "") : undefined,
      "openapi/5": () =>
        parts[2] === "apis" ? openApiDocumentBody(resources, parts[3] ?? "", parts[4] ?? "") : undefined,
    };
    const answer = answers[`${root}/${parts.length}`];
    return answer ? (answer() ?? missing(path)) : undefined;
  }

  // /api/v1/[namespaces/<ns>/]<resource>[/<name>[/<sub>]] and /apis/<group>/<version>/…
  private target(path: string): Target {
    const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
    const core = parts[0] === "api";
    const group = core ? "" : (parts[1] ?? "");
    const version = core ? (parts[1] ?? "") : (parts[2] ?? "");
    let rest = parts.slice(core ? 2 : 3);
    let namespace: string | undefined;
    // "namespaces/<ns>/<resource>…" addresses a namespaced resource, unless it is the namespace's own subresource.
    if (
      rest[0] === "namespaces" &&
      rest.length >= 3 &&
      !(rest.length === 3 && (rest[2] === "status" || rest[2] === "finalize"))
    ) {
      namespace = rest[1];
      rest = rest.slice(2);
    }
    const resource = this.resources().find(
      (r) => r.group === group && r.version === version && r.name === rest[0],
    );
    if (!resource || rest.length > 3 || (resource.namespaced === false && namespace !== undefined))
      throw notFoundPath(path);
    return { resource, namespace, name: rest[1], subresource: rest[2] };
  }

  private route(request: ApiRequest, target: Target): ApiResponse {
    if (target.resource === POD_METRICS || target.resource === NODE_METRICS)
      return metricsAnswer(this, request, target);
    if (REVIEW_RESOURCES.includes(target.resource)) return reviewAnswer(request, target);
    const options = writeOptions(request);
    if (!options?.dryRun) return answer(this, request, target, options);
    // A dry run: the whole request against the member's objects, nothing of it stored.
    const stored =
      target.name === undefined || (target.resource.namespaced && target.namespace === undefined)
        ? undefined
        : this.store.get(keyOf(target));
    const response = answer(dryRunContext(this), request, target, options);
    return { ...response, body: dryRunAnswer(response.body, stored) };
  }
}

// One request against `api`: the member's own context, or a dry run's.
function answer(api: ApiContext, request: ApiRequest, target: Target, options?: WriteOptions): ApiResponse {
  const { method } = request;
  if (target.name === undefined) return collection(api, request, target, options);
  const subresource =
    target.resource.group === "" && target.subresource !== undefined
      ? SUBRESOURCE_ANSWERS.get(`${target.resource.name}/${target.subresource}`)
      : undefined;
  if (subresource) return subresource(api, request, target);
  const key = keyOf(target);
  if (method === "GET") {
    const object = viewOf(target, existing(api, key));
    const table = target.subresource === undefined ? tableRequest(request) : undefined;
    return { status: 200, body: table ? asTable(api, target, object, table) : object };
  }
  if (method === "PUT") return update(api, request, target, options);
  if (method === "PATCH") {
    // A server-side apply that creates the object answers 201 Created, as kube-apiserver does.
    const created = api.store.get(key) === undefined;
    const patched = patchObject(api, target, request, options?.fieldValidation);
    return { status: created ? 201 : 200, body: viewOf(target, patched.object), warnings: patched.warnings };
  }
  if (method === "DELETE") return { status: 200, body: deleteObject(api, key, asMap(request.body)) };
  throw new StatusError(405, "MethodNotAllowed", `${method} is not supported`);
}

// PUT: the object (its body decoded as fieldValidation says), its status or its scale replaced.
function update(api: ApiContext, request: ApiRequest, target: Target, options?: WriteOptions): ApiResponse {
  const decoded =
    target.subresource === "scale"
      ? { body: request.body as JsonMap, warnings: [] }
      : decodedWrite(target, request, options);
  const updated = updateObject(api, target, decoded.body, requestWriter(api, target, request));
  return { status: 200, body: viewOf(target, updated), warnings: decoded.warnings };
}

// A collection: list or watch (as Tables when asked), create, or delete what a selector picks.
function collection(
  api: ApiContext,
  request: ApiRequest,
  target: Target,
  options?: WriteOptions,
): ApiResponse {
  const { method } = request;
  if (method === "POST") {
    const { body, warnings } = decodedWrite(target, request, options);
    return {
      status: 201,
      body: createObject(api, target, body, requestWriter(api, target, request)),
      warnings,
    };
  }
  if (method === "DELETE")
    return { status: 200, body: deleteCollection(api, target, request.query, asMap(request.body)) };
  if (method !== "GET")
    throw new StatusError(405, "MethodNotAllowed", `${method} is not supported on a collection`);
  const table = tableRequest(request);
  const watching = request.query.get("watch") === "true" || request.query.get("watch") === "1";
  if (watching) {
    const watch = watchObjects(api, target, request.query);
    return table ? tableWatch(api, target, watch, table) : watch;
  }
  const list = listObjects(api, target, request.query);
  return { status: 200, body: table ? asTable(api, target, list, table) : list };
}

// A created or replaced object's body as fieldValidation takes it (a body that is no object is
// refused further on).
function decodedWrite(target: Target, request: ApiRequest, options?: WriteOptions): DecodedBody {
  if (!isJsonMap(request.body)) return { body: request.body as JsonMap, warnings: [] };
  return decodedBody(
    target.resource,
    request.body,
    request.duplicateFields ?? [],
    options?.fieldValidation ?? "Warn",
  );
}
