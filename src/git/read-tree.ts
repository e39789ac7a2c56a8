import nodeFs from "node:fs";
import { join } from "node:path";
import git from "isomorphic-git";
import type { FileTree } from "../model/file-tree.js";
import { mapConcurrently } from "../util/map-concurrently.js";
import { gitFs as fs, readSessionFs } from "./git-fs.js";

/**
 * Reads the fleet repo as it is at a revision, straight from Git objects (no checkout), into a
 * FileTree — the same shape `readDirectoryTree` gives, so validation, rendering and plans read a
 * commit exactly as they read a directory. `dir` is a work tree or a bare repository; `revision` is a
 * branch, a tag, HEAD, or a full or abbreviated commit id.
 */
export async function readTreeAtRevision(dir: string, revision: string): Promise<FileTree> {
  const gitdir = gitdirOf(dir);
  const commit = await resolveCommit(gitdir, revision);
  const cache = {};
  return readTreeFiles(gitdir, cache, (await git.readCommit({ fs, gitdir, cache, oid: commit })).commit.tree);
}

/**
 * Every file of a tree, by path, read from Git objects. `wanted` limits what is read (by path, and by
 * directory prefix ending in "/" so whole subtrees are skipped without reading them).
 */
export async function readTreeFiles(
  gitdir: string,
  cache: object,
  tree: string,
  wanted: (path: string) => boolean = () => true,
): Promise<Map<string, Uint8Array>> {
  const blobs: { path: string; oid: string }[] = [];
  const session = readSessionFs(gitdir);
  await listBlobs(blobs, { gitdir, cache, wanted, fs: session }, tree, "");
  // Reads overlap: each costs a few file operations, and waiting on them one by one is most of the time.
  const contents = await mapConcurrently(
    blobs,
    READ_CONCURRENCY,
    async ({ oid }) => (await git.readBlob({ fs: session, gitdir, cache, oid })).blob,
  );
  return new Map(blobs.map(({ path }, i) => [path, contents[i] as Uint8Array]));
}

const READ_CONCURRENCY = 32;

/** The object ids of a tree's files the predicate keeps, by path, without reading the files. */
export async function readTreeBlobIds(
  gitdir: string,
  cache: object,
  tree: string,
  wanted: (path: string) => boolean = () => true,
): Promise<Map<string, string>> {
  const blobs: { path: string; oid: string }[] = [];
  await listBlobs(blobs, { gitdir, cache, wanted, fs: readSessionFs(gitdir) }, tree, "");
  return new Map(blobs.map(({ path, oid }) => [path, oid]));
}

/**
 * The commit a revision names: a branch, tag, remote-tracking branch, HEAD or commit id, with optional
 * first-parent steps ("main~2", "HEAD^", "v1.2^^"). `dir` is a work tree or a bare repository.
 */
export async function resolveRevision(dir: string, revision: string): Promise<string> {
  return resolveCommit(gitdirOf(dir), revision);
}

/** Whether `commit` is `tip` or in its history (false when either cannot be read, as in a shallow clone). */
export async function inHistory(
  gitdir: string,
  cache: object,
  tip: string,
  commit: string,
): Promise<boolean> {
  if (commit === tip) return true;
  return git.isDescendent({ fs, gitdir, cache, oid: tip, ancestor: commit, depth: -1 }).catch(() => false);
}

/** The names of a tree's top-level entries, files and directories alike. */
export async function topLevelNames(gitdir: string, cache: object, tree: string): Promise<string[]> {
  const { tree: entries } = await git.readTree({ fs, gitdir, cache, oid: tree });
  return entries.map((entry) => entry.path);
}

/** The git directory of a work tree or bare repository. */
export function gitdirOf(dir: string): string {
  return nodeFs.existsSync(join(dir, ".git")) ? join(dir, ".git") : dir;
}

// A name (branch, tag, remote-tracking branch, HEAD or commit id) with optional first-parent steps:
// "main~2", "HEAD^", "v1.2^^".
async function resolveCommit(gitdir: string, revision: string): Promise<string> {
  const match = /^(.+?)((?:~[0-9]*|\^)*)$/.exec(revision);
  const name = match?.[1] ?? revision;
  let oid = await resolveName(gitdir, name).catch(() => {
    throw new Error(`unknown revision "${revision}"`);
  });
  for (const step of (match?.[2] ?? "").match(/~[0-9]*|\^/g) ?? []) {
    const count = step === "^" || step === "~" ? 1 : Number(step.slice(1));
    for (let i = 0; i < count; i++) {
      const [parent] = (await git.readCommit({ fs, gitdir, oid })).commit.parent;
      if (parent === undefined) throw new Error(`revision "${revision}" goes past the first commit`);
      oid = parent;
    }
  }
  return oid;
}

async function resolveName(gitdir: string, name: string): Promise<string> {
  try {
    return await git.resolveRef({ fs, gitdir, ref: name });
  } catch (error) {
    if (!/^[0-9a-f]{4,40}$/.test(name)) throw error;
    return git.expandOid({ fs, gitdir, oid: name });
  }
}

interface TreeReader {
  readonly gitdir: string;
  readonly cache: object;
  readonly wanted: (path: string) => boolean;
  /** The read's file system (readSessionFs). */
  readonly fs: typeof fs;
}

// A tree's entries the reader wants: blobs to read, subtrees to list next.
function sortEntries(
  reader: TreeReader,
  prefix: string,
  entries: readonly { readonly path: string; readonly oid: string; readonly type: string }[],
  into: { blobs: { path: string; oid: string }[]; trees: { oid: string; prefix: string }[] },
): void {
  for (const entry of entries) {
    const path = prefix + entry.path;
    if (entry.type === "tree" && reader.wanted(`${path}/`))
      into.trees.push({ oid: entry.oid, prefix: `${path}/` });
    else if (entry.type === "blob" && reader.wanted(path)) into.blobs.push({ path, oid: entry.oid });
  }
}

// The blobs under a tree, its subtrees read level by level with at most READ_CONCURRENCY reads in
// flight: a fleet of 50,000 apps has 50,000 directories under apps/, and reading them all at once
// runs out of file descriptors when the objects are loose.
async function listBlobs(
  blobs: { path: string; oid: string }[],
  reader: TreeReader,
  oid: string,
  prefix: string,
): Promise<void> {
  let level = [{ oid, prefix }];
  while (level.length > 0) {
    const listed = await mapConcurrently(level, READ_CONCURRENCY, async (tree) => ({
      prefix: tree.prefix,
      entries: (
        await git.readTree({ fs: reader.fs, gitdir: reader.gitdir, cache: reader.cache, oid: tree.oid })
      ).tree,
    }));
    const next: { oid: string; prefix: string }[] = [];
    for (const { prefix: at, entries } of listed) sortEntries(reader, at, entries, { blobs, trees: next });
    level = next;
  }
}
