import { isJsonMap, type Json, type JsonMap } from "../../apimachinery/json.js";
import { applyJsonPatch } from "../../apimachinery/patch/json-patch.js";
import type { JsonPatchOperation } from "../../apimachinery/patch/json-patch-operation.js";
import { schemaFor } from "../../apimachinery/patch/patch-schema.js";
import { applyStrategicMergePatch } from "../../apimachinery/patch/strategic-merge.js";
import { BUILT_IN_RESOURCES } from "../api-resources.js";
import { badRequest, StatusError } from "../status-error.js";
import type { ApiContext, ApiRequest, Target } from "./api-context.js";
import { serverSideApply } from "./apply.js";
import { decodedPatch } from "./field-validation.js";
import { mergePatch } from "./helpers.js";
import { existing, keyOf, viewOf } from "./objects.js";
import type { FieldValidation } from "./request-options.js";
import { checkedBody, fromScale, onlySubresource, requestWriter, writeObject } from "./write.js";
/**
 * PATCH: JSON, merge, strategic merge or server-side apply, on the object or its status or scale.
 * The patched object is decoded as `fieldValidation` says (field-validation.ts): what its kind does
 * not declare is dropped, warned of or refused.
 */
export function patchObject(
  api: ApiContext,
  target: Target,
  request: ApiRequest,
  validation: FieldValidation = "Warn",
): { readonly object: JsonMap; readonly warnings: readonly string[] } {
  const key = keyOf(target);
  if (request.contentType.startsWith("application/apply-patch+yaml") && target.subresource === undefined)
    return { object: serverSideApply(api, target, key, request), warnings: [] };
  const current = existing(api, key);
  const base = target.subresource === "scale" ? viewOf(target, current) : current;
  const patched = applyPatch(target, base, request);
  const decoded =
    target.subresource === "scale"
      ? { body: fromScale(target, current, patched), warnings: [] }
      : decodedPatch(
          target.resource,
          checkedBody(target.resource, patched),
          {
            type: request.contentType.split(";")[0]?.trim() ?? "",
            body: request.body,
            duplicates: request.duplicateFields ?? [],
          },
          validation,
        );
  const object = writeObject(
    api,
    key,
    current,
    onlySubresource(target, current, decoded.body),
    requestWriter(api, target, request),
  );
  return { object, warnings: decoded.warnings };
}

/** A JSON, merge or strategic merge patch applied to an object. */
export function applyPatch(target: Target, base: JsonMap, request: ApiRequest): JsonMap {
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
  if (!isJsonMap(result.value)) throw new StatusError(422, "Invalid", "the patched object is not an object");
  return result.value;
}
