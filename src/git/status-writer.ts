import git from "isomorphic-git";
import { gitFs as fs } from "./git-fs.js";
import { ObjectBatch, objectId, type TreeItem } from "./object-batch.js";

const objectIdOf = (bytes: Uint8Array) => objectId("blob", bytes);

/** The identity and time of a status commit; time comes in from the caller (the core reads no clock). */
export interface CommitAuthor {
  readonly name: string;
  readonly email: string;
  /** Seconds since the epoch. */
  readonly timestamp: number;
  readonly timezoneOffset?: number;
}

import { OWNED_DIRECTORIES } from "../status/layout.js";

/** A status commit to write: the file changes that take the parent's tree to the desired tree. */
export interface StatusCommitRequest {
  readonly gitdir: string;
  /** isomorphic-git's cache object, kept for the life of the repository. */
  readonly cache?: object;
  /** The commit to build on (the status branch's tip), or undefined for the branch's first commit. */
  readonly parent: string | undefined;
  /** Path to new content, or null to remove the file. Paths outside OWNED_DIRECTORIES are refused. */
  readonly changes: ReadonlyMap<string, string | null>;
  /** What changed, in a line or a few; trailers are added. */
  readonly message: string;
  /** Trailers, e.g. Source-Commit and Gitfleet-Controller, in order. */
  readonly trailers: readonly (readonly [string, string])[];
  readonly author: CommitAuthor;
  /** Signs the commit (isomorphic-git's onSign) when given. */
  readonly sign?: (payload: string) => Promise<string>;
}

/** The commit written (not yet on any branch) and every object it added, or no commit for an unchanged tree. */
export type StatusCommitResult =
  | {
      readonly status: "written";
      readonly oid: string;
      readonly tree: string;
      readonly objects: readonly string[];
    }
  | { readonly status: "unchanged"; readonly tree: string | undefined };

type TreeEntry = { path: string; oid: string; type: "blob" | "tree" | "commit" };
interface ChangeNode {
  readonly files: Map<string, string | null>;
  readonly dirs: Map<string, ChangeNode>;
}

/**
 * Writes a status commit from file changes on top of its parent: only the changed blobs and the trees
 * on their paths are written — every other subtree is the parent's, by oid — so a one-app change in a
 * fleet of thousands writes a handful of objects. Makes no commit when the tree comes out unchanged.
 * Moves no branch: the caller publishes the commit with a compare-and-swap (update-ref.ts) or a push.
 */
export async function writeStatusCommit(request: StatusCommitRequest): Promise<StatusCommitResult> {
  const { gitdir } = request;
  const cache = request.cache ?? {};
  const parentTree = request.parent
    ? (await git.readCommit({ fs, gitdir, cache, oid: request.parent })).commit.tree
    : undefined;
  const batch = new ObjectBatch();
  const writer = new TreeWriter(gitdir, cache, batch);
  const tree = (await writer.write(changeTree(request.changes), parentTree)) ?? batch.addTree([]);
  if (tree === parentTree) return { status: "unchanged", tree };
  await batch.persist(gitdir);
  const written = batch.oids();
  const author = {
    name: request.author.name,
    email: request.author.email,
    timestamp: request.author.timestamp,
    timezoneOffset: request.author.timezoneOffset ?? 0,
  };
  const trailers = request.trailers.map(([key, value]) => `${key}: ${value}`).join("\n");
  const message = `${request.message.trimEnd()}\n\n${trailers}\n`;
  const commit = { tree, parent: request.parent ? [request.parent] : [], author, committer: author, message };
  const oid = request.sign
    ? await writeSignedCommit(gitdir, commit, request.sign)
    : await git.writeCommit({ fs, gitdir, commit });
  written.push(oid);
  return { status: "written", oid, tree, objects: written };
}

type CommitFields = Parameters<typeof git.writeCommit>[0]["commit"];

// Signs the commit's text and writes it with the signature as its gpgsig header — what `git commit -S`
// writes. Built here rather than by isomorphic-git's commit(), which reads the worktree's index first
// (every file of a checked-out fleet repo) although the tree is given.
async function writeSignedCommit(
  gitdir: string,
  commit: CommitFields,
  sign: (payload: string) => Promise<string>,
): Promise<string> {
  const signature = await sign(commitPayload(commit));
  return git.writeCommit({ fs, gitdir, commit: { ...commit, gpgsig: signature.replace(/\r/g, "") } });
}

/** The text a commit's signature covers: the commit object without its gpgsig header, as Git writes it. */
export function commitPayload(commit: CommitFields): string {
  const person = (who: CommitFields["author"]) =>
    `${who.name} <${who.email}> ${who.timestamp} ${timezone(who.timezoneOffset)}`;
  const headers = [
    `tree ${commit.tree}`,
    ...commit.parent.map((parent) => `parent ${parent}`),
    `author ${person(commit.author)}`,
    `committer ${person(commit.committer ?? commit.author)}`,
  ];
  return `${headers.join("\n")}\n\n${normalizedMessage(commit.message)}`;
}

// Git's "+hhmm"/"-hhmm"; the offset is minutes west of UTC, as JavaScript's getTimezoneOffset gives
// (so -120 is "+0200"), and a negative zero stays "-0000".
function timezone(minutesWest: number): string {
  const east = minutesWest === 0 ? minutesWest : -minutesWest;
  const sign = east < 0 || Object.is(east, -0) ? "-" : "+";
  const minutes = Math.abs(minutesWest);
  const two = (n: number) => String(n).padStart(2, "0");
  return `${sign}${two(Math.floor(minutes / 60))}${two(minutes % 60)}`;
}

// As Git stores a message: no carriage returns, no leading blank lines, one newline at the end.
function normalizedMessage(message: string): string {
  return `${message.replace(/\r/g, "").replace(/^\n+/, "").replace(/\n+$/, "")}\n`;
}

function changeTree(changes: ReadonlyMap<string, string | null>): ChangeNode {
  const root: ChangeNode = { files: new Map(), dirs: new Map() };
  for (const [path, content] of changes) {
    const parts = path.split("/");
    if (
      !OWNED_DIRECTORIES.includes(parts[0] ?? "") ||
      parts.length < 2 ||
      parts.some((p) => p === "" || p === "." || p === "..")
    )
      throw new Error(`status path ${path} is outside ${OWNED_DIRECTORIES.join(", ")}`);
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

class TreeWriter {
  constructor(
    private readonly gitdir: string,
    private readonly cache: object,
    private readonly batch: ObjectBatch,
  ) {}

  /** The tree for `base` with `changes` applied; undefined when it comes out empty. */
  async write(changes: ChangeNode, base: string | undefined): Promise<string | undefined> {
    const entries = new Map<string, TreeEntry>();
    if (base)
      for (const entry of (await git.readTree({ fs, gitdir: this.gitdir, cache: this.cache, oid: base }))
        .tree)
        entries.set(entry.path, entry);
    const filesChanged = this.applyFiles(entries, changes.files);
    const dirsChanged = await this.applyDirectories(entries, changes.dirs);
    if (entries.size === 0) return undefined;
    if (!filesChanged && !dirsChanged && base) return base;
    if ([...entries.values()].some((e) => e.type === "commit"))
      throw new Error("the status branch holds a submodule under rendered/ or status/; remove it");
    return this.batch.addTree(
      [...entries.values()].map(
        (e): TreeItem => ({ name: e.path, type: e.type as "blob" | "tree", oid: e.oid }),
      ),
    );
  }

  private applyFiles(entries: Map<string, TreeEntry>, files: ReadonlyMap<string, string | null>): boolean {
    let changed = false;
    for (const [name, content] of files) {
      if (content === null) {
        changed = entries.delete(name) || changed;
        continue;
      }
      const bytes = new TextEncoder().encode(content);
      const oid = objectIdOf(bytes);
      if (entries.get(name)?.oid === oid) continue;
      this.batch.add("blob", bytes);
      entries.set(name, { path: name, oid, type: "blob" });
      changed = true;
    }
    return changed;
  }

  private async applyDirectories(
    entries: Map<string, TreeEntry>,
    dirs: ReadonlyMap<string, ChangeNode>,
  ): Promise<boolean> {
    let changed = false;
    for (const [name, child] of dirs) {
      const previous = entries.get(name);
      const oid = await this.write(child, previous?.type === "tree" ? previous.oid : undefined);
      if (oid === previous?.oid) continue;
      changed = true;
      if (oid === undefined) entries.delete(name);
      else entries.set(name, { path: name, oid, type: "tree" });
    }
    return changed;
  }
}
