import { isJsonMap, type Json } from "../json.js";
import type { JsonPatchOperation } from "./json-patch-operation.js";

/**
 * RFC 6902 operations that turn `from` into `to`: maps key by key (keys in sorted order, so the
 * answer does not depend on the order the server wrote them), lists of equal length element by
 * element, and anything else — a list that grew or shrank, a scalar, a changed type — replaced whole.
 * Applied to `from`, the operations give a value equal to `to`.
 */
export function jsonPatchDiff(from: Json, to: Json, path = ""): JsonPatchOperation[] {
  if (equalJson(from, to)) return [];
  if (isJsonMap(from) && isJsonMap(to)) {
    const operations: JsonPatchOperation[] = [];
    for (const key of [...new Set([...Object.keys(from), ...Object.keys(to)])].sort()) {
      const child = `${path}/${pointerToken(key)}`;
      if (!Object.hasOwn(to, key)) operations.push({ op: "remove", path: child });
      else if (!Object.hasOwn(from, key)) operations.push({ op: "add", path: child, value: to[key] });
      else operations.push(...jsonPatchDiff(from[key] as Json, to[key] as Json, child));
    }
    return operations;
  }
  if (Array.isArray(from) && Array.isArray(to) && from.length === to.length)
    return from.flatMap((item, index) => jsonPatchDiff(item, to[index] as Json, `${path}/${index}`));
  return [{ op: "replace", path, value: to }];
}

/** A key as one token of a JSON pointer (RFC 6901): `~` as `~0`, `/` as `~1`. */
export function pointerToken(key: string): string {
  return key.replaceAll("~", "~0").replaceAll("/", "~1");
}

// Deep equality of JSON values, key order aside (a null is a value here, unlike an absent key).
function equalJson(a: Json, b: Json): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b))
    return (
      Array.isArray(a) &&
      Array.isArray(b) &&
      a.length === b.length &&
      a.every((x, i) => equalJson(x, b[i] as Json))
    );
  if (isJsonMap(a) && isJsonMap(b)) {
    const keys = Object.keys(a);
    return (
      keys.length === Object.keys(b).length &&
      keys.every((k) => Object.hasOwn(b, k) && equalJson(a[k] as Json, b[k] as Json))
    );
  }
  return false;
}
