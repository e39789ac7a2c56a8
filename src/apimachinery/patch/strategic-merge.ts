import { asList, isJsonMap as isMap, type Json, type JsonMap, ownValue, setOwn } from "../json.js";
import { goStableSort } from "./go-stable-sort.js";
import type { FieldSchema, ListSchema, MapSchema } from "./patch-schema.js";

/** A JSON value. */

/** The patched object, or why the patch cannot be applied. */
export type PatchResult =
  | { readonly ok: true; readonly value: Json }
  | { readonly ok: false; readonly error: string };

const DIRECTIVE = "$patch";
const RETAIN_KEYS = "$retainKeys";
const SET_ORDER = "$setElementOrder/";
const DELETE_FROM = "$deleteFromPrimitiveList/";

class PatchError extends Error {}

/** Whose strategic merge to reproduce: `kubectl patch` (the API server's) or kustomize's (kyaml). */
export type PatchFlavor = "kubectl" | "kustomize";

/**
 * Applies a Kubernetes strategic merge patch, following k8s.io/apimachinery's strategicpatch package
 * as `kubectl patch --type strategic` uses it (MergeParallelList, IgnoreUnmatchedNulls): maps merge
 * key by key and `null` deletes; lists merge by their merge key (or as a set of scalars) where the
 * schema says so and are replaced otherwise; `$patch: replace|delete`, `$retainKeys`,
 * `$setElementOrder/<list>` and `$deleteFromPrimitiveList/<list>` are honoured; merged lists are
 * ordered as the API server orders them. Pure: neither input is modified.
 */
export function applyStrategicMergePatch(
  original: Json,
  patch: Json,
  schema: MapSchema | undefined,
  flavor: PatchFlavor = "kubectl",
): PatchResult {
  try {
    if (!isMap(patch)) return { ok: false, error: "a strategic merge patch must be a mapping" };
    const base = isMap(original) ? clone(original) : {};
    return { ok: true, value: mergeMap(base, clone(patch), schema, flavor) };
  } catch (error) {
    if (error instanceof PatchError) return { ok: false, error: error.message };
    throw error;
  }
}

function mergeMap(
  original: JsonMap,
  patch: JsonMap,
  schema: MapSchema | undefined,
  flavor: PatchFlavor,
): JsonMap {
  const directive = patch[DIRECTIVE];
  if (directive !== undefined) return mapDirective(directive, patch);
  // kustomize (kyaml) knows `$patch` alone: its other directives are fields like any other there.
  if (flavor === "kustomize") {
    for (const [key, patchValue] of Object.entries(patch))
      mergeField(original, key, patchValue, fieldSchema(schema, key), flavor);
    return original;
  }
  for (const key of Object.keys(patch)) checkDirectiveName(key);
  applyRetainKeys(original, patch);
  mergeOrderedLists(original, patch, schema, flavor);
  // A key that starts with "$" but names no directive is a field, as kubectl keeps it.
  // (mergeOrderedLists took the $setElementOrder keys out of the patch.)
  for (const [key, patchValue] of Object.entries(patch)) {
    if (key.startsWith(DELETE_FROM)) continue;
    mergeField(original, key, patchValue, fieldSchema(schema, key), flavor);
  }
  // Deletions last, so "delete" wins over an add of the same value. (kubectl applies the two in Go map
  // order, which varies from run to run: for such a patch it gives either result.)
  for (const [key, values] of Object.entries(patch)) {
    if (key.startsWith(DELETE_FROM)) deleteFromPrimitiveList(original, key.slice(DELETE_FROM.length), values);
  }
  return original;
}

// As in k8s, every key that starts with a list directive's name is that directive, and must name a list.
function checkDirectiveName(key: string): void {
  for (const prefix of [SET_ORDER, DELETE_FROM])
    if (key.startsWith(prefix.slice(0, -1)) && !key.startsWith(prefix))
      throw new PatchError(`invalid patch directive ${key}: it must be ${prefix}<list>`);
}

function mergeField(
  original: JsonMap,
  key: string,
  patchValue: Json,
  field: FieldSchema | undefined,
  flavor: PatchFlavor,
): void {
  if (patchValue === null || deletesField(patchValue, flavor)) {
    delete original[key];
    return;
  }
  // Only the original's own fields merge: an inherited one ("constructor") is not part of the object.
  const originalValue = ownValue(original, key);
  if (flavor === "kustomize") checkSameNodeKind(key, originalValue, patchValue);
  const value = mergedValue(originalValue, patchValue, field, flavor);
  if (value === undefined) delete original[key];
  else setOwn(original, key, value);
}

function mergedValue(
  originalValue: Json | undefined,
  patchValue: Json,
  field: FieldSchema | undefined,
  flavor: PatchFlavor,
): Json | undefined {
  // A value the original lacks, or of another type, is taken from the patch, cleaned as kubectl does.
  if (originalValue === undefined || !sameType(originalValue, patchValue))
    return newValue(patchValue, field, flavor);
  if (isMap(originalValue) && isMap(patchValue))
    return mergeMap(originalValue, patchValue, field?.kind === "map" ? field : undefined, flavor);
  if (Array.isArray(originalValue) && Array.isArray(patchValue))
    return mergeListField(originalValue, patchValue, field?.kind === "list" ? field : undefined, flavor);
  return patchValue;
}

// kustomize deletes a field whose patch is `$patch: delete`; kubectl leaves it an empty mapping.
function deletesField(patchValue: Json, flavor: PatchFlavor): boolean {
  return flavor === "kustomize" && isMap(patchValue) && patchValue[DIRECTIVE] === "delete";
}

// kustomize refuses to merge a mapping, a list and a scalar into one another; kubectl replaces.
function checkSameNodeKind(key: string, originalValue: Json | undefined, patchValue: Json): void {
  if (originalValue == null || nodeKind(originalValue) === nodeKind(patchValue)) return;
  throw new PatchError(
    `field ${JSON.stringify(key)}: the patch gives a ${nodeKind(patchValue)} where the object has a ${nodeKind(originalValue)}`,
  );
}

// The schema of a field, looked up as an own property (a field named "constructor" has none).
function fieldSchema(schema: MapSchema | undefined, key: string): FieldSchema | undefined {
  return schema && Object.hasOwn(schema.fields, key) ? schema.fields[key] : undefined;
}

function mapDirective(directive: Json, patch: JsonMap): JsonMap {
  if (directive === "replace") {
    const { [DIRECTIVE]: _, ...rest } = patch;
    return rest;
  }
  if (directive === "delete") return {};
  throw new PatchError(`invalid patch directive ${JSON.stringify(directive)} in a mapping`);
}

function applyRetainKeys(original: JsonMap, patch: JsonMap): void {
  const retain = patch[RETAIN_KEYS];
  if (retain === undefined) return;
  delete patch[RETAIN_KEYS];
  if (!Array.isArray(retain)) throw new PatchError(`${RETAIN_KEYS} must be a list of field names`);
  for (const key of Object.keys(original)) if (!retain.includes(key)) delete original[key];
}

function deleteFromPrimitiveList(original: JsonMap, key: string, values: Json): void {
  const list = ownValue(original, key);
  // kubectl leaves the list as it is when either is no list (a directive it cannot read is ignored).
  if (!Array.isArray(list) || !Array.isArray(values)) return;
  setOwn(
    original,
    key,
    list.filter((item) => !values.includes(item)),
  );
}

function mergeListField(
  original: Json[],
  patch: Json[],
  schema: ListSchema | undefined,
  flavor: PatchFlavor,
): Json[] {
  if (schema?.strategy !== "merge") return patch;
  return mergeList(original, patch, schema, flavor);
}

// Merges a list with merge strategy, then orders it: the patch decides the order of the items it
// names, the original the order of the rest.
function mergeList(original: Json[], patch: Json[], schema: ListSchema, flavor: PatchFlavor): Json[] {
  checkElementTypes(original, patch, flavor);
  const mergeKey = schema.mergeKey;
  const scalars = !isListOfMaps(original, patch);
  // kustomize drops a null the patch lists, and takes scalars of any types together.
  if (scalars && flavor === "kustomize") return unique([...patch.filter((v) => v !== null), ...original]);
  if (scalars) return normalizeElementOrder(unique([...original, ...patch]), patch, original, undefined);
  if (mergeKey === undefined) throw new PatchError("cannot merge a list of mappings without a merge key");
  // As in k8s, the order is taken from the lists after `$patch` elements were applied: an item the
  // patch deletes and adds again counts as new.
  const [base, items] = applySpecialElements(original, patch, mergeKey);
  checkMergeKeys(base, mergeKey);
  const merged = mergeByKey(base, items, mergeKey, schema.items, flavor);
  // A merge can take an item's key away (`name: null` in the patch): kubectl refuses the list then.
  checkMergeKeys(merged, mergeKey);
  if (flavor === "kustomize") return patchItemsFirst(merged, items, mergeKey);
  return normalizeElementOrder(merged, items, base, mergeKey);
}

function applySpecialElements(original: Json[], patch: Json[], mergeKey: string): [Json[], JsonMap[]] {
  let base = original;
  let replace = false;
  const items: JsonMap[] = [];
  for (const item of patch) {
    if (!isMap(item)) throw new PatchError("list items must all be mappings");
    const directive = listDirective(item, mergeKey);
    if (directive === undefined) items.push(item);
    else if (directive === "delete") base = base.filter((existing) => !sameItem(existing, item, mergeKey));
    else replace = true;
  }
  return replace ? [items, []] : [base, items];
}

// As k8s sliceElementType: the items of both lists are of one type, and none is a list or null
// (kustomize refuses lists of lists alone).
function checkElementTypes(original: readonly Json[], patch: readonly Json[], flavor: PatchFlavor): void {
  let first: string | undefined;
  for (const item of [...original, ...patch]) {
    if (Array.isArray(item)) throw new PatchError("lists of lists cannot be merged");
    if (flavor === "kustomize") continue;
    if (item === null) throw new PatchError("a merged list cannot hold null");
    const type = isMap(item) ? "mapping" : typeof item;
    first ??= type;
    if (type !== first)
      throw new PatchError(`the items of a merged list must be of one type, not ${first} and ${type}`);
  }
}

// Every item of a merged list is found by its merge key, which must be there and be a scalar (kubectl
// refuses an item without it, and fails on one that is a mapping or a list).
function checkMergeKeys(items: readonly Json[], mergeKey: string): void {
  for (const item of items) {
    const value = isMap(item) ? ownValue(item, mergeKey) : undefined;
    if (value === undefined)
      throw new PatchError(`list item ${JSON.stringify(item)} does not contain the merge key "${mergeKey}"`);
    if (value !== null && typeof value === "object")
      throw new PatchError(
        `the merge key "${mergeKey}" of list item ${JSON.stringify(item)} is not a scalar`,
      );
  }
}

// The `$patch` directive of a list element: delete (by merge key) or replace; anything else is refused.
function listDirective(item: JsonMap, mergeKey: string): "delete" | "replace" | undefined {
  const directive = item[DIRECTIVE];
  if (directive === undefined || directive === "replace") return directive;
  if (directive === "merge") throw new PatchError("merging lists cannot yet be specified in the patch");
  if (directive !== "delete")
    throw new PatchError(`invalid patch directive ${JSON.stringify(directive)} in a list`);
  if (!Object.hasOwn(item, mergeKey))
    throw new PatchError(`$patch: delete needs the merge key "${mergeKey}"`);
  return "delete";
}

function mergeByKey(
  original: Json[],
  items: JsonMap[],
  mergeKey: string,
  itemSchema: MapSchema | undefined,
  flavor: PatchFlavor,
): Json[] {
  const merged = [...original];
  checkMergeKeys(items, mergeKey);
  for (const item of items) {
    const index = merged.findIndex((existing) => sameItem(existing, item, mergeKey));
    const existing = merged[index];
    if (isMap(existing)) merged[index] = mergeMap(existing, item, itemSchema, flavor);
    else merged.push(item);
  }
  return merged;
}

// $setElementOrder/<list>: merge the list and order it by the directive (k8s mergePatchIntoOriginal).
function mergeOrderedLists(
  original: JsonMap,
  patch: JsonMap,
  schema: MapSchema | undefined,
  flavor: PatchFlavor,
): void {
  for (const key of Object.keys(patch)) {
    if (!key.startsWith(SET_ORDER)) continue;
    const field = key.slice(SET_ORDER.length);
    const order = ownValue(patch, key);
    if (!Array.isArray(order)) throw new PatchError(`${key} must be a list`);
    const listSchema = fieldSchema(schema, field);
    setOwn(
      original,
      field,
      mergeInOrder(
        original,
        patch,
        field,
        order,
        listSchema?.kind === "list" ? listSchema : undefined,
        flavor,
      ),
    );
    delete patch[key];
    delete patch[field];
    delete patch[DELETE_FROM + field];
  }
}

function mergeInOrder(
  original: JsonMap,
  patch: JsonMap,
  field: string,
  order: Json[],
  listSchema: ListSchema | undefined,
  flavor: PatchFlavor,
): Json[] {
  const originalList = asList(ownValue(original, field));
  const patchList = asList(ownValue(patch, field));
  const mergeKey = listSchema?.mergeKey;
  checkSetElementOrder(patchList, order, mergeKey, SET_ORDER + field);
  const deletions = asList(ownValue(patch, DELETE_FROM + field));
  const base = originalList.filter((item) => !deletions.includes(item));
  const merges = listSchema?.strategy === "merge";
  const merged = merges ? mergeList(base, patchList, listSchema, flavor) : patchList;
  const byKey = merges && mergeKey !== undefined && isListOfMaps(originalList, patchList);
  if (byKey) checkMergeKeys(order, mergeKey);
  const serverOrder = byKey ? aliasedServerOrder(base, patchList, mergeKey) : originalList;
  return normalizeElementOrder(merged, order, serverOrder, byKey ? mergeKey : undefined);
}

// The patch list's items (deletions aside) must appear in $setElementOrder, in the same order.
function checkSetElementOrder(
  patchList: Json[],
  order: Json[],
  mergeKey: string | undefined,
  directive: string,
): void {
  if (order.length === 0) return;
  const items = patchList.filter((item) => !(isMap(item) && item[DIRECTIVE] === "delete"));
  let p = 0;
  let o = 0;
  // As k8s walks them: an item with another directive is passed over while the order lasts.
  while (p < items.length && o < order.length) {
    const item = items[p] as Json;
    if (isMap(item) && DIRECTIVE in item) {
      p++;
      continue;
    }
    if (sameItem(item, order[o] as Json, mergeKey)) p++;
    o++;
  }
  if (p < items.length) throw new PatchError(`the order of the patch list does not match ${directive}`);
}

/**
 * Orders a merged list as the API server does (k8s normalizeElementOrder): the items `order` names
 * sorted by it, the rest sorted by `serverOrder`, then interleaved (mergeSortedSlice): the rest's head
 * goes first only when both heads are in `serverOrder` and it comes first there.
 */
function normalizeElementOrder(
  merged: Json[],
  order: Json[],
  serverOrder: Json[],
  mergeKey: string | undefined,
): Json[] {
  const inOrder = (item: Json) => order.some((o) => sameItem(o, item, mergeKey));
  const named = sortBy(merged.filter(inOrder), order, mergeKey);
  const rest = sortBy(
    merged.filter((item) => !inOrder(item)),
    serverOrder,
    mergeKey,
  );
  return interleave(rest, named, serverOrder, mergeKey);
}

// k8s normalizeSliceOrder: Go's stable sort by the position in `order`, with its comparison that
// calls an item "less" whenever either of the two is missing from `order`.
function sortBy(items: Json[], order: Json[], mergeKey: string | undefined): Json[] {
  return goStableSort(items, (a, b) => {
    const ia = indexIn(order, a, mergeKey);
    const ib = indexIn(order, b, mergeKey);
    return ib < 0 || ia < ib;
  });
}

/**
 * The "server order" k8s uses when it re-orders a list by $setElementOrder. It is meant to be the
 * original list, but k8s deletes `$patch: delete` items in place and appends new items to the same
 * Go slice, so the original it reads afterwards shows the shifted and appended items. kubectl's
 * output depends on this, so we reproduce it: same backing array, same length as the original.
 */
function aliasedServerOrder(original: Json[], patch: Json[], mergeKey: string): Json[] {
  const backing = [...original];
  const capacity = backing.length;
  let length = capacity;
  const find = (item: Json) =>
    backing.slice(0, length).findIndex((existing) => sameItem(existing, item, mergeKey));
  for (const item of patch) {
    if (!(isMap(item) && item[DIRECTIVE] === "delete")) continue;
    for (let i = find(item); i >= 0; i = find(item)) {
      backing.copyWithin(i, i + 1, length);
      length--;
    }
  }
  for (const item of patch) {
    if (isMap(item) && DIRECTIVE in item) continue;
    if (find(item) >= 0) continue;
    // An append within the slice's capacity writes into the shared array; past it, Go copies.
    if (length >= capacity) break;
    backing[length] = item;
    length++;
  }
  return backing;
}

function interleave(left: Json[], right: Json[], original: Json[], mergeKey: string | undefined): Json[] {
  const out: Json[] = [];
  let i = 0;
  let j = 0;
  while (i < left.length || j < right.length) {
    const l = left[i];
    const r = right[j];
    if (j >= right.length || (l !== undefined && r !== undefined && isBefore(l, r, original, mergeKey))) {
      out.push(l as Json);
      i++;
    } else {
      out.push(r as Json);
      j++;
    }
  }
  return out;
}

// True when both are in the original and l comes first there (mergeSortedSlice's "less").
function isBefore(l: Json, r: Json, original: Json[], mergeKey: string | undefined): boolean {
  const li = indexIn(original, l, mergeKey);
  const ri = indexIn(original, r, mergeKey);
  return li >= 0 && ri >= 0 && li < ri;
}

function indexIn(list: Json[], item: Json, mergeKey: string | undefined): number {
  return list.findIndex((candidate) => sameItem(candidate, item, mergeKey));
}

// Items of a merged list are the same by their merge key's value (a scalar: checkMergeKeys), scalars
// by their value.
function sameItem(a: Json, b: Json, mergeKey: string | undefined): boolean {
  if (mergeKey === undefined) return a === b;
  return isMap(a) && isMap(b) && ownValue(a, mergeKey) === ownValue(b, mergeKey);
}

// kustomize merges lists "prepending": the items the patch names come first, in its order, then
// the original's other items in theirs.
function patchItemsFirst(merged: Json[], items: Json[], mergeKey: string): Json[] {
  // Every patch item was merged, so each finds its merged item.
  const named = items.map((item) => merged.find((m) => sameItem(m, item, mergeKey)) as Json);
  return [...new Set(named), ...merged.filter((m) => !named.includes(m))];
}

function unique(items: Json[]): Json[] {
  const out: Json[] = [];
  for (const item of items) if (!out.includes(item)) out.push(item);
  return out;
}

function isListOfMaps(original: Json[], patch: Json[]): boolean {
  const first = original[0] ?? patch[0];
  return isMap(first ?? null);
}

/**
 * A patch value for a field the original lacks, as kubectl leaves it (checked against kubectl 1.32):
 * nulls have nothing to delete and are dropped, and a mapping that carries a `$patch` directive has
 * nothing to act on and is dropped with it — from maps and from lists alike. kustomize (kyaml's
 * merge) cleans the same way except inside a list the schema does not merge: that one it copies
 * as written, directives and nulls included.
 */
function newValue(value: Json, field: FieldSchema | undefined, flavor: PatchFlavor): Json | undefined {
  if (Array.isArray(value)) {
    const merges = field?.kind === "list" && field.strategy === "merge";
    if (flavor === "kustomize" && !merges) return value;
    const items = field?.kind === "list" ? field.items : undefined;
    return value.flatMap((item) => {
      const cleaned = newValue(item, items, flavor);
      return cleaned === undefined ? [] : [cleaned];
    });
  }
  if (!isMap(value)) return value;
  if (DIRECTIVE in value) return undefined;
  const out: JsonMap = {};
  const schema = field?.kind === "map" ? field : undefined;
  for (const [key, child] of Object.entries(value)) {
    if (child === null) continue;
    const cleaned = newValue(child, fieldSchema(schema, key), flavor);
    if (cleaned !== undefined) setOwn(out, key, cleaned);
  }
  return out;
}

function nodeKind(value: Json): "mapping" | "list" | "scalar" {
  if (Array.isArray(value)) return "list";
  return isMap(value) ? "mapping" : "scalar";
}

// Whether two values are of one JSON type (null, list, mapping, string, number, boolean).
function sameType(a: Json, b: Json): boolean {
  if (a === null || b === null) return a === b;
  if (Array.isArray(a) || Array.isArray(b)) return Array.isArray(a) && Array.isArray(b);
  return typeof a === typeof b;
}

function clone<T extends Json>(value: T): T {
  return structuredClone(value);
}
