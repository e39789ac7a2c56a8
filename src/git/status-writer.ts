import fs from "node:fs";
import git from "isomorphic-git";

/** The identity and time of a status commit; time comes in from the caller (the core reads no clock). */
export interface CommitAuthor {
  readonly name: string;
  readonly email: string;
  /** Seconds since the epoch. */
  readonly timestamp: number;
  readonly timezoneOffset?: number;
}

/** A status commit to make: the full desired content of the directories gitfleet owns on the branch. */
export interface StatusCommitRequest {
  readonly gitdir: string;
  /** The branch name, e.g. "gitfleet/status". */
  readonly branch: string;
  /** Top-level directories gitfleet writes (e.g. ["rendered", "status"]); everything else on the branch is kept. */
  readonly owned: readonly string[];
  /** Every file under the owned directories, by repo path. Paths outside them are refused. */
  readonly files: ReadonlyMap<string, string>;
  readonly sourceCommit: string;
  /** What changed, in a line or a few; trailers are added. */
  readonly message: string;
  readonly author: CommitAuthor;
  /**
   * The tip the caller generated this state from (null: no branch yet). When given, the commit is
   * made only on top of exactly that tip; otherwise on whatever the tip is now.
   */
  readonly expectedParent?: string | null;
}

/** A commit was made, or the tree was unchanged (no commit), or the branch moved underneath (retry). */
export type StatusCommitResult =
  | { readonly status: "committed"; readonly oid: string; readonly parent: string | undefined }
  | { readonly status: "unchanged"; readonly oid: string | undefined }
  | { readonly status: "conflict"; readonly expected: string | undefined; readonly found: string };

const MODE_FILE = "100644";
const MODE_TREE = "040000";

type TreeEntry = { mode: string; path: string; oid: string; type: "blob" | "tree" | "commit" };
interface DirectoryNode {
  readonly files: Map<string, string>;
  readonly dirs: Map<string, DirectoryNode>;
}

/**
 * Writes the status branch from desired state, never by replaying edits: builds the tree of the owned
 * directories, reusing every unchanged subtree of the parent commit (so a one-app change writes only
 * the trees along its paths), commits only when the tree differs, with `Source-Commit` and
 * `Gitfleet-Status` trailers, and moves the branch only if it still points where it did — otherwise it
 * reports a conflict for the caller to regenerate on the new tip.
 */
export async function commitStatus(request: StatusCommitRequest): Promise<StatusCommitResult> {
  const { gitdir, branch } = request;
  const ref = `refs/heads/${branch}`;
  const parent = await git.resolveRef({ fs, gitdir, ref }).catch(() => undefined);
  const expected = request.expectedParent === undefined ? parent : (request.expectedParent ?? undefined);
  if (parent !== expected) return { status: "conflict", expected, found: parent ?? "" };
  const parentTree = parent ? (await git.readCommit({ fs, gitdir, oid: parent })).commit.tree : undefined;
  const root = directoryOf(request.files, request.owned);
  const kept = parentTree
    ? (await git.readTree({ fs, gitdir, oid: parentTree })).tree.filter(
        (e) => !request.owned.includes(e.path),
      )
    : [];
  const ownedEntries: TreeEntry[] = [];
  for (const [name, node] of root.dirs) {
    const previous = parentTree ? await childTree(gitdir, parentTree, name) : undefined;
    ownedEntries.push({
      mode: MODE_TREE,
      path: name,
      oid: await writeDirectory(gitdir, node, previous),
      type: "tree",
    });
  }
  const tree = await writeEntries(gitdir, [...kept, ...ownedEntries], parentTree);
  if (tree === parentTree) return { status: "unchanged", oid: parent };
  const author = {
    name: request.author.name,
    email: request.author.email,
    timestamp: request.author.timestamp,
    timezoneOffset: request.author.timezoneOffset ?? 0,
  };
  const message = `${request.message.trimEnd()}\n\nSource-Commit: ${request.sourceCommit}\nGitfleet-Status: true\n`;
  const oid = await git.writeCommit({
    fs,
    gitdir,
    commit: { tree, parent: parent ? [parent] : [], author, committer: author, message },
  });
  // Compare and swap: another writer may have moved the branch while we built this commit.
  const now = await git.resolveRef({ fs, gitdir, ref }).catch(() => undefined);
  if (now !== parent) return { status: "conflict", expected: parent, found: now ?? "" };
  await git.writeRef({ fs, gitdir, ref, value: oid, force: true });
  return { status: "committed", oid, parent };
}

function directoryOf(files: ReadonlyMap<string, string>, owned: readonly string[]): DirectoryNode {
  const root: DirectoryNode = { files: new Map(), dirs: new Map() };
  for (const [path, content] of files) {
    const parts = path.split("/");
    if (!owned.includes(parts[0] ?? "") || parts.length < 2)
      throw new Error(`status path ${path} is outside ${owned.join(", ")}`);
    let node = root;
    for (const part of parts.slice(0, -1)) {
      const next = node.dirs.get(part) ?? { files: new Map(), dirs: new Map() };
      node.dirs.set(part, next);
      node = next;
    }
    node.files.set(parts.at(-1) ?? "", content);
  }
  return root;
}

// Writes a directory's tree, reusing the previous tree's subtrees and blobs where they are unchanged.
async function writeDirectory(
  gitdir: string,
  node: DirectoryNode,
  previous: string | undefined,
): Promise<string> {
  const entries: TreeEntry[] = [];
  const previousEntries = previous
    ? new Map((await git.readTree({ fs, gitdir, oid: previous })).tree.map((e) => [e.path, e.oid]))
    : new Map<string, string>();
  for (const [name, content] of node.files) {
    const { oid } = await git.hashBlob({ object: content });
    if (previousEntries.get(name) !== oid)
      await git.writeBlob({ fs, gitdir, blob: new TextEncoder().encode(content) });
    entries.push({ mode: MODE_FILE, path: name, oid, type: "blob" });
  }
  for (const [name, child] of node.dirs) {
    entries.push({
      mode: MODE_TREE,
      path: name,
      oid: await writeDirectory(gitdir, child, previousEntries.get(name)),
      type: "tree",
    });
  }
  return writeEntries(gitdir, entries, previous);
}

// Writes a tree unless the previous tree has exactly these entries (Git orders entries itself).
async function writeEntries(
  gitdir: string,
  entries: TreeEntry[],
  previous: string | undefined,
): Promise<string> {
  if (previous) {
    const old = new Map((await git.readTree({ fs, gitdir, oid: previous })).tree.map((e) => [e.path, e.oid]));
    if (old.size === entries.length && entries.every((e) => old.get(e.path) === e.oid)) return previous;
  }
  return git.writeTree({ fs, gitdir, tree: entries });
}

async function childTree(gitdir: string, tree: string, name: string): Promise<string | undefined> {
  const entry = (await git.readTree({ fs, gitdir, oid: tree })).tree.find(
    (e) => e.path === name && e.type === "tree",
  );
  return entry?.oid;
}
