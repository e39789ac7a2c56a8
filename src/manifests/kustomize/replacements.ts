import { asList, asMap, isJsonMap, type Json, type JsonMap } from "../../apimachinery/json.js";
import { splitOutside } from "../../apimachinery/selector-query.js";
import { type BuiltObject, groupOf, nameOf, namespaceOf, versionOf } from "./built-object.js";
import { isClusterScoped } from "./cluster-scoped.js";
import {
  type FieldPath,
  fail,
  type KustomizationContext,
  parseOnce,
  readRelative,
  spend,
} from "./kustomization-context.js";
import { compileTarget } from "./select-targets.js";

// replacements, as kustomize applies them: a value read from one object is copied into
// fields of the objects each target selects. Field paths are dot-separated, with `[key=value]` to
// pick a list element, a number for an index and `*` for every element; `options.delimiter` and
// `index` take or set one part of a string; `options.create` creates a missing path. A replaced
// scalar keeps its type (kustomize sets the value, not the tag).

/** Applies the kustomization's replacements to the objects. */
export function applyReplacements(
  objects: BuiltObject[],
  spec: JsonMap,
  context: KustomizationContext,
): BuiltObject[] {
  const entries = asList(spec.replacements);
  if (entries.length === 0) return objects;
  const built = objects.map((o) => ({ ...o, object: structuredClone(o.object) }));
  entries.forEach((entry, index) => {
    for (const replacement of loadReplacements(entry, context, ["replacements", index]))
      replace(built, replacement.value, context, replacement.at);
  });
  return built;
}

function loadReplacements(
  entry: Json,
  context: KustomizationContext,
  at: FieldPath,
): { value: JsonMap; at: FieldPath }[] {
  if (!isJsonMap(entry)) {
    fail(context, at, "a replacement must be a mapping");
    return [];
  }
  if (typeof entry.path !== "string") return [{ value: entry, at }];
  const read = readRelative(context, [...at, "path"], entry.path);
  if (!read) return [];
  const parsed = parseOnce(context.build, read.path, read.bytes, "kustomize", context.problems);
  return parsed.documents
    .flatMap((d) => (Array.isArray(d.value) ? d.value : [d.value as Json]))
    .filter(isJsonMap)
    .map((value) => ({ value, at: [...at, "path"] }));
}

function replace(
  objects: BuiltObject[],
  replacement: JsonMap,
  context: KustomizationContext,
  at: FieldPath,
): void {
  spend(context, objects.length);
  const value = sourceValue(objects, replacement, context, at);
  if (value === undefined) return;
  const targets = asList(replacement.targets);
  if (targets.length === 0) fail(context, at, "a replacement needs at least one target");
  for (const [index, target] of targets.entries())
    replaceInTarget(objects, value, target, context, [...at, "targets", index]);
}

function replaceInTarget(
  objects: readonly BuiltObject[],
  value: Json,
  target: Json,
  context: KustomizationContext,
  at: FieldPath,
): void {
  if (!isJsonMap(target) || !isJsonMap(target.select)) {
    fail(context, at, "a target must select the objects to change");
    return;
  }
  const selected = selector(target.select, context, [...at, "select"]);
  const rejects = asList(target.reject).map((r, i) => selector(r, context, [...at, "reject", i]));
  if (!selected || rejects.some((r) => r === undefined)) return;
  const listed = asList(target.fieldPaths).map(String);
  const paths = listed.length > 0 ? listed : ["metadata.name"];
  const chosen = objects.filter((built) => selected(built) && !rejects.some((reject) => reject?.(built)));
  for (const built of chosen)
    for (const path of paths) {
      const error = setAt(built.object, splitPath(path), value, asMap(target.options));
      if (error)
        fail(
          context,
          [...at, "fieldPaths"],
          `${String(built.object.kind)} ${nameOf(built.object)}: ${error}`,
        );
    }
}

function selector(value: Json | undefined, context: KustomizationContext, at: FieldPath) {
  const compiled = compileTarget(value);
  if (typeof compiled === "string") {
    fail(context, at, compiled);
    return undefined;
  }
  return compiled;
}

// The value a replacement copies: the field of the one object its source names.
function sourceValue(
  objects: readonly BuiltObject[],
  replacement: JsonMap,
  context: KustomizationContext,
  at: FieldPath,
): Json | undefined {
  const source = asMap(replacement.source);
  if (!isJsonMap(replacement.source)) {
    fail(context, at, "a replacement needs a source");
    return undefined;
  }
  const matches = objects.filter((o) => sourceSelects(source, o));
  if (matches.length !== 1) {
    const message =
      matches.length === 0 ? "the source selects no object" : "the source selects more than one object";
    fail(context, [...at, "source"], message);
    return undefined;
  }
  const fieldPath =
    typeof source.fieldPath === "string" && source.fieldPath !== "" ? source.fieldPath : "metadata.name";
  const found = lookup((matches[0] as BuiltObject).object, splitPath(fieldPath));
  if (found === undefined || found === null || found === "") {
    fail(context, [...at, "source", "fieldPath"], `${fieldPath} is missing in the source`);
    return undefined;
  }
  const part = onePart(found, asMap(source.options));
  if (typeof part === "object" && part !== null && "error" in part) {
    fail(context, [...at, "source", "options"], part.error as string);
    return undefined;
  }
  return part as Json;
}

// options.delimiter and index on a source: one part of its string value.
function onePart(found: Json, options: JsonMap): Json | { error: string } {
  if (typeof options.delimiter !== "string" || options.delimiter === "") return found;
  if (typeof found === "object") return { error: "delimiter can only be used with a scalar" };
  const parts = String(found).split(options.delimiter);
  const index = Number(options.index ?? 0);
  if (!Number.isInteger(index) || index < 0 || index >= parts.length)
    return { error: `index ${index} is out of bounds for ${String(found)}` };
  return parts[index] as string;
}

// A source names its object exactly (any name or namespace it had counts).
function sourceSelects(source: JsonMap, built: BuiltObject): boolean {
  const { object } = built;
  const equal = (field: string, actual: string) =>
    source[field] === undefined ||
    source[field] === null ||
    source[field] === "" ||
    String(source[field]) === actual;
  if (
    !equal("group", groupOf(object)) ||
    !equal("version", versionOf(object)) ||
    !equal("kind", String(object.kind))
  )
    return false;
  const clusterScoped = isClusterScoped(String(object.kind));
  const ids = [{ name: nameOf(object), namespace: namespaceOf(object) }, ...built.previousIds];
  return ids.some(
    (id) => equal("name", id.name) && equal("namespace", clusterScoped ? "" : id.namespace || "default"),
  );
}

/** Splits a field path at dots outside brackets. */
export function splitPath(path: string): string[] {
  return splitOutside(path, ".", "[", "]");
}

function lookup(root: Json, path: readonly string[]): Json | undefined {
  let node: Json | undefined = root;
  for (const part of path) {
    if (Array.isArray(node)) node = element(node, part)[0];
    else if (isJsonMap(node)) node = node[part];
    else return undefined;
  }
  return node;
}

// The elements of a list a path part picks: `[key=value]`, an index, or `*` for all.
function element(list: Json[], part: string): Json[] {
  const match = /^\[([^=\]]+)=(.*)\]$/.exec(part);
  if (match) return list.filter((e) => isJsonMap(e) && String(e[match[1] as string]) === match[2]);
  if (part === "*" || part === "[*]") return list;
  const index = Number(part.replace(/^\[(\d+)\]$/, "$1"));
  return Number.isInteger(index) && index >= 0 && index < list.length ? [list[index] as Json] : [];
}

// Sets every field the path reaches; returns an error when it reaches none.
function setAt(root: JsonMap, path: readonly string[], value: Json, options: JsonMap): string | undefined {
  const create = options.create === true;
  const holders = reach([{ holder: { root } as JsonMap, key: "root" }], path, create);
  if (holders.length === 0) return `${path.join(".")} ${create ? "cannot be created" : "does not exist"}`;
  for (const { holder, key } of holders) {
    const current = (holder as Record<string | number, Json>)[key];
    const next = withDelimiter(current, value, options);
    (holder as Record<string | number, Json>)[key] = keepType(current, next);
  }
  return undefined;
}

interface Slot {
  readonly holder: JsonMap | Json[];
  readonly key: string | number;
}

function reach(slots: readonly Slot[], path: readonly string[], create: boolean): Slot[] {
  let current = slots;
  for (const part of path) current = current.flatMap((slot) => step(slot, part, create));
  return [...current];
}

// The slots one path part leads to from a slot, creating what is missing when asked.
function step({ holder, key }: Slot, part: string, create: boolean): Slot[] {
  const fields = holder as Record<string | number, Json>;
  let node = fields[key];
  if (node === undefined || node === null) {
    if (!create) return [];
    node = part.startsWith("[") ? [] : {};
    fields[key] = node;
  }
  if (Array.isArray(node)) return listSlots(node, part, create);
  if (!isJsonMap(node)) return [];
  return create || node[part] !== undefined ? [{ holder: node, key: part }] : [];
}

function listSlots(list: Json[], part: string, create: boolean): Slot[] {
  const picked = element(list, part);
  if (picked.length === 0 && create) {
    const match = /^\[([^=\]]+)=(.*)\]$/.exec(part);
    if (match) {
      list.push({ [match[1] as string]: match[2] as string });
      return [{ holder: list, key: list.length - 1 }];
    }
  }
  return picked.map((e) => ({ holder: list, key: list.indexOf(e) }));
}

// options.delimiter: the value replaces one part of the target string (index below 0 prefixes it,
// past the end appends it).
function withDelimiter(current: Json | undefined, value: Json, options: JsonMap): Json {
  if (typeof options.delimiter !== "string" || options.delimiter === "") return value;
  const parts = current === undefined || current === null ? [""] : String(current).split(options.delimiter);
  const index = Number(options.index ?? 0);
  const text = String(value);
  if (index < 0) parts.unshift(text);
  else if (index >= parts.length) parts.push(text);
  else parts[index] = text;
  return parts.join(options.delimiter);
}

// A scalar replaced keeps its YAML type: "5" into replicas stays a number, 5 into a string a string.
function keepType(current: Json | undefined, next: Json): Json {
  if (typeof next === "object" || current === undefined || current === null || typeof current === "object")
    return next;
  const text = String(next);
  if (typeof current === "number" && text.trim() !== "" && Number.isFinite(Number(text))) return Number(text);
  if (typeof current === "boolean" && (text === "true" || text === "false")) return text === "true";
  if (typeof current === "string") return text;
  return next;
}
