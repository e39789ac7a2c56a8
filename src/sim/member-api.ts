import { createHash, randomUUID } from "node:crypto";
import { asMap, isJsonMap, type Json, type JsonMap, valueAt, withValueAt } from "../model/json.js";
import type { JsonPatchOperation } from "../model/types.js";
import { applyJsonPatch } from "../render/patch/json-patch.js";
import { schemaFor } from "../render/patch/patch-schema.js";
import { applyStrategicMergePatch } from "../render/patch/strategic-merge.js";
import {
  type ApiResource,
  BUILT_IN_RESOURCES,
  groupVersion,
  type ScalePaths,
  scalePath,
} from "./api-resources.js";
import { withServerDefaults } from "./defaults.js";
import {
  coreVersionsBody,
  groupBody,
  groupListBody,
  openApiDocumentBody,
  openApiRootBody,
  resourceListBody,
  versionBody,
} from "./discovery.js";
import { describePath } from "./managed-fields.js";
import { type ObjectKey, ObjectStore } from "./object-store.js";
import { type LoadRule, POD_METRICS, podMetrics } from "./pod-metrics.js";
import { meets, parseFieldSelectorQuery, parseLabelSelectorQuery } from "./query-selectors.js";
import { type ApplyConflict, applyConfiguration, recordUpdate, type Writer } from "./server-side-apply.js";
import { alreadyExists, badRequest, conflict, invalid, notFound, StatusError } from "./status-error.js";

/** A request as the HTTP edge hands it over: the body already parsed from JSON (or YAML for apply). */
export interface ApiRequest {
  readonly method: string;
  readonly path: string;
  readonly query: URLSearchParams;
  readonly contentType: string;
  readonly body: unknown;
  /** The User-Agent header: a write without ?fieldManager= is recorded under its first word, as a real server does. */
  readonly userAgent?: string;
}

export interface ApiResponse {
  readonly status: number;
  readonly body: unknown;
  /** A watch: starts sending events; returns the function that stops them. */
  readonly stream?: (send: (event: JsonMap) => void, end: () => void) => () => void;
}

/** How a member behaves where Kubernetes leaves room: how often watches get bookmarks. */
export interface MemberOptions {
  /** Default 5 s (a real server sends one about every minute). */
  readonly bookmarkIntervalMs?: number;
}

/** A resource request, parsed from the URL. */
interface Target {
  readonly resource: ApiResource;
  readonly namespace: string | undefined;
  readonly name: string | undefined;
  readonly subresource: string | undefined;
}

const NAMESPACES: ApiResource = BUILT_IN_RESOURCES.find((r) => r.name === "namespaces") as ApiResource;

/**
 * The Kubernetes API of one simulated member cluster, without the HTTP: discovery, and create, get,
 * list (label and field selectors), update, patch (JSON, merge, strategic merge) and delete with the
 * API server's semantics — one resourceVersion counter, uid, generation bumped on spec changes,
 * creationTimestamp, finalizers holding deletion, namespaces that must exist, errors as `Status`
 * objects. CustomResourceDefinitions created through it become served resources.
 */
export class MemberApi {
  readonly store = new ObjectStore();
  private readonly custom: ApiResource[] = [];

  constructor(
    readonly clusterName: string,
    private readonly options: MemberOptions = {},
    private readonly now: () => Date = () => new Date(),
  ) {
    this.create(
      { resource: NAMESPACES, namespace: undefined, name: undefined, subresource: undefined },
      namespace("default"),
    );
    this.create(
      { resource: NAMESPACES, namespace: undefined, name: undefined, subresource: undefined },
      namespace("kube-system"),
    );
  }

  /** Every resource served: the built-in ones, metrics.k8s.io's pods, and those CRDs added. */
  resources(): readonly ApiResource[] {
    return [...BUILT_IN_RESOURCES, POD_METRICS, ...this.custom];
  }

  private load: readonly LoadRule[] = [];

  /** Drives the CPU and memory usage metrics.k8s.io reports for matching pods (the last rule that matches wins). */
  setLoad(rules: readonly LoadRule[]): void {
    this.load = [...rules];
  }

  handle(request: ApiRequest, serverAddress = "127.0.0.1"): ApiResponse {
    try {
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
    const { method } = request;
    if (target.resource === POD_METRICS) return this.metrics(request, target);
    if (target.name === undefined) {
      const watching = request.query.get("watch") === "true" || request.query.get("watch") === "1";
      if (method === "GET" && watching) return this.watch(target, request.query);
      if (method === "GET") return { status: 200, body: this.list(target, request.query) };
      if (method === "POST")
        return { status: 201, body: this.create(target, request.body, this.writer(target, request)) };
      throw new StatusError(405, "MethodNotAllowed", `${method} is not supported on a collection`);
    }
    const key = this.keyOf(target);
    if (method === "GET") return { status: 200, body: this.view(target, this.existing(key)) };
    if (method === "PUT")
      return {
        status: 200,
        body: this.view(target, this.update(target, request.body, this.writer(target, request))),
      };
    if (method === "PATCH") return { status: 200, body: this.view(target, this.patch(target, request)) };
    if (method === "DELETE") return { status: 200, body: this.delete(key, asMap(request.body)) };
    throw new StatusError(405, "MethodNotAllowed", `${method} is not supported`);
  }

  // metrics.k8s.io: computed from the pods on each read, as metrics-server answers; read-only.
  private metrics(request: ApiRequest, target: Target): ApiResponse {
    if (request.method !== "GET")
      throw new StatusError(
        405,
        "MethodNotAllowed",
        `${request.method} is not supported on pods.metrics.k8s.io`,
      );
    const pods = this.resources().find((r) => r.group === "" && r.name === "pods") as ApiResource;
    const at = timestamp(this.now());
    const matches = this.selection(request.query, "Pod");
    const items = this.store
      .list(pods, target.namespace)
      .filter((pod) => target.name === undefined || asMap(pod.metadata).name === target.name)
      .filter(matches)
      .map((pod) => podMetrics(pod, this.load, at))
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

  private keyOf(target: Target): ObjectKey & { name: string } {
    if (target.resource.namespaced && target.namespace === undefined)
      throw badRequest(`the namespace of a ${target.resource.kind} is required`);
    return { resource: target.resource, namespace: target.namespace, name: target.name ?? "" };
  }

  private existing(key: ObjectKey): JsonMap {
    const object = this.store.get(key);
    if (!object) throw notFound(key.resource, key.name);
    return object;
  }

  // A subresource's view of an object: the object for status, a Scale for scale.
  private view(target: Target, object: JsonMap): JsonMap {
    if (target.subresource !== "scale") return object;
    const metadata = asMap(object.metadata);
    const paths = target.resource.scale ?? BUILT_IN_SCALE;
    return {
      kind: "Scale",
      apiVersion: "autoscaling/v1",
      metadata: {
        name: metadata.name ?? "",
        namespace: metadata.namespace ?? "",
        uid: metadata.uid ?? "",
        resourceVersion: metadata.resourceVersion ?? "",
        creationTimestamp: metadata.creationTimestamp ?? "",
      },
      spec: { replicas: valueAt(object, scalePath(paths.specReplicasPath)) ?? 0 },
      status: {
        replicas: valueAt(object, scalePath(paths.statusReplicasPath)) ?? 0,
        selector: paths.labelSelectorPath
          ? String(valueAt(object, scalePath(paths.labelSelectorPath)) ?? "")
          : labelSelectorText(asMap(asMap(object.spec).selector)),
      },
    };
  }

  // The objects a list or watch with these selectors wants.
  // Pods also select by phase and node, as a real API server's field selectors allow.
  private selection(query: URLSearchParams, kind: string): (object: JsonMap) => boolean {
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

  /**
   * A watch: from a resourceVersion, the logged changes after it, then each change as it happens;
   * without one, the current objects as ADDED first. A version whose changes are no longer kept
   * gets an ERROR event with a 410 Expired Status, as a real server sends. Bookmarks when asked,
   * and the stream ends after timeoutSeconds.
   */
  private watch(target: Target, query: URLSearchParams): ApiResponse {
    const selected = this.selection(query, target.resource.kind);
    const given = query.get("resourceVersion") ?? "";
    const from = given === "" || given === "0" ? undefined : Number(given);
    if (from !== undefined && !Number.isInteger(from))
      throw badRequest(`invalid resource version "${given}"`);
    const wanted = (resource: ApiResource, object: JsonMap) =>
      resource === target.resource &&
      (target.namespace === undefined || asMap(object.metadata).namespace === target.namespace) &&
      selected(object);
    const stream = (send: (event: JsonMap) => void, end: () => void) => {
      const initial =
        from === undefined ? this.store.list(target.resource, target.namespace).filter(selected) : [];
      const subscription = this.store.watch(from ?? Number(this.store.currentVersion()), (event) => {
        if (wanted(event.resource, event.object)) send({ type: event.type, object: event.object });
      });
      if (!subscription) {
        const gone = new StatusError(
          410,
          "Expired",
          `too old resource version: ${given} (${this.store.currentVersion()})`,
        );
        send({ type: "ERROR", object: gone.body() as JsonMap });
        end();
        return () => undefined;
      }
      for (const object of initial) send({ type: "ADDED", object });
      for (const event of subscription.backlog)
        if (wanted(event.resource, event.object)) send({ type: event.type, object: event.object });
      return this.watchTimers(target, query, { send, end, stop: subscription.stop });
    };
    return { status: 200, body: undefined, stream };
  }

  private watchTimers(
    target: Target,
    query: URLSearchParams,
    watch: { send: (event: JsonMap) => void; end: () => void; stop: () => void },
  ): () => void {
    const { resource } = target;
    const apiVersion = groupVersion(resource.group, resource.version);
    const bookmark = () =>
      watch.send({
        type: "BOOKMARK",
        object: {
          kind: resource.kind,
          apiVersion,
          metadata: { resourceVersion: this.store.currentVersion() },
        },
      });
    const bookmarks =
      query.get("allowWatchBookmarks") === "true"
        ? setInterval(bookmark, this.options.bookmarkIntervalMs ?? 5000)
        : undefined;
    const seconds = Number(query.get("timeoutSeconds") ?? "0");
    const timeout = seconds > 0 ? setTimeout(watch.end, seconds * 1000) : undefined;
    return () => {
      watch.stop();
      if (bookmarks) clearInterval(bookmarks);
      if (timeout) clearTimeout(timeout);
    };
  }

  private list(target: Target, query: URLSearchParams): JsonMap {
    const { resource } = target;
    const items = this.store.list(resource, target.namespace).filter(this.selection(query, resource.kind));
    return {
      kind: `${resource.kind}List`,
      apiVersion: groupVersion(resource.group, resource.version),
      metadata: { resourceVersion: this.store.currentVersion() },
      items,
    };
  }

  private create(target: Target, body: unknown, writer?: Writer): JsonMap {
    if (target.subresource)
      throw new StatusError(405, "MethodNotAllowed", "create is not supported on a subresource");
    const object = withServerDefaults(
      target.resource.group,
      target.resource.kind,
      this.checkedBody(target.resource, body),
    );
    const metadata = { ...asMap(object.metadata) };
    if (typeof metadata.name !== "string" && typeof metadata.generateName === "string")
      metadata.name = `${metadata.generateName}${randomUUID().slice(0, 5)}`;
    const name = typeof metadata.name === "string" ? metadata.name : "";
    if (name === "")
      throw invalid(
        target.resource.kind,
        "",
        "metadata.name: Required value: name or generateName is required",
      );
    const namespace = this.namespaceFor(target, metadata);
    const key = { resource: target.resource, namespace, name };
    if (this.store.get(key)) throw alreadyExists(target.resource, name);
    const created: JsonMap = {
      ...object,
      metadata: {
        ...metadata,
        name,
        ...(namespace === undefined ? {} : { namespace }),
        uid: randomUUID(),
        resourceVersion: this.store.nextVersion(),
        creationTimestamp: timestamp(this.now()),
        ...("spec" in object ? { generation: 1 } : {}),
      },
    };
    const owned = writer ? recordUpdate(undefined, created, writer) : created;
    const stored = target.resource.kind === "CustomResourceDefinition" ? this.establish(owned) : owned;
    this.store.set(key, stored);
    return stored;
  }

  private namespaceFor(target: Target, metadata: JsonMap): string | undefined {
    if (!target.resource.namespaced) return undefined;
    const given =
      typeof metadata.namespace === "string" && metadata.namespace !== "" ? metadata.namespace : undefined;
    if (given !== undefined && target.namespace !== undefined && given !== target.namespace)
      throw badRequest(
        "the namespace of the provided object does not match the namespace sent on the request",
      );
    const namespace = target.namespace ?? given;
    if (namespace === undefined) throw badRequest("a namespace is required");
    if (!this.store.get({ resource: NAMESPACES, namespace: undefined, name: namespace }))
      throw notFound(NAMESPACES, namespace);
    return namespace;
  }

  private checkedBody(resource: ApiResource, body: unknown): JsonMap {
    if (!isJsonMap(body)) throw badRequest("the request body must be a JSON object");
    const apiVersion = groupVersion(resource.group, resource.version);
    if (
      (body.kind !== undefined && body.kind !== resource.kind) ||
      (body.apiVersion !== undefined && body.apiVersion !== apiVersion)
    )
      throw badRequest(
        `the API version in the data (${String(body.apiVersion)}) and kind (${String(body.kind)}) do not match ${apiVersion} ${resource.kind}`,
      );
    return { ...body, apiVersion, kind: resource.kind };
  }

  private update(target: Target, body: unknown, writer: Writer): JsonMap {
    const key = this.keyOf(target);
    const current = this.existing(key);
    const incoming =
      target.subresource === "scale"
        ? this.fromScale(target, current, body)
        : this.checkedBody(target.resource, body);
    return this.write(key, current, this.onlySubresource(target, current, incoming), writer);
  }

  // The status subresource changes only status; the main resource changes everything but status.
  private onlySubresource(target: Target, current: JsonMap, incoming: JsonMap): JsonMap {
    if (target.subresource === "status") return { ...current, status: incoming.status ?? {} };
    if (
      target.subresource === undefined &&
      target.resource.subresources?.includes("status") &&
      "status" in current
    )
      return { ...incoming, status: current.status ?? {} };
    return incoming;
  }

  private fromScale(target: Target, current: JsonMap, body: unknown): JsonMap {
    const replicas = asMap(asMap(body).spec).replicas;
    if (typeof replicas !== "number" || !Number.isInteger(replicas) || replicas < 0)
      throw invalid(
        "Scale",
        String(asMap(current.metadata).name),
        "spec.replicas: Invalid value: must be a non-negative integer",
      );
    return withValueAt(
      current,
      scalePath((target.resource.scale ?? BUILT_IN_SCALE).specReplicasPath),
      replicas,
    );
  }

  // Writes a new version of an object: resourceVersion precondition, generation, finalizers.
  private write(key: ObjectKey, current: JsonMap, next: JsonMap, writer?: Writer): JsonMap {
    const was = asMap(current.metadata);
    const given = asMap(next.metadata);
    if (given.name !== undefined && given.name !== was.name)
      throw badRequest(
        `the name of the object (${String(given.name)}) does not match the name on the URL (${String(was.name)})`,
      );
    if (
      given.resourceVersion !== undefined &&
      given.resourceVersion !== "" &&
      given.resourceVersion !== was.resourceVersion
    )
      throw conflict(key.resource, key.name);
    const defaulted = withServerDefaults(key.resource.group, key.resource.kind, next);
    const versioned: JsonMap = { ...defaulted, metadata: this.nextMetadata(key, current, defaulted) };
    const written = writer ? recordUpdate(current, versioned, writer) : versioned;
    // A write that changes nothing is not stored: no new resourceVersion, no event (as the API server does).
    if (sameContent(current, written)) return current;
    const finalizers = asMap(written.metadata).finalizers;
    // An object being deleted goes once its last finalizer is removed.
    if (was.deletionTimestamp !== undefined && !(Array.isArray(finalizers) && finalizers.length > 0))
      this.store.delete(key);
    else this.store.set(key, written);
    return written;
  }

  // What the server keeps (identity, creation, deletion) and what it moves (version, generation).
  private nextMetadata(key: ObjectKey, current: JsonMap, next: JsonMap): JsonMap {
    const was = asMap(current.metadata);
    const specChanged = JSON.stringify(current.spec ?? null) !== JSON.stringify(next.spec ?? null);
    const generation =
      typeof was.generation === "number" ? was.generation + (specChanged ? 1 : 0) : undefined;
    return {
      ...asMap(next.metadata),
      name: was.name ?? key.name,
      ...(was.namespace === undefined ? {} : { namespace: was.namespace }),
      uid: was.uid ?? "",
      creationTimestamp: was.creationTimestamp ?? "",
      resourceVersion: this.store.nextVersion(),
      ...(generation === undefined ? {} : { generation }),
      ...(was.deletionTimestamp === undefined ? {} : { deletionTimestamp: was.deletionTimestamp }),
    };
  }

  private patch(target: Target, request: ApiRequest): JsonMap {
    const key = this.keyOf(target);
    if (request.contentType.startsWith("application/apply-patch+yaml") && target.subresource === undefined)
      return this.serverSideApply(target, key, request);
    const current = this.existing(key);
    const base = target.subresource === "scale" ? this.view(target, current) : current;
    const patched = this.applyPatch(target, base, request);
    const incoming =
      target.subresource === "scale"
        ? this.fromScale(target, current, patched)
        : this.checkedBody(target.resource, patched);
    return this.write(
      key,
      current,
      this.onlySubresource(target, current, incoming),
      this.writer(target, request),
    );
  }

  /**
   * Server-side apply (PATCH application/apply-patch+yaml): creates the object when it does not
   * exist; otherwise merges the configuration, refusing fields another manager owns with another
   * value unless ?force=true, and removing what this manager no longer applies.
   */
  private serverSideApply(target: Target, key: ObjectKey & { name: string }, request: ApiRequest): JsonMap {
    const manager = request.query.get("fieldManager");
    if (!manager) throw badRequest("PATCH requests with apply content type must have a fieldManager");
    const config = this.checkedBody(target.resource, request.body);
    const given = asMap(config.metadata).name;
    if (given !== undefined && given !== key.name)
      throw badRequest(
        `the name of the object (${String(given)}) does not match the name on the URL (${key.name})`,
      );
    const writer = { ...this.writer(target, request), manager };
    const live = this.store.get(key);
    const result = applyConfiguration(live, config, writer, request.query.get("force") === "true");
    if ("conflicts" in result) throw applyConflict(result.conflicts);
    if (!live)
      return this.create(target, {
        ...result.object,
        metadata: { ...asMap(result.object.metadata), name: key.name },
      });
    return this.write(key, live, this.onlySubresource(target, live, result.object));
  }

  private writer(target: Target, request: ApiRequest): Writer {
    const { resource } = target;
    const manager = request.query.get("fieldManager") || (request.userAgent ?? "").split("/")[0] || "unknown";
    return {
      manager,
      apiVersion: groupVersion(resource.group, resource.version),
      time: timestamp(this.now()),
      schema: schemaFor(resource.group, resource.kind),
      ...(target.subresource ? { subresource: target.subresource } : {}),
    };
  }

  private applyPatch(target: Target, base: JsonMap, request: ApiRequest): JsonMap {
    const type = request.contentType.split(";")[0]?.trim() ?? "";
    let result: { ok: true; value: Json } | { ok: false; error: string };
    if (type === "application/json-patch+json") {
      if (!Array.isArray(request.body)) throw badRequest("a JSON patch must be a list of operations");
      result = applyJsonPatch(base, request.body as JsonPatchOperation[]);
    } else if (type === "application/merge-patch+json") {
      result = { ok: true, value: mergePatch(base, request.body as Json) };
    } else if (type === "application/strategic-merge-patch+json") {
      const schema = schemaFor(target.resource.group, target.resource.kind);
      if (!BUILT_IN_RESOURCES.includes(target.resource))
        throw new StatusError(
          415,
          "UnsupportedMediaType",
          `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml`,
        );
      result = applyStrategicMergePatch(base, request.body as Json, schema);
    } else {
      throw new StatusError(
        415,
        "UnsupportedMediaType",
        `the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json`,
      );
    }
    if (!result.ok) throw new StatusError(422, "Invalid", result.error);
    if (!isJsonMap(result.value))
      throw new StatusError(422, "Invalid", "the patched object is not an object");
    return result.value;
  }

  private delete(key: ObjectKey & { name: string }, options: JsonMap = {}): JsonMap {
    const current = this.existing(key);
    const metadata = asMap(current.metadata);
    checkPreconditions(key, metadata, asMap(options.preconditions));
    if (Array.isArray(metadata.finalizers) && metadata.finalizers.length > 0) {
      if (metadata.deletionTimestamp !== undefined) return current;
      const marked = {
        ...current,
        metadata: {
          ...metadata,
          deletionTimestamp: timestamp(this.now()),
          deletionGracePeriodSeconds: 0,
          resourceVersion: this.store.nextVersion(),
        },
      };
      this.store.set(key, marked);
      return marked;
    }
    this.store.delete(key);
    if (key.resource === NAMESPACES) this.deleteNamespaceContents(key.name);
    if (key.resource.kind === "CustomResourceDefinition") this.forget(current);
    return {
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Success",
      details: {
        name: key.name,
        group: key.resource.group,
        kind: key.resource.name,
        uid: metadata.uid ?? "",
      },
    };
  }

  private deleteNamespaceContents(namespace: string): void {
    for (const resource of this.resources().filter((r) => r.namespaced))
      for (const object of this.store.list(resource, namespace))
        this.store.delete({ resource, namespace, name: String(asMap(object.metadata).name) });
  }

  // A CRD becomes served at once and reports Established, as a real server does within a second.
  private establish(crd: JsonMap): JsonMap {
    const spec = asMap(crd.spec);
    const names = asMap(spec.names);
    const group = String(spec.group ?? "");
    const kind = String(names.kind ?? "");
    const plural = String(names.plural ?? "");
    const versions = (Array.isArray(spec.versions) ? spec.versions : [])
      .map((v) => asMap(v))
      .filter((v) => v.served !== false);
    if (!group || !kind || !plural || versions.length === 0)
      throw invalid(
        "CustomResourceDefinition",
        String(asMap(crd.metadata).name),
        "spec: group, names.kind, names.plural and a served version are required",
      );
    for (const version of versions) this.custom.push(customResource(spec, version));
    const condition = (type: string) => ({
      type,
      status: "True",
      lastTransitionTime: timestamp(this.now()),
      reason: type === "Established" ? "InitialNamesAccepted" : "NoConflicts",
      message: type === "Established" ? "the initial names have been accepted" : "no conflicts found",
    });
    return {
      ...crd,
      status: {
        conditions: [condition("NamesAccepted"), condition("Established")],
        acceptedNames: names,
        storedVersions: [String(versions[0]?.name)],
      },
    };
  }

  private forget(crd: JsonMap): void {
    const spec = asMap(crd.spec);
    const plural = String(asMap(spec.names).plural);
    for (let i = this.custom.length - 1; i >= 0; i--)
      if (this.custom[i]?.group === spec.group && this.custom[i]?.name === plural) this.custom.splice(i, 1);
  }
}

/** RFC 7386 JSON merge patch. */
export function mergePatch(target: Json, patch: Json): Json {
  if (!isJsonMap(patch)) return patch;
  const result: JsonMap = isJsonMap(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key] ?? null, value);
  }
  return result;
}

function namespace(name: string): JsonMap {
  return {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name },
    spec: { finalizers: ["kubernetes"] },
    status: { phase: "Active" },
  };
}

function timestamp(date: Date): string {
  return `${date.toISOString().slice(0, 19)}Z`;
}

function labelSelectorText(selector: JsonMap): string {
  return Object.entries(asMap(selector.matchLabels))
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(",");
}

// 409 naming each field and its manager as the API server does: an applier by name; a plain writer
// with its apiVersion and the time of its write; a subresource writer with the subresource.
function applyConflict(conflicts: readonly ApplyConflict[]): StatusError {
  const owner = (c: ApplyConflict) => {
    const name = `"${c.manager}"${c.subresource ? ` with subresource "${c.subresource}"` : ""}`;
    if (c.operation === "Apply") return name;
    return c.time ? `${name} using ${c.apiVersion} at ${c.time}` : `${name} using ${c.apiVersion}`;
  };
  const lines = conflicts.map((c) => `conflict with ${owner(c)}: ${describePath(c.path)}`);
  const count = conflicts.length === 1 ? "1 conflict" : `${conflicts.length} conflicts`;
  const message =
    conflicts.length === 1
      ? `Apply failed with ${count}: ${lines[0]}`
      : `Apply failed with ${count}: ${lines.join("\n")}`;
  const causes = conflicts.map((c, i) => ({
    type: "FieldManagerConflict",
    message: lines[i] ?? "",
    field: describePath(c.path),
  }));
  return new StatusError(409, "Conflict", message, { causes });
}

// Equal but for resourceVersion and the times in managedFields.
function sameContent(a: JsonMap, b: JsonMap): boolean {
  const strip = (object: JsonMap) => {
    const metadata = { ...asMap(object.metadata) };
    delete metadata.resourceVersion;
    const managed = Array.isArray(metadata.managedFields) ? metadata.managedFields : [];
    metadata.managedFields = managed.map((entry) => ({ ...asMap(entry), time: null }));
    return JSON.stringify({ ...object, metadata });
  };
  return strip(a) === strip(b);
}

function hashOf(text: string): string {
  return createHash("sha512").update(text).digest("hex").slice(0, 128).toUpperCase();
}

function missing(path: string): never {
  throw notFoundPath(path);
}

function notFoundPath(path: string): StatusError {
  return new StatusError(404, "NotFound", `the server could not find the requested resource (${path})`);
}

const BUILT_IN_SCALE: ScalePaths = {
  specReplicasPath: ".spec.replicas",
  statusReplicasPath: ".status.replicas",
};

function crdScalePaths(scale: JsonMap): ScalePaths {
  return {
    specReplicasPath: String(scale.specReplicasPath ?? BUILT_IN_SCALE.specReplicasPath),
    statusReplicasPath: String(scale.statusReplicasPath ?? BUILT_IN_SCALE.statusReplicasPath),
    ...(typeof scale.labelSelectorPath === "string" ? { labelSelectorPath: scale.labelSelectorPath } : {}),
  };
}

// The resource one served version of a CRD adds to discovery.
function customResource(spec: JsonMap, version: JsonMap): ApiResource {
  const names = asMap(spec.names);
  const kind = String(names.kind);
  const subresources = asMap(version.subresources);
  return {
    group: String(spec.group),
    version: String(version.name),
    name: String(names.plural),
    singularName: String(names.singular ?? kind.toLowerCase()),
    kind,
    namespaced: spec.scope !== "Cluster",
    verbs: ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"],
    ...(Array.isArray(names.shortNames) ? { shortNames: names.shortNames.map(String) } : {}),
    subresources: [
      ...("status" in subresources ? ["status"] : []),
      ...("scale" in subresources ? ["scale"] : []),
    ],
    ...(isJsonMap(subresources.scale) ? { scale: crdScalePaths(subresources.scale) } : {}),
  };
}

// DeleteOptions.preconditions: the object must still be the one the client means (uid) or saw (resourceVersion).
function checkPreconditions(
  key: ObjectKey & { name: string },
  metadata: JsonMap,
  preconditions: JsonMap,
): void {
  for (const field of ["uid", "resourceVersion"] as const) {
    const wanted = preconditions[field];
    if (typeof wanted === "string" && wanted !== "" && wanted !== metadata[field])
      throw new StatusError(
        409,
        "Conflict",
        `Operation cannot be fulfilled on ${key.resource.name}${key.resource.group ? `.${key.resource.group}` : ""} "${key.name}": ${
          field === "uid"
            ? `the UID in the precondition (${wanted}) does not match the UID in record (${String(metadata.uid ?? "")}). The object might have been deleted and then recreated`
            : `the ResourceVersion in the precondition (${wanted}) does not match the ResourceVersion in record (${String(metadata.resourceVersion ?? "")}). The object might have been modified`
        }`,
        { name: key.name, group: key.resource.group, kind: key.resource.name },
      );
  }
}
