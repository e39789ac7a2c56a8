import type { FileTree } from "../file-tree.js";
import type { Problem } from "../problem.js";
import { joinPath, normalizePath } from "../repo-path.js";
import { locate, type SourceDocument } from "../yaml-source.js";

/** One kustomization being built: where it is, its parsed file, and where its problems go. */
export interface KustomizationContext {
  readonly tree: FileTree;
  /** Its directory in the tree ("" for the root). */
  readonly dir: string;
  readonly source: SourceDocument;
  readonly problems: Problem[];
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
