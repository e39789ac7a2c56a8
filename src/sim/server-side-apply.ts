import { asMap, isJsonMap, type Json, type JsonMap } from "../apimachinery/json.js";
import type { MapSchema } from "../apimachinery/patch/patch-schema.js";
import {
  fromFieldsV1,
  leavesOf,
  leavesOfPart,
  mergeApplied,
  ownedParts,
  toFieldsV1,
  withoutLeaf,
} from "./managed-fields.js";

/** One manager's fields, as an entry of metadata.managedFields. */
interface ManagerEntry {
  readonly manager: string;
  readonly operation: "Apply" | "Update";
  readonly apiVersion: string;
  readonly time: string;
  /** "status" or "scale" for a write to that subresource. */
  readonly subresource?: string;
  readonly fields: Set<string>;
  /** The fieldsV1 the entry was read from, and its fields then: written again as it was when unchanged. */
  readonly read?: { readonly fieldsV1: Json; readonly fields: ReadonlySet<string> };
}

/** Who wrote, and when: the context of a write. */
export interface Writer {
  readonly manager: string;
  readonly apiVersion: string;
  readonly time: string;
  readonly schema: MapSchema | undefined;
  /** The subresource written through, if any (managedFields records it). */
  readonly subresource?: string;
}

/** A field another manager owns with a different value. */
export interface ApplyConflict {
  readonly manager: string;
  readonly operation: "Apply" | "Update";
  readonly apiVersion: string;
  readonly time: string;
  readonly subresource?: string;
  /** The leaf path key. */
  readonly path: string;
}

function entriesOf(object: JsonMap | undefined): ManagerEntry[] {
  const list = object ? asMap(object.metadata).managedFields : undefined;
  if (!Array.isArray(list)) return [];
  return list.filter(isJsonMap).map((entry) => ({
    manager: String(entry.manager ?? ""),
    operation: entry.operation === "Apply" ? "Apply" : "Update",
    apiVersion: String(entry.apiVersion ?? ""),
    time: String(entry.time ?? ""),
    ...(typeof entry.subresource === "string" && entry.subresource !== ""
      ? { subresource: entry.subresource }
      : {}),
    ...fieldsOf(entry.fieldsV1),
  }));
}

function fieldsOf(fieldsV1: Json | undefined): Pick<ManagerEntry, "fields" | "read"> {
  const fields = fromFieldsV1(fieldsV1);
  return { fields, ...(fieldsV1 === undefined ? {} : { read: { fieldsV1, fields: new Set(fields) } }) };
}

function sameFields(a: ReadonlySet<string>, b: ReadonlySet<string>): boolean {
  if (a.size !== b.size) return false;
  for (const path of a) if (!b.has(path)) return false;
  return true;
}

function withEntries(object: JsonMap, entries: readonly ManagerEntry[]): JsonMap {
  const managedFields = entries
    .filter((entry) => entry.fields.size > 0)
    .map((entry) => ({
      manager: entry.manager,
      operation: entry.operation,
      apiVersion: entry.apiVersion,
      time: entry.time,
      fieldsType: "FieldsV1",
      fieldsV1:
        entry.read && sameFields(entry.read.fields, entry.fields)
          ? entry.read.fieldsV1
          : toFieldsV1([...entry.fields].sort()),
      ...(entry.subresource ? { subresource: entry.subresource } : {}),
    }));
  // Nobody owns anything: the API server keeps no managedFields at all.
  const { managedFields: _, ...metadata } = asMap(object.metadata);
  return { ...object, metadata: managedFields.length > 0 ? { ...metadata, managedFields } : metadata };
}

const same = (a: Json | undefined, b: Json | undefined) => JSON.stringify(a) === JSON.stringify(b);

/**
 * Server-side apply of `config` by `writer.manager` onto `live` (undefined: the object is created):
 * a field another manager owns with a different value is a conflict unless `force` (which takes the
 * field over); fields this manager applied before and no longer applies are removed when no other
 * manager owns them; the result records this manager's applied fields in managedFields.
 */
export function applyConfiguration(
  live: JsonMap | undefined,
  config: JsonMap,
  writer: Writer,
  force: boolean,
): { readonly object: JsonMap } | { readonly conflicts: readonly ApplyConflict[] } {
  const applied = leavesOf(config, writer.schema);
  const current = live ? leavesOf(live, writer.schema) : new Map<string, Json>();
  const entries = entriesOf(live);
  const mine = (entry: ManagerEntry) => entry.manager === writer.manager && entry.operation === "Apply";
  const conflicts = conflictsOf(
    applied,
    current,
    entries.filter((entry) => !mine(entry)),
  );
  if (conflicts.length > 0 && !force) return { conflicts };
  for (const { manager, path } of conflicts)
    for (const entry of entries) if (entry.manager === manager) entry.fields.delete(path);
  const previous = entries.find(mine)?.fields ?? new Set<string>();
  const others = entries.filter((entry) => !mine(entry));
  let object: JsonMap = live ?? {};
  for (const path of previous)
    if (!applied.has(path) && !others.some((entry) => entry.fields.has(path)))
      object = withoutLeaf(object, path);
  object = mergeApplied(object, config, writer.schema) as JsonMap;
  const entry: ManagerEntry = { ...writer, operation: "Apply", fields: new Set(applied.keys()) };
  return { object: withEntries(object, [...others, entry]) };
}

// Fields another manager owns whose live value differs from the applied one.
function conflictsOf(
  applied: Map<string, Json>,
  current: Map<string, Json>,
  others: readonly ManagerEntry[],
): ApplyConflict[] {
  const conflicts: ApplyConflict[] = [];
  for (const [path, value] of applied) {
    if (!current.has(path) || same(current.get(path), value)) continue;
    for (const entry of others)
      if (entry.fields.has(path)) {
        const { fields: _, ...owner } = entry;
        conflicts.push({ ...owner, path });
      }
  }
  return conflicts;
}

/**
 * Records a non-apply write (create, update, patch) by `writer.manager`: the fields it set or changed
 * become its own (taken from any other manager, as the API server does for updates), and fields it
 * removed are owned by nobody.
 */
export function recordUpdate(previous: JsonMap | undefined, next: JsonMap, writer: Writer): JsonMap {
  const { before, after } = differingLeaves(previous, next, writer.schema);
  const changed = [...after]
    .filter(([path, value]) => !before.has(path) || !same(before.get(path), value))
    .map(([path]) => path);
  const removed = [...before.keys()].filter((path) => !after.has(path));
  // A request that sets managedFields itself replaces them (`[{}]` clears them), as the API server allows.
  const given = asMap(next.metadata).managedFields;
  const replaced = Array.isArray(given) && !sameManagers(given, asMap(previous?.metadata).managedFields);
  const entries = entriesOf(replaced ? next : previous);
  for (const entry of entries) for (const path of [...changed, ...removed]) entry.fields.delete(path);
  const existing = entries.find(
    (entry) =>
      entry.manager === writer.manager &&
      entry.operation === "Update" &&
      (entry.subresource ?? "") === (writer.subresource ?? ""),
  );
  const mine: ManagerEntry = {
    ...writer,
    operation: "Update",
    fields: new Set([...(existing?.fields ?? []), ...changed]),
    ...(existing?.read ? { read: existing.read } : {}),
  };
  return withEntries(next, [
    ...entries.filter((entry) => entry !== existing),
    ...(mine.fields.size > 0 ? [mine] : []),
  ]);
}

// The owned leaves before and after a write, under the top-level fields that differ only (a status
// write, say, leaves spec and metadata as they were): an unchanged field has no changed and no
// removed leaf, so its leaves need not be listed.
function differingLeaves(
  previous: JsonMap | undefined,
  next: JsonMap,
  schema: Writer["schema"],
): { before: Map<string, Json>; after: Map<string, Json> } {
  const before = new Map<string, Json>();
  const after = new Map<string, Json>();
  const was = previous ? ownedParts(previous) : new Map<string, Json>();
  const now = ownedParts(next);
  for (const key of new Set([...was.keys(), ...now.keys()])) {
    const old = was.get(key);
    const fresh = now.get(key);
    if (old !== undefined && fresh !== undefined && (old === fresh || same(old, fresh))) continue;
    if (old !== undefined) leavesOfPart(key, old, schema, before);
    if (fresh !== undefined) leavesOfPart(key, fresh, schema, after);
  }
  return { before, after };
}

// The same managers and fields, times aside.
function sameManagers(a: Json | undefined, b: Json | undefined): boolean {
  const strip = (list: Json | undefined) =>
    JSON.stringify((Array.isArray(list) ? list : []).map((entry) => ({ ...asMap(entry), time: null })));
  return strip(a) === strip(b);
}
