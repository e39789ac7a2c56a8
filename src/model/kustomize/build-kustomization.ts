import { type FileTree, sortedPaths } from "../file-tree.js";
import { asList, asMap, isJsonMap, type Json, type JsonMap } from "../json.js";
import type { Problem } from "../problem.js";
import { locate, parseSourceFile, type SourceDocument } from "../yaml-source.js";
import type { BuiltObject } from "./built-object.js";
import { applyTransformers, type TransformError } from "./transformers.js";

// Kustomize, as gitfleet builds it: a directory with a kustomization.yaml is read from the same file
// tree as the rest of the fleet repo (a commit or a directory) — never the network — and built the
// way `kubectl kustomize` builds it. This engine covers resources (files, directories, nested
// bases), namespace, namePrefix/nameSuffix with references renamed, commonLabels, labels,
// commonAnnotations, replicas and images; any other field is refused with its location, so a
// kustomization is built exactly or not at all.

/** The names kustomize looks for, in its order. */
export const KUSTOMIZATION_FILES = ["kustomization.yaml", "kustomization.yml", "Kustomization"] as const;

/** The fields this engine builds; every other field of a kustomization is an error at its line. */
const SUPPORTED = new Set([
  "apiVersion",
  "kind",
  "metadata",
  "resources",
  "namespace",
  "namePrefix",
  "nameSuffix",
  "commonLabels",
  "labels",
  "commonAnnotations",
  "replicas",
  "images",
]);

/** The objects a kustomization builds, each with the file it came from, and what is wrong. */
export interface KustomizeResult {
  readonly objects: readonly BuiltObject[];
  readonly problems: readonly Problem[];
}

/** The kustomization file of a directory, if it has one. */
export function kustomizationFile(tree: FileTree, dir: string): string | undefined {
  return KUSTOMIZATION_FILES.map((name) => joinPath(dir, name)).find((path) => tree.has(path));
}

/** Builds the kustomization in `dir` (a directory of the tree, "" for its root). Pure. */
export function buildKustomization(tree: FileTree, dir: string): KustomizeResult {
  const problems: Problem[] = [];
  const objects = build(tree, normalize(dir) ?? "", [], problems);
  return { objects: problems.some((p) => p.severity === "error") ? [] : objects, problems };
}

function build(tree: FileTree, dir: string, stack: readonly string[], problems: Problem[]): BuiltObject[] {
  const file = kustomizationFile(tree, dir);
  if (!file) return [];
  const bytes = tree.get(file) as Uint8Array;
  const parsed = parseSourceFile(file, bytes);
  problems.push(...parsed.problems);
  const source = parsed.documents[0];
  if (!source) return [];
  const spec = asMap(source.value);
  if (!isJsonMap(source.value)) {
    problems.push(problemAt(source, [], "a kustomization must be a YAML mapping"));
    return [];
  }
  for (const key of Object.keys(spec))
    if (!SUPPORTED.has(key))
      problems.push(
        problemAt(source, [key], `${key} is not supported by gitfleet's kustomize engine yet`, "key"),
      );
  const objects: BuiltObject[] = [];
  asList(spec.resources).forEach((entry, index) => {
    objects.push(...resource(tree, dir, entry, { source, index, stack: [...stack, dir] }, problems));
  });
  const errors: TransformError[] = [];
  const built = applyTransformers(objects, spec, errors);
  for (const error of errors) problems.push(problemAt(source, error.path, error.message));
  return built;
}

interface EntryContext {
  readonly source: SourceDocument;
  readonly index: number;
  readonly stack: readonly string[];
}

// One entry of `resources`: a file of manifests, or a directory with a kustomization of its own.
function resource(
  tree: FileTree,
  dir: string,
  entry: Json,
  context: EntryContext,
  problems: Problem[],
): BuiltObject[] {
  const at = ["resources", context.index];
  if (typeof entry !== "string" || entry === "") {
    problems.push(problemAt(context.source, at, "a resource must be a path"));
    return [];
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(entry) || /^(github\.com|gitlab\.com|bitbucket\.org)\//.test(entry)) {
    problems.push(
      problemAt(
        context.source,
        at,
        `remote resource ${JSON.stringify(entry)} refused: gitfleet builds only from the fleet repo (vendor the base into it)`,
      ),
    );
    return [];
  }
  const path = normalize(joinPath(dir, entry));
  if (path === undefined) {
    problems.push(problemAt(context.source, at, `${JSON.stringify(entry)} leaves the fleet repo`));
    return [];
  }
  if (tree.has(path)) return manifests(tree, path, problems);
  if (kustomizationFile(tree, path)) {
    if (context.stack.includes(path)) {
      problems.push(
        problemAt(context.source, at, `${JSON.stringify(entry)} includes itself (a cycle of bases)`),
      );
      return [];
    }
    return build(tree, path, context.stack, problems);
  }
  const isDirectory = sortedPaths(tree).some((p) => p.startsWith(`${path}/`));
  problems.push(
    problemAt(
      context.source,
      at,
      isDirectory
        ? `${JSON.stringify(entry)} is a directory without a kustomization.yaml`
        : `${JSON.stringify(entry)} does not exist`,
    ),
  );
  return [];
}

// The Kubernetes objects of one manifest file (a List's items each count).
function manifests(tree: FileTree, path: string, problems: Problem[]): BuiltObject[] {
  const parsed = parseSourceFile(path, tree.get(path) as Uint8Array);
  problems.push(...parsed.problems);
  const objects: BuiltObject[] = [];
  for (const document of parsed.documents) {
    if (!isJsonMap(document.value)) continue;
    const items = String(document.value.kind ?? "").endsWith("List")
      ? asList(document.value.items).filter(isJsonMap)
      : [document.value];
    for (const item of items) {
      const object = structuredClone(item) as JsonMap;
      objects.push({ object, file: path, originalName: String(asMap(object.metadata).name ?? "") });
    }
  }
  return objects;
}

function problemAt(
  source: SourceDocument,
  path: readonly (string | number)[],
  message: string,
  target: "key" | "value" = "value",
): Problem {
  return { ...locate(source, path, target), severity: "error", code: "SCHEMA_VIOLATION", message };
}

function joinPath(dir: string, name: string): string {
  return dir === "" ? name : `${dir}/${name}`;
}

// A path with "." and ".." resolved; undefined when it climbs above the tree's root.
function normalize(path: string): string | undefined {
  const parts: string[] = [];
  for (const part of path.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (parts.length === 0) return undefined;
      parts.pop();
    } else parts.push(part);
  }
  return parts.join("/");
}
