import fastJsonPatch from "fast-json-patch";
import type { Json } from "../json.js";
import type { JsonPatchOperation } from "./json-patch-operation.js";
import type { PatchResult } from "./strategic-merge.js";

/**
 * Applies an RFC 6902 JSON patch (all six operations) with fast-json-patch, validating every
 * operation first. A path that does not exist, or a failed `test`, is an error naming the operation —
 * never a silent skip. Pure: the document is not modified.
 */
export function applyJsonPatch(document: Json, operations: readonly JsonPatchOperation[]): PatchResult {
  try {
    // The operations were validated against the Override schema; fast-json-patch re-validates them.
    const patch = operations as fastJsonPatch.Operation[];
    const result = fastJsonPatch.applyPatch(structuredClone(document), patch, true, false);
    return { ok: true, value: result.newDocument as Json };
  } catch (error) {
    if (error instanceof fastJsonPatch.JsonPatchError) {
      const operation = error.operation as { op?: string; path?: string } | undefined;
      const where = operation
        ? `operation ${Number(error.index ?? 0) + 1} (${operation.op} ${operation.path})`
        : "the patch";
      return { ok: false, error: `${where}: ${describeJsonPatchError(error.name)}` };
    }
    throw error;
  }
}

// fast-json-patch names its errors in SCREAMING_SNAKE; say what each means.
function describeJsonPatchError(name: string): string {
  const messages: Record<string, string> = {
    OPERATION_PATH_UNRESOLVABLE: "the path does not exist in the object",
    OPERATION_FROM_UNRESOLVABLE: "the from path does not exist in the object",
    OPERATION_PATH_ILLEGAL_ARRAY_INDEX: "the list index is not a number",
    OPERATION_VALUE_OUT_OF_BOUNDS: "the list index is past the end of the list",
    OPERATION_VALUE_REQUIRED: "the operation needs a value",
    TEST_OPERATION_FAILED: "the test failed: the value differs",
    OPERATION_OP_INVALID: "unknown operation",
    OPERATION_PATH_INVALID: "the path is not a JSON pointer",
  };
  return messages[name] ?? name.toLowerCase().replaceAll("_", " ");
}
