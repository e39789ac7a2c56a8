import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { FileTree } from "../src/model/file-tree.js";

/** Runs the git CLI in a directory as the benchmarks' author; returns trimmed stdout. */
export function git(dir: string, ...args: string[]): string {
  return execFileSync("git", ["-c", "user.name=bench", "-c", "user.email=bench@example.com", ...args], {
    cwd: dir,
    encoding: "utf8",
    maxBuffer: 2 ** 30,
  }).trim();
}

/**
 * Writes a generated fleet into `dir` and commits it on main with the git CLI, packed as a clone's
 * objects are, or (`loose`) with every object a file of its own, as a repository written to by
 * commits and never repacked holds them.
 */
export function commitFleet(dir: string, tree: FileTree, options: { loose?: boolean } = {}): void {
  for (const [path, bytes] of tree) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), bytes);
  }
  git(dir, "init", "-q", "-b", "main");
  git(dir, "add", "-A");
  git(dir, "commit", "-q", "-m", "generated fleet");
  if (!options.loose) git(dir, "repack", "-adq");
}
