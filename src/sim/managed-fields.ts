import { isJsonMap, type Json, type JsonMap } from "../apimachinery/json.js";
import type { FieldSchema, ListSchema, MapSchema } from "../apimachinery/patch/patch-schema.js";

// Field ownership for server-side apply, in the shape of managedFields' fieldsV1: a path is a list of
// elements — "f:<field>", "k:<merge key as JSON>" (an element of a list merged by key), "v:<value as
// JSON>" (a value of a set of scalars) and "." (the keyed element itself).

/** Leaf paths (each a JSON array of path elements) and the value found there. */
export type Leaves = Map<string, Json>;

/** Fields the server sets and nobody owns. */
const SERVER_FIELDS = new Set(["apiVersion", "kind", "status"]);
const SERVER_METADATA = new Set([
  "name",
  "namespace",
  "uid",
  "resourceVersion",
  "generation",
  "creationTimestamp",
  "managedFields",
  "deletionTimestamp",
  "deletionGracePeriodSeconds",
  "selfLink",
]);

/** Every owned leaf of an object, with its value. */
export function leavesOf(object: JsonMap, schema: MapSchema | undefined): Leaves {
  const leaves: Leaves = new Map();
  for (const [key, value] of ownedParts(object)) leavesOfPart(key, value, schema, leaves);
  return leaves;
}

/**
 * The top-level fields of an object that hold owned leaves, by name: everything but the server's
 * fields, and metadata without the server's metadata (left out when nothing else is in it).
 */
export function ownedParts(object: JsonMap): Map<string, Json> {
  const parts = new Map<string, Json>();
  for (const [key, value] of Object.entries(object)) {
    if (SERVER_FIELDS.has(key)) continue;
    if (key === "metadata" && isJsonMap(value)) {
      const metadata = Object.fromEntries(Object.entries(value).filter(([k]) => !SERVER_METADATA.has(k)));
      // Name and namespace alone are nobody's fields: no empty "f:metadata" is recorded.
      if (Object.keys(metadata).length > 0) parts.set(key, metadata);
    } else parts.set(key, value);
  }
  return parts;
}

/** Adds the owned leaves of one top-level field (a value ownedParts gave) to `leaves`. */
export function leavesOfPart(key: string, value: Json, schema: MapSchema | undefined, leaves: Leaves): void {
  walk(value, fieldSchema(schema, key), `[${JSON.stringify(`f:${key}`)}`, leaves);
}

// A path is built as the text of its JSON array, less the closing bracket: `["f:spec","f:replicas"`.
// Each element is turned to JSON once, and a leaf's key is its path closed.
function walk(value: Json, schema: FieldSchema | undefined, path: string, leaves: Leaves): void {
  if (isJsonMap(value) && Object.keys(value).length > 0) {
    for (const [key, child] of Object.entries(value))
      walk(child, fieldSchema(schema, key), `${path},${JSON.stringify(`f:${key}`)}`, leaves);
  } else if (Array.isArray(value) && schema?.kind === "list" && schema.strategy === "merge") {
    for (const item of value) walkElement(item, schema, path, leaves);
  } else leaves.set(`${path}]`, value);
}

// One element of a list merged by key (its own "." leaf, then its fields) or of a set of scalars.
function walkElement(item: Json, schema: ListSchema, path: string, leaves: Leaves): void {
  if (!schema.mergeKey || !isJsonMap(item)) {
    leaves.set(`${path},${JSON.stringify(`v:${JSON.stringify(item)}`)}]`, item);
    return;
  }
  const element = `${path},${JSON.stringify(`k:${JSON.stringify({ [schema.mergeKey]: item[schema.mergeKey] ?? null })}`)}`;
  leaves.set(`${element},"."]`, item[schema.mergeKey] ?? null);
  for (const [key, child] of Object.entries(item))
    walk(child, fieldSchema(schema.items, key), `${element},${JSON.stringify(`f:${key}`)}`, leaves);
}

function fieldSchema(schema: FieldSchema | undefined, key: string): FieldSchema | undefined {
  return schema?.kind === "map" ? schema.fields[key] : undefined;
}

/** fieldsV1 of a set of leaf paths. */
export function toFieldsV1(paths: Iterable<string>): JsonMap {
  const root: JsonMap = {};
  for (const key of paths) {
    let node = root;
    for (const element of JSON.parse(key) as string[]) {
      const next = (node[element] as JsonMap | undefined) ?? {};
      node[element] = next;
      node = next;
    }
  }
  return root;
}

/** The leaf paths of a fieldsV1. */
export function fromFieldsV1(fields: Json | undefined): Set<string> {
  const paths = new Set<string>();
  const visit = (node: Json, path: string[]) => {
    const entries = isJsonMap(node) ? Object.entries(node) : [];
    if (entries.length === 0 && path.length > 0) paths.add(JSON.stringify(path));
    for (const [element, child] of entries) visit(child, [...path, element]);
  };
  if (fields !== undefined) visit(fields, []);
  return paths;
}

/** A leaf path as people read it: `.spec.template.spec.containers[name="main"].image`. */
export function describePath(key: string): string {
  let text = "";
  for (const element of JSON.parse(key) as string[]) {
    if (element.startsWith("f:")) text += `.${element.slice(2)}`;
    else if (element.startsWith("k:")) {
      const fields = JSON.parse(element.slice(2)) as Record<string, Json>;
      text += `[${Object.entries(fields)
        .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
        .join(",")}]`;
    } else if (element.startsWith("v:")) text += `[=${element.slice(2)}]`;
  }
  return text;
}

/** The object without the field at a leaf path (a keyed element or set value removed from its list). */
export function withoutLeaf(object: JsonMap, key: string): JsonMap {
  return removeAt(object, JSON.parse(key) as string[]) as JsonMap;
}

function removeAt(value: Json, path: readonly string[]): Json {
  const [head, ...rest] = path;
  if (head === undefined) return value;
  if (head.startsWith("f:") && isJsonMap(value)) {
    const name = head.slice(2);
    if (!(name in value)) return value;
    const copy = { ...value };
    if (rest.length === 0) delete copy[name];
    else copy[name] = removeAt(value[name] ?? null, rest);
    return copy;
  }
  if (!Array.isArray(value)) return value;
  if (head.startsWith("v:")) {
    const target = JSON.stringify(JSON.parse(head.slice(2)));
    return value.filter((item) => JSON.stringify(item) !== target);
  }
  if (head.startsWith("k:")) {
    const match = JSON.parse(head.slice(2)) as Record<string, Json>;
    const hit = (item: Json) =>
      isJsonMap(item) &&
      Object.entries(match).every(([k, v]) => JSON.stringify(item[k] ?? null) === JSON.stringify(v));
    if (rest[0] === ".") return value.filter((item) => !hit(item));
    return value.map((item) => (hit(item) ? removeAt(item, rest) : item));
  }
  return value;
}

/**
 * Merges an applied configuration into the live object: maps field by field, lists merged by key
 * element by element (new elements appended), sets of scalars as a union, everything else replaced.
 */
export function mergeApplied(live: Json, applied: Json, schema: FieldSchema | undefined): Json {
  if (isJsonMap(applied)) {
    const base: JsonMap = isJsonMap(live) ? { ...live } : {};
    for (const [key, value] of Object.entries(applied))
      base[key] = mergeApplied(base[key] ?? null, value, fieldSchema(schema, key));
    return base;
  }
  if (Array.isArray(applied) && Array.isArray(live) && schema?.kind === "list" && schema.strategy === "merge")
    return mergeList(live, applied, schema);
  return applied;
}

function mergeList(live: Json[], applied: Json[], schema: ListSchema): Json[] {
  const mergeKey = schema.mergeKey;
  if (!mergeKey)
    return [...live, ...applied.filter((v) => !live.some((l) => JSON.stringify(l) === JSON.stringify(v)))];
  const keyOf = (item: Json) => (isJsonMap(item) ? JSON.stringify(item[mergeKey] ?? null) : undefined);
  const result = [...live];
  for (const item of applied) {
    const at = result.findIndex((l) => keyOf(l) !== undefined && keyOf(l) === keyOf(item));
    if (at >= 0) result[at] = mergeApplied(result[at] ?? null, item, schema.items);
    else result.push(item);
  }
  return result;
}
