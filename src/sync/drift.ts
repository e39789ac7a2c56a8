import { isJsonMap, type Json, type JsonMap } from "../apimachinery/json.js";
import { SERVER_SET_METADATA } from "../apimachinery/server-metadata.js";

// Fields the server sets or that are write-only: never drift.
const IGNORED_TOP = new Set(["status"]);

/** One field where a live object departs from the rendered one. */
export interface DriftedField {
  readonly path: string;
  readonly rendered: Json | undefined;
  readonly live: Json | undefined;
}

/**
 * Where a live object departs from what gitfleet rendered, as dotted paths (at most `limit`): every
 * field the rendered object sets must be present in the live object with the same value; fields the
 * live object has besides (defaults, other managers' fields, status) are not drift. Lists are compared
 * item by item, maps by the rendered keys. Secret `stringData` is write-only and skipped. Pure.
 */
export function driftedPaths(rendered: JsonMap, live: JsonMap, limit = 5): string[] {
  return driftedFields(rendered, live, limit).map((field) => field.path);
}

/** driftedPaths with the values on each side. Pure. */
export function driftedFields(rendered: JsonMap, live: JsonMap, limit = 5): DriftedField[] {
  const found: DriftedField[] = [];
  for (const [key, value] of Object.entries(rendered)) {
    if (IGNORED_TOP.has(key) || (key === "stringData" && rendered.kind === "Secret")) continue;
    if (key === "metadata" && isJsonMap(value) && isJsonMap(live.metadata)) {
      for (const [field, inner] of Object.entries(value))
        if (!SERVER_SET_METADATA.has(field))
          compare(inner, live.metadata[field], `metadata.${field}`, found, limit);
      continue;
    }
    compare(value, live[key], key, found, limit);
  }
  return found;
}

function compare(
  want: Json | undefined,
  have: Json | undefined,
  path: string,
  found: DriftedField[],
  limit: number,
): void {
  if (found.length >= limit) return;
  // API servers drop empty maps and lists (omitempty): rendering `resources: {}` is not drift.
  if (have === undefined && isEmpty(want)) return;
  if (isJsonMap(want)) compareMaps(want, have, path, found, limit);
  else if (Array.isArray(want)) compareLists(want, have, path, found, limit);
  else if (want !== have && !(want === null && have === undefined))
    found.push({ path, rendered: want, live: have });
}

function compareMaps(
  want: JsonMap,
  have: Json | undefined,
  path: string,
  found: DriftedField[],
  limit: number,
): void {
  if (!isJsonMap(have)) {
    found.push({ path, rendered: want, live: have });
    return;
  }
  for (const [key, value] of Object.entries(want)) compare(value, have[key], `${path}.${key}`, found, limit);
}

function compareLists(
  want: Json[],
  have: Json | undefined,
  path: string,
  found: DriftedField[],
  limit: number,
): void {
  if (!Array.isArray(have) || have.length !== want.length) {
    found.push({ path, rendered: want, live: have });
    return;
  }
  for (const [index, item] of want.entries()) compare(item, have[index], `${path}[${index}]`, found, limit);
}

function isEmpty(value: Json | undefined): boolean {
  return (
    (Array.isArray(value) && value.length === 0) || (isJsonMap(value) && Object.keys(value).length === 0)
  );
}
