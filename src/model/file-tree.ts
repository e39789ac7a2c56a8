/**
 * A fleet repo as plain data: repo-relative POSIX paths to file contents. A directory on disk and a
 * Git commit are both read into this shape, so everything downstream treats them the same way.
 */
export type FileTree = ReadonlyMap<string, Uint8Array>;

const encoder = new TextEncoder();

/** Builds a FileTree from text contents; handy for tests and generated fleets. */
export function fileTreeFromText(files: Record<string, string>): FileTree {
  const tree = new Map<string, Uint8Array>();
  for (const [path, text] of Object.entries(files)) tree.set(path, encoder.encode(text));
  return tree;
}

/** Returns the paths of a tree in a stable (code point) order. */
export function sortedPaths(tree: FileTree): string[] {
  return [...tree.keys()].sort(compareStrings);
}

/** Compares strings by code point, independent of locale, for stable orders everywhere. */
export function compareStrings(a: string, b: string): number {
  if (a < b) return -1;
  return a > b ? 1 : 0;
}

/** Whether two files hold the same bytes (a missing file is the same only as another missing one). */
export function sameBytes(a: Uint8Array | undefined, b: Uint8Array | undefined): boolean {
  if (a === b) return true;
  if (!a || !b || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
