import { asMap, isJsonMap, type Json, type JsonMap } from "../../apimachinery/json.js";
import type { ObjectKey } from "../object-store.js";
import { messageType } from "../protobuf/kube-protobuf.js";
import { applyConfiguration } from "../server-side-apply.js";
import { badRequest, StatusError } from "../status-error.js";
import type { ApiContext, ApiRequest, Target } from "./api-context.js";
import { applyConflict } from "./helpers.js";
import { prunedBySchema } from "./schema-pruning.js";
import { entryKey } from "./schema-validation.js";
import { checkedBody, createObject, onlySubresource, requestWriter, writeObject } from "./write.js";

/**
 * An applied configuration with a field its kind's schema does not declare is refused as the API
 * server refuses it: it cannot be made a typed patch (a 500, as kube-apiserver answers) — for a
 * built-in kind a top-level field, for a custom resource any field its CRD's structural schema
 * would prune.
 */
function refuseUndeclared(config: JsonMap, key: ObjectKey & { name: string }, schema?: JsonMap): void {
  const apiVersion = String(config.apiVersion ?? "");
  const kind = String(config.kind ?? "");
  const type = messageType(apiVersion, kind);
  // Metadata's first, then in the configuration's order. (With several, a real server names one or
  // more of them, as its walk over the object's maps goes.)
  const undeclared = type
    ? Object.keys(config).filter(
        (field) => field !== "apiVersion" && field !== "kind" && !(field in type.fields),
      )
    : schema
      ? prunedBySchema(schema, config, { inOrder: true }).paths
      : [];
  const duplicated = schema ? duplicateEntries(schema, config, "") : [];
  if (undeclared.length === 0 && duplicated.length === 0) return;
  const gvk = `${apiVersion.includes("/") ? apiVersion : `/${apiVersion}`}, Kind=${kind}`;
  // Named as the configuration names it (the URL's namespace is not yet its own).
  const metadata = asMap(config.metadata);
  const where = `${typeof metadata.namespace === "string" ? metadata.namespace : ""}/${typeof metadata.name === "string" ? metadata.name : key.name}`;
  const errors = [...undeclared.map((path) => `.${path}: field not declared in schema`), ...duplicated];
  // kube-apiserver gives this Status no reason; several errors are listed one per line.
  throw new StatusError(
    500,
    "",
    `failed to create typed patch object (${where}; ${gvk}): ${errors.length === 1 ? errors[0] : `errors:\n${errors.map((e) => `  ${e}`).join("\n")}`}`,
  );
}

/**
 * Entries of a list-type set or map given twice in an applied configuration (a set's value, a map's
 * keys), as its typed form refuses them: `.spec.tags: duplicate entries for key [="x"]`, once for each
 * entry after the first. Lists are looked for below object fields.
 */
function duplicateEntries(schema: JsonMap, value: unknown, path: string): string[] {
  if (!isJsonMap(value as Json)) return [];
  const properties = asMap(schema.properties);
  return Object.entries(value as JsonMap).flatMap(([field, item]) => {
    const below = properties[field];
    if (!isJsonMap(below)) return [];
    const at = `${path}.${field}`;
    if (!Array.isArray(item)) return duplicateEntries(below, item, at);
    const listType = below["x-kubernetes-list-type"];
    if (listType !== "set" && listType !== "map") return [];
    // Named as the typed form names an entry: `[="x"]` in a set, `[name="a",port=80]` in a map.
    const named = item.map((entry) => {
      const key = entryKey(below, entry);
      return listType === "set"
        ? `[=${JSON.stringify(key)}]`
        : `[${Object.entries(asMap(key))
            .map(([field, value]) => `${field}=${JSON.stringify(value)}`)
            .join(",")}]`;
    });
    return named
      .filter((key, i) => named.indexOf(key) !== i)
      .map((key) => `${at}: duplicate entries for key ${key}`);
  });
}

/**
 * Server-side apply (PATCH application/apply-patch+yaml): creates the object when it does not
 * exist; otherwise merges the configuration, refusing fields another manager owns with another
 * value unless ?force=true, and removing what this manager no longer applies.
 */
export function serverSideApply(
  api: ApiContext,
  target: Target,
  key: ObjectKey & { name: string },
  request: ApiRequest,
): JsonMap {
  const manager = request.query.get("fieldManager");
  if (!manager) throw badRequest("PATCH requests with apply content type must have a fieldManager");
  const config = checkedBody(target.resource, request.body);
  const given = asMap(config.metadata).name;
  if (given !== undefined && given !== key.name)
    throw badRequest(
      `the name of the object (${String(given)}) does not match the name on the URL (${key.name})`,
    );
  refuseUndeclared(config, key, target.resource.schema);
  const writer = { ...requestWriter(api, target, request), manager };
  const live = api.store.get(key);
  const result = applyConfiguration(live, config, writer, request.query.get("force") === "true");
  if ("conflicts" in result) throw applyConflict(result.conflicts);
  if (!live)
    return createObject(api, target, {
      ...result.object,
      metadata: { ...asMap(result.object.metadata), name: key.name },
    });
  return writeObject(api, key, live, onlySubresource(target, live, result.object));
}
