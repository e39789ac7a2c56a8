import { canonicalJson, isJsonMap, type Json, type JsonMap } from "../../apimachinery/json.js";
import { type ApiResource, groupVersion } from "../api-resources.js";
import { goFloat } from "../field-error.js";
import { undeclaredFields } from "../protobuf/kube-protobuf.js";
import { StatusError } from "../status-error.js";
import type { FieldValidation } from "./request-options.js";
import { prunedBySchema } from "./schema-pruning.js";

/** A body as the API server decodes it: only the fields its kind declares, and what to warn of. */
export interface DecodedBody {
  readonly body: JsonMap;
  readonly warnings: readonly string[];
}

/**
 * A created or replaced object decoded as kube-apiserver decodes it into its Go type: fields the
 * kind does not declare are dropped whatever `fieldValidation` says, and so is all but the last of a
 * field given twice. Strict refuses either with 400 (`ConfigMap in version "v1" cannot be handled as
 * a ConfigMap: strict decoding error: unknown field "extra"`), Warn (the default) says each in a
 * warning, Ignore says nothing. A custom resource is pruned by its CRD's structural schema
 * (schema-pruning.ts) the same way.
 */
export function decodedBody(
  resource: ApiResource,
  body: JsonMap,
  duplicates: readonly string[],
  validation: FieldValidation,
): DecodedBody {
  const { body: declared, problems } = checked(resource, body, duplicates);
  if (problems.length > 0 && validation === "Strict")
    throw new StatusError(
      400,
      "BadRequest",
      `${resource.kind} in version "${resource.version}" cannot be handled as a ${resource.kind}: strict decoding error: ${problems.join(", ")}`,
    );
  return { body: declared, warnings: validation === "Warn" ? problems : [] };
}

/**
 * A patched object decoded the same way. Strict refuses with 422 on the patch, as the API server
 * does: a JSON or merge patch shows the object it made, a strategic merge patch itself (as Go prints
 * a map).
 */
export function decodedPatch(
  resource: ApiResource,
  patched: JsonMap,
  patch: { readonly type: string; readonly body: unknown; readonly duplicates: readonly string[] },
  validation: FieldValidation,
): DecodedBody {
  const { body: declared, problems } = checked(resource, patched, patch.duplicates);
  if (problems.length > 0 && validation === "Strict") {
    // A custom resource is an unstructured map on the server: its JSON has its keys in order.
    const shown =
      patch.type === "application/strategic-merge-patch+json"
        ? goValue(patch.body as Json)
        : resource.schema
          ? canonicalJson(patched)
          : JSON.stringify(patched);
    const message = `Invalid value: ${JSON.stringify(shown)}: strict decoding error: ${problems.join(", ")}`;
    throw new StatusError(422, "Invalid", ` "" is invalid: patch: ${message}`, {
      causes: [{ reason: "FieldValueInvalid", message, field: "patch" }],
    });
  }
  return { body: declared, warnings: validation === "Warn" ? problems : [] };
}

function checked(
  resource: ApiResource,
  body: JsonMap,
  duplicates: readonly string[],
): { body: JsonMap; problems: string[] } {
  const undeclared =
    undeclaredFields(groupVersion(resource.group, resource.version), resource.kind, body) ??
    (resource.schema ? prunedBySchema(resource.schema, body) : undefined);
  return {
    body: undeclared?.declared ?? body,
    problems: [
      ...duplicates.map((path) => `duplicate field ${JSON.stringify(path)}`),
      ...(undeclared?.paths ?? []).map((path) => `unknown field ${JSON.stringify(path)}`),
    ],
  };
}

/** A JSON value as Go's %v prints what encoding/json decoded it to: `map[spec:map[replicas:3]]`. */
export function goValue(value: Json): string {
  if (value === null) return "<nil>";
  if (Array.isArray(value)) return `[${value.map(goValue).join(" ")}]`;
  if (isJsonMap(value))
    return `map[${Object.keys(value)
      .sort()
      .map((key) => `${key}:${goValue(value[key] as Json)}`)
      .join(" ")}]`;
  if (typeof value === "number") return goFloat(value);
  return String(value);
}
