import type { FileTree } from "../../model/file-tree.js";
import type { Problem } from "../../model/problem.js";
import { joinPath, normalizePath } from "../../model/repo-path.js";
import {
  locate,
  type ParsedFile,
  parseSourceFile,
  type SourceDocument,
  type YamlDialect,
} from "../../model/yaml-source.js";

/**
 * What one build shares across its kustomizations: files parsed once (a base included by many
 * overlays is read once), and its bounds — the objects any step may hold, and the work left (each
 * object a step handles costs one), so that bases that include each other many times over fail in
 * a bounded time instead of growing without end.
 */
export interface BuildState {
  readonly parsed: Map<string, ParsedFile>;
  readonly maxObjects: number;
  readonly work: { left: number };
}

/** Why a build stopped before its end: too many objects at one step, or too much work. */
export class BuildLimitError extends Error {
  override readonly name = "BuildLimitError";
  constructor(
    readonly bound: "objects" | "work",
    readonly limit: number,
  ) {
    super(bound);
  }
}

/** One kustomization being built: where it is, its parsed file, and where its problems go. */
export interface KustomizationContext {
  readonly tree: FileTree;
  /** Its directory in the tree ("" for the root). */
  readonly dir: string;
  readonly source: SourceDocument;
  readonly problems: Problem[];
  readonly build: BuildState;
}

/** Counts work done on `objects` objects; past the build's bound, the build stops (BuildLimitError). */
export function spend(context: KustomizationContext, objects: number): void {
  const { work } = context.build;
  work.left -= objects;
  if (work.left < 0) throw new BuildLimitError("work", 0);
}

/** Checks that a step holds no more objects than the build allows (BuildLimitError past it). */
export function checkObjects(context: KustomizationContext, objects: number): void {
  if (objects > context.build.maxObjects) throw new BuildLimitError("objects", context.build.maxObjects);
}

/** A file of the tree parsed once per build (its problems reported the first time). */
export function parseOnce(
  build: BuildState,
  path: string,
  bytes: Uint8Array,
  dialect: YamlDialect,
  problems: Problem[],
): ParsedFile {
  const key = `${dialect}\0${path}`;
  const known = build.parsed.get(key);
  if (known) return known;
  const parsed = parseSourceFile(path, bytes, dialect);
  problems.push(...parsed.problems);
  build.parsed.set(key, parsed);
  return parsed;
}

/** Path of a field in the kustomization file, for locating a problem. */
export type FieldPath = readonly (string | number)[];

/** Records an error at a field of the kustomization file. */
export function fail(
  context: KustomizationContext,
  path: FieldPath,
  message: string,
  target: "key" | "value" = "value",
): void {
  context.problems.push(problemAt(context.source, path, message, target));
}

export function problemAt(
  source: SourceDocument,
  path: FieldPath,
  message: string,
  target: "key" | "value" = "value",
): Problem {
  return { ...locate(source, path, target), severity: "error", code: "SCHEMA_VIOLATION", message };
}

/** The largest file a kustomization reads for a generator or a patch. */
const MAX_INPUT_BYTES = 1024 * 1024;

/**
 * A file a kustomization names (a patch, a generator's source), resolved against its directory.
 * Paths that leave the fleet repo or name nothing are errors at the field that names them.
 */
export function readRelative(
  context: KustomizationContext,
  at: FieldPath,
  relative: string,
): { readonly path: string; readonly bytes: Uint8Array } | undefined {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(relative)) {
    fail(context, at, `${JSON.stringify(relative)} is a URL: gitfleet reads only from the fleet repo`);
    return undefined;
  }
  const path = normalizePath(joinPath(context.dir, relative));
  if (path === undefined || relative.startsWith("/")) {
    fail(context, at, `${JSON.stringify(relative)} leaves the fleet repo`);
    return undefined;
  }
  const bytes = context.tree.get(path);
  if (!bytes) {
    fail(context, at, `${JSON.stringify(relative)} does not exist`);
    return undefined;
  }
  if (bytes.length > MAX_INPUT_BYTES) {
    fail(context, at, `${JSON.stringify(relative)} is larger than ${MAX_INPUT_BYTES} bytes`);
    return undefined;
  }
  return { path, bytes };
}
