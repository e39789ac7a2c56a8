import { randomUUID } from "node:crypto";
import { asList, asMap, isJsonMap, type JsonMap, withValueAt } from "../../apimachinery/json.js";
import { schemaFor } from "../../apimachinery/patch/patch-schema.js";
import { type ApiResource, groupVersion, scalePath } from "../api-resources.js";
import { withServerDefaults } from "../defaults.js";
import { invalidObject } from "../field-error.js";
import type { ObjectKey } from "../object-store.js";
import { recordUpdate, type Writer } from "../server-side-apply.js";
import { alreadyExists, badRequest, conflict, invalid, notFound, StatusError } from "../status-error.js";
import type { ApiContext, ApiRequest, Target } from "./api-context.js";
import { establish, forget, reestablish } from "./crd.js";
import { checkDataSize } from "./data-size.js";
import { BUILT_IN_SCALE, checkPreconditions, NAMESPACES, sameContent, timestamp } from "./helpers.js";
import { existing, keyOf } from "./objects.js";
import { admitPod } from "./quota-admission.js";
import { listObjects } from "./read.js";
import { admittedBySchema } from "./schema-admission.js";
/** POST: a new object with uid, resourceVersion, generation and defaults; a CRD becomes served. */
export function createObject(api: ApiContext, target: Target, body: unknown, writer?: Writer): JsonMap {
  if (target.subresource)
    throw new StatusError(405, "MethodNotAllowed", "create is not supported on a subresource");
  const object = withServerDefaults(
    target.resource.group,
    target.resource.kind,
    checkedBody(target.resource, body),
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
  const admitted = admittedBySchema(target.resource, { ...object, metadata: { ...metadata, name } });
  checkDataSize(target.resource, admitted);
  const namespace = namespaceFor(api, target, metadata);
  const key = { resource: target.resource, namespace, name };
  if (api.store.get(key)) throw alreadyExists(target.resource, name);
  const created: JsonMap = {
    ...admitted,
    metadata: {
      ...asMap(admitted.metadata),
      ...(namespace === undefined ? {} : { namespace }),
      uid: randomUUID(),
      resourceVersion: api.store.nextVersion(),
      creationTimestamp: timestamp(api.now()),
      ...("spec" in admitted ? { generation: 1 } : {}),
    },
  };
  if (namespace !== undefined && target.resource.group === "" && target.resource.kind === "Pod")
    admitPod(api, namespace, created);
  const allocated = allocatedOnCreate(api, target.resource, created);
  const owned = writer ? recordUpdate(undefined, allocated, writer) : allocated;
  const stored = target.resource.kind === "CustomResourceDefinition" ? establish(api, owned) : owned;
  api.store.set(key, stored);
  return stored;
}

// What the API server sets on a new object beyond defaults: a Namespace's name label, a Service's
// cluster IP (and node ports for NodePort and LoadBalancer Services).
function allocatedOnCreate(api: ApiContext, resource: ApiResource, object: JsonMap): JsonMap {
  const metadata = asMap(object.metadata);
  // A Namespace: its name label, the finalizer the namespace controller removes, and Active.
  if (resource.group === "" && resource.kind === "Namespace")
    return {
      ...object,
      metadata: {
        ...metadata,
        labels: { ...asMap(metadata.labels), "kubernetes.io/metadata.name": String(metadata.name) },
      },
      spec: { finalizers: ["kubernetes"], ...asMap(object.spec) },
      status: { phase: "Active", ...asMap(object.status) },
    };
  // The API server records who asked for a certificate: here, always the administrator.
  if (resource.kind === "CertificateSigningRequest")
    return {
      ...object,
      spec: {
        ...asMap(object.spec),
        username: "system:admin",
        groups: ["system:masters", "system:authenticated"],
      },
      status: asMap(object.status),
    };
  if (resource.group !== "" || resource.kind !== "Service") return object;
  // A Service's status always has its load balancer part, empty until one is assigned.
  return {
    ...object,
    spec: serviceSpec(api, resource, asMap(object.spec)),
    status: { loadBalancer: {}, ...asMap(object.status) },
  };
}

function serviceSpec(api: ApiContext, resource: ApiResource, spec: JsonMap): JsonMap {
  const type = typeof spec.type === "string" ? spec.type : "ClusterIP";
  const taken = new Set<string>();
  const nodePorts = new Set<number>();
  for (const service of api.store.list(resource, undefined)) {
    for (const ip of asList(asMap(service.spec).clusterIPs)) taken.add(String(ip));
    for (const port of asList(asMap(service.spec).ports)) nodePorts.add(Number(asMap(port).nodePort ?? 0));
  }
  const withNodePorts = type === "NodePort" || type === "LoadBalancer";
  return {
    ...spec,
    type,
    sessionAffinity: spec.sessionAffinity ?? "None",
    ...(type === "ExternalName" ? {} : clusterAddress(spec, taken)),
    ...(withNodePorts ? { externalTrafficPolicy: spec.externalTrafficPolicy ?? "Cluster" } : {}),
    ...(Array.isArray(spec.ports)
      ? { ports: spec.ports.map((p) => servicePort(asMap(p), withNodePorts, nodePorts)) }
      : {}),
  };
}

// The cluster IP a Service gets: the one it asks for, None for a headless one, else a free one.
function clusterAddress(spec: JsonMap, taken: ReadonlySet<string>): JsonMap {
  const asked = typeof spec.clusterIP === "string" && spec.clusterIP !== "" ? spec.clusterIP : undefined;
  const clusterIP = asked ?? freeAddress(taken);
  return {
    clusterIP,
    clusterIPs: [clusterIP],
    ipFamilies: ["IPv4"],
    ipFamilyPolicy: "SingleStack",
    internalTrafficPolicy: spec.internalTrafficPolicy ?? "Cluster",
  };
}

// A port with its defaults (TCP, the target port its own), and a node port when the type needs one.
function servicePort(port: JsonMap, withNodePorts: boolean, nodePorts: Set<number>): JsonMap {
  const defaulted: JsonMap = { protocol: "TCP", targetPort: port.port ?? null, ...port };
  if (!withNodePorts || typeof port.nodePort === "number") return defaulted;
  let nodePort = 30000;
  while (nodePorts.has(nodePort)) nodePort++;
  nodePorts.add(nodePort);
  return { ...defaulted, nodePort };
}

// The first free address of the service range 10.96.0.0/16 (10.96.0.1 is the API server's own).
function freeAddress(taken: ReadonlySet<string>): string {
  for (let i = 2; i < 65_534; i++) {
    const address = `10.96.${i >> 8}.${i & 255}`;
    if (!taken.has(address)) return address;
  }
  throw new StatusError(500, "InternalError", "the service IP range is exhausted");
}

/** The namespace a new object goes to; it must exist. */
export function namespaceFor(api: ApiContext, target: Target, metadata: JsonMap): string | undefined {
  if (!target.resource.namespaced) return undefined;
  const given =
    typeof metadata.namespace === "string" && metadata.namespace !== "" ? metadata.namespace : undefined;
  if (given !== undefined && target.namespace !== undefined && given !== target.namespace)
    throw badRequest("the namespace of the provided object does not match the namespace sent on the request");
  const namespace = target.namespace ?? given;
  if (namespace === undefined) throw badRequest("a namespace is required");
  if (!api.store.get({ resource: NAMESPACES, namespace: undefined, name: namespace }))
    throw notFound(NAMESPACES, namespace);
  return namespace;
}

/** A request body as the resource takes it, or 400. */
export function checkedBody(resource: ApiResource, body: unknown): JsonMap {
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

/** PUT: the object, its status or its scale replaced, with preconditions. */
export function updateObject(api: ApiContext, target: Target, body: unknown, writer: Writer): JsonMap {
  const key = keyOf(target);
  const current = existing(api, key);
  const incoming =
    target.subresource === "scale" ? fromScale(target, current, body) : checkedBody(target.resource, body);
  if (target.subresource !== "scale" && api.custom.includes(target.resource))
    requireVersion(target, incoming);
  return writeObject(api, key, current, onlySubresource(target, current, incoming), writer);
}

// A custom resource is never replaced unconditionally: its replacement names the version it replaces.
function requireVersion(target: Target, incoming: JsonMap): void {
  const version = asMap(incoming.metadata).resourceVersion;
  if (version === undefined || version === "" || version === "0")
    throw invalidObject({ group: target.resource.group, kind: target.resource.name }, target.name ?? "", [
      {
        type: "FieldValueInvalid",
        field: "metadata.resourceVersion",
        value: 0,
        detail: "must be specified for an update",
      },
    ]);
}

// The status subresource changes only status; the main resource changes everything but status.
export function onlySubresource(target: Target, current: JsonMap, incoming: JsonMap): JsonMap {
  // A CertificateSigningRequest's approval (`kubectl certificate approve`) writes its status's conditions.
  if (target.subresource === "status" || target.subresource === "approval")
    return { ...current, status: incoming.status ?? {} };
  if (
    target.subresource === undefined &&
    target.resource.subresources?.includes("status") &&
    "status" in current
  )
    return { ...incoming, status: current.status ?? {} };
  return incoming;
}

/** A Scale written back as the object's replicas. */
export function fromScale(target: Target, current: JsonMap, body: unknown): JsonMap {
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
export function writeObject(
  api: ApiContext,
  key: ObjectKey,
  current: JsonMap,
  next: JsonMap,
  writer?: Writer,
): JsonMap {
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
  const defaulted = admittedBySchema(
    key.resource,
    withServerDefaults(key.resource.group, key.resource.kind, next),
    current,
  );
  checkDataSize(key.resource, { ...defaulted, metadata: { ...asMap(defaulted.metadata), name: key.name } });
  const versioned: JsonMap = { ...defaulted, metadata: nextMetadata(api, key, current, defaulted) };
  const written = writer ? recordUpdate(current, versioned, writer) : versioned;
  // A write that changes nothing is not stored: no new resourceVersion, no event (as the API server does).
  if (sameContent(current, written)) return current;
  const finalizers = asMap(written.metadata).finalizers;
  // An object being deleted goes once its last finalizer is removed.
  if (was.deletionTimestamp !== undefined && !(Array.isArray(finalizers) && finalizers.length > 0))
    api.store.delete(key);
  else {
    api.store.set(key, written);
    if (key.resource.kind === "CustomResourceDefinition") reestablish(api, current, written);
  }
  return written;
}

// What the server keeps (identity, creation, deletion) and what it moves (version, generation).
export function nextMetadata(api: ApiContext, key: ObjectKey, current: JsonMap, next: JsonMap): JsonMap {
  const was = asMap(current.metadata);
  const specChanged = JSON.stringify(current.spec ?? null) !== JSON.stringify(next.spec ?? null);
  const generation = typeof was.generation === "number" ? was.generation + (specChanged ? 1 : 0) : undefined;
  return {
    ...asMap(next.metadata),
    name: was.name ?? key.name,
    ...(was.namespace === undefined ? {} : { namespace: was.namespace }),
    uid: was.uid ?? "",
    creationTimestamp: was.creationTimestamp ?? "",
    resourceVersion: api.store.nextVersion(),
    ...(generation === undefined ? {} : { generation }),
    ...(was.deletionTimestamp === undefined ? {} : { deletionTimestamp: was.deletionTimestamp }),
  };
}

/** Who writes: the field manager asked for, else the first word of the User-Agent. */
export function requestWriter(api: ApiContext, target: Target, request: ApiRequest): Writer {
  const { resource } = target;
  const manager = request.query.get("fieldManager") || (request.userAgent ?? "").split("/")[0] || "unknown";
  return {
    manager,
    apiVersion: groupVersion(resource.group, resource.version),
    time: timestamp(api.now()),
    schema: schemaFor(resource.group, resource.kind),
    ...(target.subresource ? { subresource: target.subresource } : {}),
  };
}

/** DELETE: gone at once, or marked while finalizers hold it; a Namespace takes its contents. */
export function deleteObject(
  api: ApiContext,
  key: ObjectKey & { name: string },
  options: JsonMap = {},
): JsonMap {
  const current = existing(api, key);
  const metadata = asMap(current.metadata);
  checkPreconditions(key, metadata, asMap(options.preconditions));
  if (Array.isArray(metadata.finalizers) && metadata.finalizers.length > 0) {
    if (metadata.deletionTimestamp !== undefined) return current;
    const marked = {
      ...current,
      metadata: {
        ...metadata,
        deletionTimestamp: timestamp(api.now()),
        deletionGracePeriodSeconds: 0,
        resourceVersion: api.store.nextVersion(),
      },
    };
    api.store.set(key, marked);
    return marked;
  }
  api.store.delete(key);
  if (key.resource === NAMESPACES) deleteNamespaceContents(api, key.name);
  if (key.resource.kind === "CustomResourceDefinition") forget(api, current);
  // A Namespace's deletion answers the Namespace, Terminating, as its spec finalizer makes it on a
  // real server (the simulated member has no namespace controller to wait for: it is gone at once).
  if (key.resource === NAMESPACES)
    return {
      ...current,
      metadata: { ...metadata, deletionTimestamp: timestamp(api.now()) },
      status: { ...asMap(current.status), phase: "Terminating" },
    };
  return {
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Success",
    details: {
      name: key.name,
      ...(key.resource.group === "" ? {} : { group: key.resource.group }),
      kind: key.resource.name,
      uid: metadata.uid ?? "",
    },
  };
}

/** Every object of a namespace, deleted with it. */
export function deleteNamespaceContents(api: ApiContext, namespace: string): void {
  for (const resource of api.resources().filter((r) => r.namespaced))
    for (const object of api.store.list(resource, namespace))
      api.store.delete({ resource, namespace, name: String(asMap(object.metadata).name) });
}

/**
 * DELETE on a collection (deletecollection): every object of the namespace its label and field
 * selectors pick, deleted one by one as a DELETE of each would (finalizers hold theirs); the answer
 * is the list of them. Across all namespaces it is not served, as on a real server.
 */
export function deleteCollection(
  api: ApiContext,
  target: Target,
  query: URLSearchParams,
  options: JsonMap = {},
): JsonMap {
  if (target.resource.namespaced && target.namespace === undefined)
    throw new StatusError(
      405,
      "MethodNotAllowed",
      "DELETE is not supported on a collection of all namespaces",
    );
  const selectors = new URLSearchParams();
  for (const name of ["labelSelector", "fieldSelector"]) {
    const value = query.get(name);
    if (value !== null) selectors.set(name, value);
  }
  const listed = listObjects(api, target, selectors);
  for (const item of asList(listed.items)) {
    const metadata = asMap(asMap(item).metadata);
    deleteObject(
      api,
      {
        resource: target.resource,
        namespace: typeof metadata.namespace === "string" ? metadata.namespace : undefined,
        name: String(metadata.name),
      },
      options,
    );
  }
  return listed;
}
