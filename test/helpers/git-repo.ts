import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { FileTree } from "../../src/model/file-tree.js";

const IDENTITY = [
  "-c",
  "user.name=Pat Platform",
  "-c",
  "user.email=pat@example.com",
  "-c",
  "commit.gpgsign=false",
];

/** Runs the real git CLI in a directory and returns its trimmed stdout. */
export function gitIn(dir: string, ...args: string[]): string {
  return execFileSync("git", [...IDENTITY, ...args], {
    cwd: dir,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  }).trim();
}

/** A temporary directory, removed by the returned cleanup. */
export function tempDir(prefix: string): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** Makes the work tree hold exactly `tree` (files not in it are removed), commits it with the git CLI, and returns the commit id. */
export function commitTree(dir: string, tree: FileTree, message: string): string {
  for (const path of gitIn(dir, "ls-files").split("\n").filter(Boolean))
    rmSync(join(dir, path), { force: true });
  for (const [path, bytes] of tree) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), bytes);
  }
  gitIn(dir, "add", "-A");
  gitIn(dir, "commit", "-q", "--allow-empty", "-m", message);
  return gitIn(dir, "rev-parse", "HEAD");
}

/** Creates a repository on branch main holding `tree` in one commit. */
export function createRepo(dir: string, tree: FileTree): string {
  gitIn(dir, "init", "-q", "-b", "main");
  return commitTree(dir, tree, "Initial fleet");
}

/** Every file of a branch under a directory, as path → content, read with the git CLI. */
export function branchFiles(dir: string, branch: string): Map<string, string> {
  const files = new Map<string, string>();
  const paths = gitIn(dir, "ls-tree", "-r", "--name-only", branch).split("\n").filter(Boolean);
  for (const path of paths)
    files.set(path, execFileSync("git", ["show", `${branch}:${path}`], { cwd: dir, encoding: "utf8" }));
  return files;
}
