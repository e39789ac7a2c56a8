import type { CommitVerifier } from "../../git/commit-verifier.js";
import type { FleetRepo } from "../../git/fleet-repo.js";
import { objectId } from "../../git/object-batch.js";
import { readTreeFiles } from "../../git/read-tree.js";
import { diffTrees } from "../../git/tree-diff.js";
import { SOURCE_COMMIT_TRAILER, trailerBlock } from "../../model/trailers.js";
import type { ReconcileOutcome, ReconcileState } from "../../reconcile/reconcile-step.js";
import { statusFileKind } from "../../status/layout.js";
import { splitObserved } from "../../status/observed-status.js";
import { isSyncFile } from "../branch-restore.js";

// A standby (or a leader whose branch another writer moved) follows the status branch one commit at
// a time when it can: a commit of what the members reported is taken on as it is, a reconcile of a
// new source commit is replayed. Anything else — another parent, a hand edit, a repair pending — is
// left to a restore from the branch (branch-restore.ts).

/** What the follower holds when the branch moved by one commit on top of it. */
export interface Following {
  readonly state: ReconcileState;
  /** The status commit `state` describes: the moved branch's new tip must have it as its only parent. */
  readonly statusTip: string;
  /** The source tree the state was rendered from (a replay diffs against it). */
  readonly renderedTree: string | undefined;
  /** Whether the state can vouch for its branch: then an observation commit must verify. */
  readonly trusted: boolean;
  /** Something is pending (a repair, a sweep) that a catch-up would lose. */
  readonly pending: boolean;
}

/** How the follower reads Git and renders a source commit as its own reconcile would. */
export interface CatchUpReader {
  readonly repo: FleetRepo;
  readonly verify?: CommitVerifier;
  /** The reconcile of `source` from `state` (the round's own step). */
  render(state: ReconcileState, source: string): Promise<{ outcome: ReconcileOutcome; headTree: string }>;
  /** Changes as the branch holds them: each status file with its observed block. */
  carried(changes: ReadonlyMap<string, string | null>): ReadonlyMap<string, string | null>;
}

/** How the follower moves on to the new tip. */
export type CaughtUp =
  /** The commit recorded what the members reported: these files, by path (null: removed). */
  | { readonly kind: "observed"; readonly texts: ReadonlyMap<string, string | null> }
  /** The commit was the reconcile of a new source commit, rendered here to exactly its files. */
  | { readonly kind: "replayed"; readonly outcome: ReconcileOutcome; readonly headTree: string };

/** How the follower moves on to `tip`, one commit on top of what it holds; undefined when it must restore. */
export async function catchUp(
  reader: CatchUpReader,
  from: Following,
  tip: string,
): Promise<CaughtUp | undefined> {
  const { repo } = reader;
  if (!from.state.model || from.pending) return undefined;
  const parents = await repo.parentsOf(tip);
  if (parents.length !== 1 || parents[0] !== from.statusTip) return undefined;
  const source = trailerBlock(await repo.commitMessage(tip))?.get(SOURCE_COMMIT_TRAILER);
  if (!source) return undefined;
  if (source === from.state.sourceCommit) {
    const texts = await observationAt(reader, from, tip);
    return texts ? { kind: "observed", texts } : undefined;
  }
  return replay(reader, from, tip, source);
}

// The leader's reconcile of `source`, recomputed: when this replica renders that commit to exactly
// the files it changed — same paths, same bytes — the state moves on to it as if this replica had
// written it, without reading the whole branch again.
async function replay(
  reader: CatchUpReader,
  from: Following,
  tip: string,
  source: string,
): Promise<CaughtUp | undefined> {
  const { repo } = reader;
  if (!from.renderedTree) return undefined;
  // A remote's shallow cache holds the source branch's tip only: a commit the leader rendered
  // before the tip moved on is not there, and the branch is restored instead.
  const present = await repo.treeOf(source).then(
    () => true,
    () => false,
  );
  if (!present) return undefined;
  const { outcome, headTree } = await reader.render(from.state, source);
  const written = await diffTrees(
    repo.gitdir,
    repo.cache,
    await repo.treeOf(from.statusTip),
    await repo.treeOf(tip),
  );
  if (!sameChanges(reader.carried(outcome.changes), written)) return undefined;
  return { kind: "replayed", outcome, headTree };
}

// What an observation commit changed, by path (null: removed): only observed blocks of status files
// whose rendered part is the state's, and files the sync and the policies own — nothing rendered
// changed. A state that can vouch for its branch takes on only a commit its verifier trusts.
async function observationAt(
  reader: CatchUpReader,
  from: Following,
  tip: string,
): Promise<Map<string, string | null> | undefined> {
  const { repo, verify } = reader;
  const changed = await diffTrees(
    repo.gitdir,
    repo.cache,
    await repo.treeOf(from.statusTip),
    await repo.treeOf(tip),
  );
  const observedOnly = (path: string) => isSyncFile(path) || statusFileKind(path)?.observedBySync === true;
  if (changed.length === 0 || !changed.every(({ path }) => observedOnly(path))) return undefined;
  if (from.trusted && !(verify && (await verify(repo.gitdir, repo.cache, tip)).ok)) return undefined;
  const paths = new Set(changed.map((c) => c.path));
  const raw = await readTreeFiles(repo.gitdir, repo.cache, await repo.treeOf(tip), (path) =>
    path.endsWith("/") ? [...paths].some((p) => p.startsWith(path)) : paths.has(path),
  );
  const texts = new Map<string, string | null>();
  for (const { path } of changed) {
    const bytes = raw.get(path);
    texts.set(path, bytes ? new TextDecoder().decode(bytes) : null);
  }
  // A status file removed, or whose rendered part moved, is not an observation.
  const rendered = (path: string, text: string | null) =>
    !isSyncFile(path) && (text === null || splitObserved(text).base !== from.state.files.get(path));
  return [...texts].some(([path, text]) => rendered(path, text)) ? undefined : texts;
}

/** Takes an observation commit's files on: sync files whole, status files' observed blocks. */
export function adoptObserved(
  texts: ReadonlyMap<string, string | null>,
  observed: Map<string, string>,
  syncFiles: Map<string, string>,
): void {
  for (const [path, text] of texts) {
    if (isSyncFile(path)) {
      if (text === null) syncFiles.delete(path);
      else syncFiles.set(path, text);
      continue;
    }
    const block = splitObserved(text ?? "").observed;
    if (block === undefined) observed.delete(path);
    else observed.set(path, block);
  }
}

// Whether a commit's changes (as Git's diff gives them) are exactly these files, byte for byte.
function sameChanges(
  files: ReadonlyMap<string, string | null>,
  written: readonly { readonly path: string; readonly oid: string | null }[],
): boolean {
  if (files.size !== written.length) return false;
  const encoder = new TextEncoder();
  return written.every(({ path, oid }) => {
    const text = files.get(path);
    if (text === undefined) return false;
    return text === null ? oid === null : oid === objectId("blob", encoder.encode(text));
  });
}
