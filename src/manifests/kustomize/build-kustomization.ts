import { asList, isJsonMap, type Json, type JsonMap, valueAt } from "../../apimachinery/json.js";
import { type FileTree, sortedPaths } from "../../model/file-tree.js";
import type { Problem } from "../../model/problem.js";
import { joinPath, normalizePath } from "../../model/repo-path.js";
import { type BuiltObject, freshObject, groupOf, nameOf, namespaceOf, withId } from "./built-object.js";
import { contentHash } from "./content-hash.js";
import { runGenerators } from "./generators.js";
import {
  BuildLimitError,
  type BuildState,
  checkObjects,
  type FieldPath,
  fail,
  type KustomizationContext,
  parseOnce,
  problemAt,
  spend,
} from "./kustomization-context.js";
import { fixNameReferences } from "./name-references.js";
import { applyJson6902Patches, applyMergePatches } from "./patches.js";
import { applyReplacements } from "./replacements.js";
import { applyMetadataTransformers, applyWorkloadTransformers, type TransformError } from "./transformers.js";

// Kustomize, as gitfleet builds it: a directory with a kustomization.yaml is read from the same file
// tree as the rest of the fleet repo (a commit or a directory) — never the network — and built the
// way `kubectl kustomize` builds it: resources (files, directories, nested bases), generators,
// components, then the transformers in kustomize's order; at the end content hashes join generated
// names and every reference to a renamed object follows it. A field this engine does not build is
// refused with its location, so a kustomization is built exactly or not at all.

/** The names kustomize looks for, in its order. */
export const KUSTOMIZATION_FILES = ["kustomization.yaml", "kustomization.yml", "Kustomization"] as const;

/** The fields this engine builds; every other field of a kustomization is an error at its line. */
const SUPPORTED = new Set([
  "apiVersion",
  "kind",
  "metadata",
  "resources",
  "components",
  "namespace",
  "namePrefix",
  "nameSuffix",
  "commonLabels",
  "labels",
  "commonAnnotations",
  "patches",
  "patchesStrategicMerge",
  "patchesJson6902",
  "replicas",
  "images",
  "configMapGenerator",
  "secretGenerator",
  "generatorOptions",
  "replacements",
]);

/** Fields refused with a reason of their own. */
const REFUSED: Readonly<Record<string, string>> = {
  helmCharts:
    "Helm inflation inside a kustomization is refused: make the chart an app of its own (spec.helm)",
  helmGlobals:
    "Helm inflation inside a kustomization is refused: make the chart an app of its own (spec.helm)",
  generators: "generator plugins run code: gitfleet builds only the built-in generators",
  transformers: "transformer plugins run code: gitfleet builds only the built-in transformers",
  validators: "validator plugins run code: gitfleet builds only the built-in fields",
};

/** The objects a kustomization builds, each with the file it came from, and what is wrong. */
export interface KustomizeResult {
  readonly objects: readonly BuiltObject[];
  readonly problems: readonly Problem[];
}

/** The kustomization file of a directory, if it has one. */
export function kustomizationFile(tree: FileTree, dir: string): string | undefined {
  return KUSTOMIZATION_FILES.map((name) => joinPath(dir, name)).find((path) => tree.has(path));
}

/** How much one build may do: the objects one step may hold (the app's bound), and the work. */
export interface BuildLimits {
  readonly maxObjects: number;
  /** Object steps in all (each object each step handles): default WORK_PER_OBJECT × maxObjects. */
  readonly work?: number;
}

/** The objects a build may hold unless told otherwise (the default per-app bound). */
export const DEFAULT_BUILD_OBJECTS = 10_000;
/** Work allowed per object of the bound: deep overlays of a large base stay well within it. */
export const WORK_PER_OBJECT = 200;

/**
 * Builds the kustomization in `dir` (a directory of the tree, "" for its root). Pure. Bounded: a step
 * that holds more than `limits.maxObjects` objects, or a build that handles more objects in all than
 * its work bound, stops with one error at the kustomization, whatever its bases do.
 */
export function buildKustomization(
  tree: FileTree,
  dir: string,
  limits: BuildLimits = { maxObjects: DEFAULT_BUILD_OBJECTS },
): KustomizeResult {
  const problems: Problem[] = [];
  const root = normalizePath(dir) ?? "";
  const build: BuildState = {
    parsed: new Map(),
    maxObjects: limits.maxObjects,
    work: { left: limits.work ?? WORK_PER_OBJECT * limits.maxObjects },
  };
  let built: BuiltObject[];
  try {
    built = accumulate(tree, root, { stack: [], expect: "Kustomization", inherited: [], build }, problems);
  } catch (error) {
    if (!(error instanceof BuildLimitError)) throw error;
    return { objects: [], problems: [limitProblem(tree, root, error, limits)] };
  }
  const named = built.map(withHashSuffix);
  for (const error of fixNameReferences(named))
    problems.push({
      file: kustomizationFile(tree, root) ?? root,
      line: 1,
      column: 1,
      path: "",
      severity: "error",
      code: "SCHEMA_VIOLATION",
      message: error,
    });
  return { objects: problems.some((p) => p.severity === "error") ? [] : named, problems };
}

// The one error of a build stopped at a bound, at the kustomization built.
function limitProblem(tree: FileTree, root: string, error: BuildLimitError, limits: BuildLimits): Problem {
  const message =
    error.bound === "objects"
      ? `this kustomization builds more than ${limits.maxObjects} objects (the operator's bound, --max-app-objects)`
      : `building this kustomization handles more than ${limits.work ?? WORK_PER_OBJECT * limits.maxObjects} objects in all (bases included over and over); it is stopped`;
  return {
    file: kustomizationFile(tree, root) ?? root,
    line: 1,
    column: 1,
    path: "",
    severity: "error",
    code: "TOO_MANY_OBJECTS",
    message,
  };
}

interface Accumulation {
  readonly stack: readonly string[];
  readonly expect: "Kustomization" | "Component";
  /** What the kustomization that includes a component has built so far. */
  readonly inherited: readonly BuiltObject[];
  readonly build: BuildState;
}

function accumulate(tree: FileTree, dir: string, how: Accumulation, problems: Problem[]): BuiltObject[] {
  const context = open(tree, dir, problems, how.build);
  if (!context) return [...how.inherited];
  const spec = context.source.value as JsonMap;
  const kind = typeof spec.kind === "string" ? spec.kind : "Kustomization";
  if (kind !== how.expect) {
    fail(
      context,
      ["kind"],
      how.expect === "Component"
        ? "a component must be kind: Component"
        : "a Component can only be used under components",
    );
    return [...how.inherited];
  }
  const stack = [...how.stack, dir];
  const objects = new Objects(how.inherited, context);
  asList(spec.resources).forEach((entry, index) => {
    for (const object of resource(entry, ["resources", index], context, stack))
      objects.add(object, ["resources", index]);
  });
  let built = runGenerators(objects.list, spec, context);
  asList(spec.components).forEach((entry, index) => {
    const path = directoryEntry(entry, ["components", index], context, stack);
    if (path !== undefined)
      built = accumulate(
        tree,
        path,
        { stack, expect: "Component", inherited: built, build: how.build },
        problems,
      );
  });
  checkObjects(context, built.length);
  spend(context, built.length);
  return transform(built, spec, context);
}

// The objects a kustomization gathers: an object joins unless one with its kind, namespace and name
// is there already (an error at the entry that brought it). Checked by key, so gathering n objects
// costs n steps, and bounded by the build's limit on objects.
class Objects {
  readonly list: BuiltObject[];
  private readonly keys = new Set<string>();

  constructor(
    inherited: readonly BuiltObject[],
    private readonly context: KustomizationContext,
  ) {
    this.list = [...inherited];
    for (const built of inherited) this.keys.add(idKey(built.object));
  }

  add(object: BuiltObject, at: FieldPath): void {
    const key = idKey(object.object);
    if (this.keys.has(key)) {
      fail(
        this.context,
        at,
        `${String(object.object.kind)} ${nameOf(object.object)} is built twice (from ${object.file})`,
      );
      return;
    }
    this.keys.add(key);
    this.list.push(object);
    checkObjects(this.context, this.list.length);
  }
}

function idKey(object: JsonMap): string {
  return `${String(object.kind)}\0${groupOf(object)}\0${nameOf(object)}\0${namespaceOf(object) || "default"}`;
}

// Parses a kustomization file and refuses the fields this engine does not build.
function open(
  tree: FileTree,
  dir: string,
  problems: Problem[],
  build: BuildState,
): KustomizationContext | undefined {
  const file = kustomizationFile(tree, dir);
  if (!file) return undefined;
  const parsed = parseOnce(build, file, tree.get(file) as Uint8Array, "kubectl", problems);
  const source = parsed.documents[0];
  if (!source) return undefined;
  if (!isJsonMap(source.value)) {
    problems.push(problemAt(source, [], "a kustomization must be a YAML mapping"));
    return undefined;
  }
  const context: KustomizationContext = { tree, dir, source, problems, build };
  for (const key of Object.keys(source.value)) {
    if (REFUSED[key]) fail(context, [key], REFUSED[key], "key");
    else if (!SUPPORTED.has(key))
      fail(context, [key], `${key} is not supported by gitfleet's kustomize engine`, "key");
  }
  checkStringMaps(context, source.value);
  return context;
}

// Labels and annotations are maps of strings: kustomize refuses `team: yes` or `version: 2` unquoted.
function checkStringMaps(context: KustomizationContext, spec: JsonMap): void {
  const maps: FieldPath[] = [
    ["commonLabels"],
    ["commonAnnotations"],
    ["generatorOptions", "labels"],
    ["generatorOptions", "annotations"],
  ];
  asList(spec.labels).forEach((_, i) => {
    maps.push(["labels", i, "pairs"]);
  });
  for (const field of ["configMapGenerator", "secretGenerator"])
    asList(spec[field]).forEach((_, i) => {
      maps.push([field, i, "options", "labels"], [field, i, "options", "annotations"]);
    });
  for (const path of maps) {
    const map = valueAt(spec, path);
    if (!isJsonMap(map)) continue;
    for (const [key, value] of Object.entries(map))
      if (value !== null && typeof value !== "string")
        fail(context, [...path, key], `${JSON.stringify(value)} must be a string (quote it)`);
  }
  asList(spec.replacements).forEach((entry, i) => {
    if (isJsonMap(entry) && "sourceValue" in entry)
      fail(
        context,
        ["replacements", i, "sourceValue"],
        "sourceValue is not a field of kustomize v5.5: use a source",
        "key",
      );
  });
}

// kustomize's transformers, in its order.
function transform(objects: BuiltObject[], spec: JsonMap, context: KustomizationContext): BuiltObject[] {
  const errors: TransformError[] = [];
  let built = applyMergePatches(objects, spec, context);
  built = applyMetadataTransformers(built, spec);
  built = applyJson6902Patches(built, spec, context);
  built = applyWorkloadTransformers(built, spec, errors);
  for (const error of errors) fail(context, error.path, error.message);
  return applyReplacements(built, spec, context);
}

// One entry of `resources`: a file of manifests, or a directory with a kustomization of its own.
function resource(
  entry: Json,
  at: FieldPath,
  context: KustomizationContext,
  stack: readonly string[],
): BuiltObject[] {
  if (typeof entry !== "string" || entry === "") {
    fail(context, at, "a resource must be a path");
    return [];
  }
  if (isRemote(entry)) {
    fail(
      context,
      at,
      `remote resource ${JSON.stringify(entry)} refused: gitfleet builds only from the fleet repo (vendor the base into it)`,
    );
    return [];
  }
  const path = normalizePath(joinPath(context.dir, entry));
  if (path !== undefined && context.tree.has(path)) return manifests(context, path);
  const dir = directoryEntry(entry, at, context, stack);
  return dir === undefined
    ? []
    : accumulate(
        context.tree,
        dir,
        { stack, expect: "Kustomization", inherited: [], build: context.build },
        context.problems,
      );
}

function isRemote(entry: string): boolean {
  return (
    /^[a-z][a-z0-9+.-]*:\/\//i.test(entry) ||
    /^(github\.com|gitlab\.com|bitbucket\.org)\//.test(entry) ||
    /^git@/.test(entry)
  );
}

// A directory a kustomization names (a base or a component): it must hold a kustomization.
function directoryEntry(
  entry: Json,
  at: FieldPath,
  context: KustomizationContext,
  stack: readonly string[],
): string | undefined {
  if (typeof entry !== "string" || entry === "") {
    fail(context, at, "must be a path");
    return undefined;
  }
  if (isRemote(entry)) {
    fail(
      context,
      at,
      `remote ${JSON.stringify(entry)} refused: gitfleet builds only from the fleet repo (vendor it into the repo)`,
    );
    return undefined;
  }
  const path = normalizePath(joinPath(context.dir, entry));
  if (path === undefined) {
    fail(context, at, `${JSON.stringify(entry)} leaves the fleet repo`);
    return undefined;
  }
  if (!kustomizationFile(context.tree, path)) {
    const isDirectory = sortedPaths(context.tree).some((p) => p.startsWith(`${path}/`));
    fail(
      context,
      at,
      isDirectory
        ? `${JSON.stringify(entry)} is a directory without a kustomization.yaml`
        : `${JSON.stringify(entry)} does not exist`,
    );
    return undefined;
  }
  if (stack.includes(path)) {
    fail(context, at, `${JSON.stringify(entry)} includes itself (a cycle of bases)`);
    return undefined;
  }
  return path;
}

// The Kubernetes objects of one manifest file (a List's items each count).
function manifests(context: KustomizationContext, path: string): BuiltObject[] {
  const { tree, problems, build } = context;
  const parsed = parseOnce(build, path, tree.get(path) as Uint8Array, "kustomize", problems);
  const objects: BuiltObject[] = [];
  for (const document of parsed.documents) {
    if (!isJsonMap(document.value)) continue;
    if (String(document.value.kind ?? "").endsWith("List") && Array.isArray(document.value.items))
      document.value.items.forEach((item, index) => {
        if (isJsonMap(item))
          objects.push(freshObject(structuredClone(item), { ...document, value: item, item: index }));
      });
    else objects.push(freshObject(structuredClone(document.value), document));
    checkObjects(context, objects.length);
  }
  spend(context, objects.length);
  return objects;
}

// A generated ConfigMap or Secret takes its content hash as the last part of its name.
function withHashSuffix(built: BuiltObject): BuiltObject {
  if (!built.hashSuffix) return built;
  const object = structuredClone(built.object);
  const metadata = object.metadata as JsonMap;
  const before = { name: nameOf(object), namespace: namespaceOf(object) };
  metadata.name = `${before.name}-${contentHash(object)}`;
  const { hashSuffix: _done, ...rest } = withId({ ...built, object }, before);
  return rest;
}
