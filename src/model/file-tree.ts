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
