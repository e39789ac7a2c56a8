import { asList, isJsonMap, type Json, type JsonMap, valueAt } from "../../apimachinery/json.js";
import { applyJsonPatch } from "../../apimachinery/patch/json-patch.js";
import type { JsonPatchOperation } from "../../apimachinery/patch/json-patch-operation.js";
import { schemaFor } from "../../apimachinery/patch/patch-schema.js";
import { applyStrategicMergePatch } from "../../apimachinery/patch/strategic-merge.js";
import { joinPath, normalizePath } from "../../model/repo-path.js";
import { parseSourceFile } from "../../model/yaml-source.js";
import { type BuiltObject, groupOf, nameOf, namespaceOf, withId } from "./built-object.js";
import {
  type FieldPath,
  fail,
  type KustomizationContext,
  parseOnce,
  readRelative,
  spend,
} from "./kustomization-context.js";
import { compileTarget, hasId, type TargetSelector } from "./select-targets.js";

// A kustomization's patches, with gitfleet's own strategic merge and JSON patch engines:
// `patchesStrategicMerge` (paths or inline documents), `patches` (strategic merge or JSON 6902,
// inline or by path, for a `target` or for the object a strategic merge patch names) and
// `patchesJson6902`. A patch that names no object, or more than one, is an error at its entry.

/** One patch read from the kustomization: its documents, or its JSON 6902 operations. */
type LoadedPatch =
  | { readonly type: "strategic"; readonly documents: readonly JsonMap[] }
  | { readonly type: "json6902"; readonly operations: readonly JsonPatchOperation[] };

/** Applies the strategic merge patches and `patches` (kustomize runs these first). */
export function applyMergePatches(
  objects: BuiltObject[],
  spec: JsonMap,
  context: KustomizationContext,
): BuiltObject[] {
  let built = objects;
  for (const [index, entry] of asList(spec.patchesStrategicMerge).entries()) {
    const at = ["patchesStrategicMerge", index];
    if (typeof entry !== "string") {
      fail(context, at, "a strategic merge patch must be a path or a YAML document");
      continue;
    }
    const patch = loadPatch(context, at, entry, isPathLike(entry, context) ? "path" : "inline");
    if (patch?.type === "strategic")
      for (const document of patch.documents) built = patchById(built, document, context, at);
    else if (patch)
      fail(context, at, "patchesStrategicMerge takes strategic merge patches, not a JSON 6902 list");
  }
  asList(spec.patches).forEach((entry, index) => {
    built = applyPatchEntry(built, entry, context, ["patches", index]);
  });
  return built;
}

/** Applies `patchesJson6902` (kustomize runs it after the labels and annotations). */
export function applyJson6902Patches(
  objects: BuiltObject[],
  spec: JsonMap,
  context: KustomizationContext,
): BuiltObject[] {
  let built = objects;
  for (const [index, entry] of asList(spec.patchesJson6902).entries())
    built = json6902Entry(built, entry, context, ["patchesJson6902", index]);
  return built;
}

function json6902Entry(
  objects: BuiltObject[],
  entry: Json,
  context: KustomizationContext,
  at: FieldPath,
): BuiltObject[] {
  if (!isJsonMap(entry)) {
    fail(context, at, "a JSON 6902 patch entry must be a mapping");
    return objects;
  }
  const patch = entryPatch(entry, context, at);
  if (patch && patch.type !== "json6902")
    fail(context, at, "patchesJson6902 takes a list of JSON patch operations");
  if (patch?.type !== "json6902") return objects;
  return patchSelected(objects, patch, entry.target, context, at);
}

// A patch for the objects its entry's `target` selects; a target that does not compile is an error.
function patchSelected(
  objects: BuiltObject[],
  patch: LoadedPatch,
  targetValue: Json | undefined,
  context: KustomizationContext,
  at: FieldPath,
): BuiltObject[] {
  const target = compileTarget(targetValue);
  if (typeof target !== "string") return patchTargets(objects, patch, target, context, at);
  fail(context, [...at, "target"], target);
  return objects;
}

function applyPatchEntry(
  objects: BuiltObject[],
  entry: Json,
  context: KustomizationContext,
  at: FieldPath,
): BuiltObject[] {
  if (!isJsonMap(entry)) {
    fail(context, at, "a patch entry must be a mapping with path or patch");
    return objects;
  }
  const patch = entryPatch(entry, context, at);
  if (!patch) return objects;
  if (entry.target === undefined || entry.target === null) {
    if (patch.type === "json6902") {
      fail(context, at, "a JSON 6902 patch needs a target");
      return objects;
    }
    return patch.documents.reduce((built, document) => patchById(built, document, context, at), objects);
  }
  return patchSelected(objects, patch, entry.target, context, at);
}

// The patch of an entry with `path` or `patch` (exactly one of them).
function entryPatch(entry: JsonMap, context: KustomizationContext, at: FieldPath): LoadedPatch | undefined {
  const hasPath = typeof entry.path === "string";
  const hasPatch = typeof entry.patch === "string";
  if (hasPath === hasPatch) {
    fail(context, at, "a patch entry needs exactly one of path and patch");
    return undefined;
  }
  return hasPath
    ? loadPatch(context, [...at, "path"], entry.path as string, "path")
    : loadPatch(context, [...at, "patch"], entry.patch as string, "inline");
}

// kustomize reads an entry of patchesStrategicMerge as a file when it names one, else as YAML.
function isPathLike(entry: string, context: KustomizationContext): boolean {
  const path = normalizePath(joinPath(context.dir, entry));
  if (path !== undefined && context.tree.has(path)) return true;
  return !entry.includes("\n") && !entry.includes(": ");
}

function loadPatch(
  context: KustomizationContext,
  at: FieldPath,
  text: string,
  from: "path" | "inline",
): LoadedPatch | undefined {
  const read =
    from === "path"
      ? readRelative(context, at, text)
      : { path: context.source.file, bytes: new TextEncoder().encode(text) };
  if (!read) return undefined;
  // A patch file is parsed once per build (its problems point into it); an inline patch's problems
  // are said at its entry.
  const parsed =
    from === "path"
      ? parseOnce(context.build, read.path, read.bytes, "kustomize", context.problems)
      : parseSourceFile(read.path, read.bytes, "kustomize");
  if (parsed.problems.length > 0) {
    if (from === "inline")
      for (const problem of parsed.problems) fail(context, at, `inline patch: ${problem.message}`);
    return undefined;
  }
  const values = parsed.documents.map((d) => d.value as Json).filter((v) => v !== null && v !== undefined);
  const patch = interpret(values);
  if (typeof patch === "string") fail(context, at, patch);
  return typeof patch === "string" ? undefined : patch;
}

// A single YAML list is a JSON 6902 patch; mappings are strategic merge patches.
function interpret(values: readonly Json[]): LoadedPatch | string {
  const [first] = values;
  if (values.length === 1 && Array.isArray(first)) {
    const valid = first.every(
      (op) => isJsonMap(op) && typeof op.op === "string" && typeof op.path === "string",
    );
    if (!valid) return "a JSON 6902 patch is a list of operations, each with op and path";
    return { type: "json6902", operations: first as unknown as JsonPatchOperation[] };
  }
  if (!values.every(isJsonMap)) return "a strategic merge patch must be a YAML mapping";
  return { type: "strategic", documents: values };
}

// A strategic merge patch without a target patches the one object with its kind and name.
function patchById(
  objects: BuiltObject[],
  patch: JsonMap,
  context: KustomizationContext,
  at: FieldPath,
): BuiltObject[] {
  spend(context, objects.length);
  const matches = objects.filter((o) => hasId(o, patch));
  const id = `${String(patch.kind)} ${namespaceOf(patch) ? `${namespaceOf(patch)}/` : ""}${nameOf(patch)}`;
  if (matches.length !== 1) {
    fail(
      context,
      at,
      matches.length === 0
        ? `no object is ${id} (nothing for this patch to change)`
        : `more than one object is ${id}`,
    );
    return objects;
  }
  return patchObjects(objects, new Set(matches), (o) => strategic(o, retargeted(patch, o)), context, at);
}

function patchTargets(
  objects: BuiltObject[],
  patch: LoadedPatch,
  target: TargetSelector,
  context: KustomizationContext,
  at: FieldPath,
): BuiltObject[] {
  spend(context, objects.length);
  const matches = new Set(objects.filter(target));
  return patchObjects(
    objects,
    matches,
    (object) =>
      patch.type === "json6902"
        ? jsonPatch(object, patch.operations)
        : patch.documents.reduce<JsonMap | null | string>(
            (current, document) =>
              current === null || typeof current === "string"
                ? current
                : strategic(current, retargeted(document, current)),
            object,
          ),
    context,
    at,
  );
}

// A patch takes the kind, name and namespace of the object it patches: kustomize matches a patch by
// any name the object had, and the patch never renames it.
function retargeted(patch: JsonMap, object: JsonMap): JsonMap {
  const metadata: JsonMap = { ...(isJsonMap(patch.metadata) ? patch.metadata : {}), name: nameOf(object) };
  if (namespaceOf(object)) metadata.namespace = namespaceOf(object);
  else delete metadata.namespace;
  return { ...patch, apiVersion: object.apiVersion ?? null, kind: object.kind ?? null, metadata };
}

// Patches the matched objects: a result of null deletes the object, a string is an error.
function patchObjects(
  objects: BuiltObject[],
  matches: ReadonlySet<BuiltObject>,
  apply: (object: JsonMap) => JsonMap | null | string,
  context: KustomizationContext,
  at: FieldPath,
): BuiltObject[] {
  const out: BuiltObject[] = [];
  for (const built of objects) {
    if (!matches.has(built)) {
      out.push(built);
      continue;
    }
    const result = apply(built.object);
    if (typeof result === "string") {
      fail(context, at, `${String(built.object.kind)} ${nameOf(built.object)}: ${result}`);
      out.push(built);
    } else if (result !== null) {
      const before = { name: nameOf(built.object), namespace: namespaceOf(built.object) };
      out.push(withId({ ...built, object: result }, before));
    }
  }
  return out;
}

function strategic(object: JsonMap, patch: JsonMap): JsonMap | null | string {
  if (patch.$patch === "delete") return null;
  const result = applyStrategicMergePatch(
    object,
    patch,
    schemaFor(groupOf(object), String(object.kind)),
    "kustomize",
  );
  if (!result.ok) return result.error;
  return isJsonMap(result.value) ? result.value : "the patch left no object";
}

// kustomize's JSON patch library (evanphx/json-patch v4) lets `replace` set a key its map lacks.
function jsonPatch(object: JsonMap, operations: readonly JsonPatchOperation[]): JsonMap | string {
  let current: Json = object;
  for (const [index, operation] of operations.entries()) {
    const op =
      operation.op === "replace" && replacesMissingKey(current, operation.path)
        ? { ...operation, op: "add" as const }
        : operation;
    const result = applyJsonPatch(current, [op]);
    if (!result.ok) return result.error.replace(/^operation 1/, `operation ${index + 1}`);
    current = result.value;
  }
  return isJsonMap(current) ? current : "the patch left no object";
}

function replacesMissingKey(document: Json, pointer: string): boolean {
  const parts = pointer
    .split("/")
    .slice(1)
    .map((p) => p.replaceAll("~1", "/").replaceAll("~0", "~"));
  const key = parts.pop();
  if (key === undefined) return false;
  const parent = valueAt(document, parts);
  return isJsonMap(parent) && !Object.hasOwn(parent, key);
}
