import { createHash } from "node:crypto";
import { asMap, isJsonMap, type Json, type JsonMap } from "../../apimachinery/json.js";
import type { ApiResource, ScalePaths } from "../api-resources.js";
import { BUILT_IN_RESOURCES } from "../api-resources.js";
import { describePath } from "../managed-fields.js";
import type { ObjectKey } from "../object-store.js";
import type { ApplyConflict } from "../server-side-apply.js";
import { StatusError } from "../status-error.js";
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

/** A Namespace object. */
export function namespace(name: string): JsonMap {
  return {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name },
    spec: { finalizers: ["kubernetes"] },
    status: { phase: "Active" },
  };
}

/** A time as the API writes it: RFC 3339, whole seconds. */
export function timestamp(date: Date): string {
  return `${date.toISOString().slice(0, 19)}Z`;
}

/** A label selector as a Scale's status.selector gives it. */
export function labelSelectorText(selector: JsonMap): string {
  return Object.entries(asMap(selector.matchLabels))
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(",");
}

// 409 naming each field and its manager as the API server does: an applier by name; a plain writer
// with its apiVersion and the time of its write; a subresource writer with the subresource.
export function applyConflict(conflicts: readonly ApplyConflict[]): StatusError {
  // As the API server names a manager: an updater by its API version, never by the time it wrote.
  const owner = (c: ApplyConflict) => {
    const name = `"${c.manager}"${c.subresource ? ` with subresource "${c.subresource}"` : ""}`;
    return c.operation === "Apply" ? name : `${name} using ${c.apiVersion}`;
  };
  const lines = conflicts.map((c) => `conflict with ${owner(c)}: ${describePath(c.path)}`);
  const count = conflicts.length === 1 ? "1 conflict" : `${conflicts.length} conflicts`;
  const message =
    conflicts.length === 1
      ? `Apply failed with ${count}: ${lines[0]}`
      : `Apply failed with ${count}: ${lines.join("\n")}`;
  const causes = conflicts.map((c) => ({
    reason: "FieldManagerConflict",
    message: `conflict with ${owner(c)}`,
    field: describePath(c.path),
  }));
  return new StatusError(409, "Conflict", message, { causes });
}

// Equal but for resourceVersion and the times in managedFields.
export function sameContent(a: JsonMap, b: JsonMap): boolean {
  const strip = (object: JsonMap) => {
    const metadata = { ...asMap(object.metadata) };
    delete metadata.resourceVersion;
    const managed = Array.isArray(metadata.managedFields) ? metadata.managedFields : [];
    metadata.managedFields = managed.map((entry) => ({ ...asMap(entry), time: null }));
    return JSON.stringify({ ...object, metadata });
  };
  return strip(a) === strip(b);
}

/** A short content hash (the OpenAPI documents' ?hash=). */
export function hashOf(text: string): string {
  return createHash("sha512").update(text).digest("hex").slice(0, 128).toUpperCase();
}

/** A path the API does not serve: 404, as a Status. */
export function missing(path: string): never {
  throw notFoundPath(path);
}

/** The 404 Status of a path the API does not serve. */
export function notFoundPath(path: string): StatusError {
  return new StatusError(404, "NotFound", `the server could not find the requested resource (${path})`);
}

/** A CRD's scale subresource paths, with the built-in defaults. */
export function crdScalePaths(scale: JsonMap): ScalePaths {
  return {
    specReplicasPath: String(scale.specReplicasPath ?? BUILT_IN_SCALE.specReplicasPath),
    statusReplicasPath: String(scale.statusReplicasPath ?? BUILT_IN_SCALE.statusReplicasPath),
    ...(typeof scale.labelSelectorPath === "string" ? { labelSelectorPath: scale.labelSelectorPath } : {}),
  };
}

// The resource one served version of a CRD adds to discovery.
export function customResource(spec: JsonMap, version: JsonMap): ApiResource {
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
    ...(Array.isArray(names.categories) ? { categories: names.categories.map(String) } : {}),
    subresources: [
      ...("status" in subresources ? ["status"] : []),
      ...("scale" in subresources ? ["scale"] : []),
    ],
    ...(isJsonMap(subresources.scale) ? { scale: crdScalePaths(subresources.scale) } : {}),
    ...(isJsonMap(asMap(version.schema).openAPIV3Schema)
      ? { schema: asMap(asMap(version.schema).openAPIV3Schema) }
      : {}),
  };
}

// DeleteOptions.preconditions: the object must still be the one the client means (uid) or saw (resourceVersion).
export function checkPreconditions(
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

export const NAMESPACES: ApiResource = BUILT_IN_RESOURCES.find((r) => r.name === "namespaces") as ApiResource;

export const BUILT_IN_SCALE: ScalePaths = {
  specReplicasPath: ".spec.replicas",
  statusReplicasPath: ".status.replicas",
};
