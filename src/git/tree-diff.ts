import git from "isomorphic-git";
import { gitFs as fs } from "./git-fs.js";

/** A file that differs between two trees: its blob in the new tree, or null when it was removed; and in the old one. */
export interface TreeChange {
  readonly path: string;
  readonly oid: string | null;
  /** Its blob in the old tree, or null when it is new there. */
  readonly previous: string | null;
}

/**
 * The files that differ between two trees, found by comparing entries by oid and descending only
 * into subtrees whose oids differ — so the cost is the size of the change, not of the repository.
 * `before` undefined means the empty tree (everything in `after` is new).
 */
export async function diffTrees(
  gitdir: string,
  cache: object,
  before: string | undefined,
  after: string | undefined,
): Promise<TreeChange[]> {
  const changes: TreeChange[] = [];
  await walk(gitdir, cache, before, after, "", changes);
  return changes;
}

type Entry = { readonly oid: string; readonly type: string };

async function walk(
  gitdir: string,
  cache: object,
  before: string | undefined,
  after: string | undefined,
  prefix: string,
  changes: TreeChange[],
): Promise<void> {
  if (before === after) return;
  const [old, now] = await Promise.all([entries(gitdir, cache, before), entries(gitdir, cache, after)]);
  for (const name of new Set([...old.keys(), ...now.keys()])) {
    const a = old.get(name);
    const b = now.get(name);
    if (a?.oid === b?.oid && a?.type === b?.type) continue;
    await compareEntry(gitdir, cache, prefix + name, a, b, changes);
  }
}

async function compareEntry(
  gitdir: string,
  cache: object,
  path: string,
  a: Entry | undefined,
  b: Entry | undefined,
  changes: TreeChange[],
): Promise<void> {
  const aTree = a?.type === "tree" ? a.oid : undefined;
  const bTree = b?.type === "tree" ? b.oid : undefined;
  if (aTree || bTree) await walk(gitdir, cache, aTree, bTree, `${path}/`, changes);
  const previous = a?.type === "blob" ? a.oid : null;
  if (b?.type === "blob") changes.push({ path, oid: b.oid, previous });
  else if (previous) changes.push({ path, oid: null, previous });
}

async function entries(gitdir: string, cache: object, tree: string | undefined): Promise<Map<string, Entry>> {
  if (!tree) return new Map();
  const { tree: list } = await git.readTree({ fs, gitdir, cache, oid: tree });
  return new Map(list.map((e) => [e.path, { oid: e.oid, type: e.type }]));
}
