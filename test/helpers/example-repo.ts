import { fileURLToPath } from "node:url";
import type { FileTree } from "../../src/model/file-tree.js";
import { readDirectoryTree } from "../../src/source/read-directory.js";

/** The absolute path of example-repo/. */
export const EXAMPLE_REPO_DIR = fileURLToPath(new URL("../../example-repo", import.meta.url));

/** Reads example-repo/ from disk into a FileTree. */
export function readExampleRepo(): Promise<FileTree> {
  return readDirectoryTree(EXAMPLE_REPO_DIR);
}
