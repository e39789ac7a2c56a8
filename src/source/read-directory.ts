import { readdir, readFile } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import type { FileTree } from "../model/file-tree.js";

/**
 * Reads a fleet repo checkout into a FileTree. Skips .git and other hidden entries (the loader ignores
 * them anyway) and follows no symlinks, so a link cannot pull files from outside the repo.
 */
export async function readDirectoryTree(root: string): Promise<FileTree> {
  const tree = new Map<string, Uint8Array>();
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  for (const entry of entries) {
    if (!entry.isFile()) continue;
    const absolute = join(entry.parentPath, entry.name);
    const path = relative(root, absolute).split(sep).join("/");
    if (path.split("/").some((part) => part.startsWith("."))) continue;
    tree.set(path, new Uint8Array(await readFile(absolute)));
  }
  return tree;
}
