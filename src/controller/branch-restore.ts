import type { Logger } from "pino";
import type { CommitVerifier } from "../git/commit-verifier.js";
import type { FleetRepo } from "../git/fleet-repo.js";
import { objectId } from "../git/object-batch.js";
import { inHistory, readTreeBlobIds, readTreeFiles } from "../git/read-tree.js";
import type { LoadResult } from "../load/load-fleet.js";
import type { FileTree } from "../model/file-tree.js";
import { rebuildState } from "../reconcile/rebuild-state.js";
import { EMPTY_STATE, type ReconcileState } from "../reconcile/reconcile-step.js";
import { restoreState, sourcePosition } from "../reconcile/restore-state.js";
import { OWNED_DIRECTORIES, writerOf } from "../status/layout.js";
import { splitObserved } from "../status/observed-status.js";
import { appStatusPath, unbucketedApp } from "../status/status-files.js";

/** How a restore reads the branch and the source, and loads a source tree with its apps built. */
export interface BranchReader {
  readonly repo: FleetRepo;
  readonly logger: Logger;
  /** Checks a tip's signature against the trusted keys; without it, the branch is rebuilt. */
  readonly verify?: CommitVerifier;
  readonly now: () => number;
  readonly secretDigestKey?: Uint8Array;
  /** The fleet at a source tree, its Helm and Kustomize apps built. */
  load(tree: FileTree): Promise<LoadResult>;
}

/** What a reconciler holds after reading the status branch afresh. */
export interface RestoredBranch {
  readonly state: ReconcileState;
  readonly statusTip: string | undefined;
  /** The source tree the state was rendered from, for diffs (undefined: the next render reads all). */
  readonly renderedTree: string | undefined;
  /** The observed blocks of status files, by path. */
  readonly observed: Map<string, string>;
  /** The whole files of the writers beside the reconcile (inventories, agents, policies, autoscaling). */
  readonly syncFiles: Map<string, string>;
  /** Whether the state comes from a tip this process can vouch for (signed by a trusted key, or none). */
  readonly trusted: boolean;
  /** What the branch holds that the render does not give: written with the next commit. */
  readonly repair: Map<string, string | null>;
  /** Remove, with the next valid render, the branch's files it does not account for. */
  readonly sweep: boolean;
}

/**
 * Reads the status branch afresh: as it is, when its tip carries a signature by a trusted key;
 * else by rendering the source again, reading nothing under rendered/ (the branch's objects are
 * never applied unless this process wrote or verified them). A crash at any point converges here.
 */
export async function restoreBranch(
  reader: BranchReader,
  tip: string | undefined,
  head: string,
): Promise<RestoredBranch> {
  const none = { renderedTree: undefined, repair: new Map<string, string | null>(), sweep: false };
  if (!tip)
    return {
      ...none,
      state: EMPTY_STATE,
      statusTip: tip,
      observed: new Map(),
      syncFiles: new Map(),
      trusted: true,
    };
  const { repo, logger, verify } = reader;
  const verdict = verify ? await verify(repo.gitdir, repo.cache, tip) : undefined;
  if (verdict?.ok) return { ...none, ...(await restoreVerified(reader, tip)), statusTip: tip, trusted: true };
  if (verdict)
    logger.error(
      { statusCommit: tip, reason: verdict.reason },
      "the status branch's tip is not signed by a trusted key: nothing on it is applied; rendering the source again",
    );
  return { ...(await rebuild(reader, tip, head)), statusTip: tip, trusted: false };
}

// The state as the verified tip holds it: rendered/ and status/ taken as they are.
async function restoreVerified(reader: BranchReader, tip: string) {
  const { repo, logger } = reader;
  const { files, observed, syncFiles } = await statusFiles(repo, await repo.treeOf(tip), ownedPath);
  const { renderedCommit } = sourcePosition(files);
  let tree: FileTree = new Map();
  let model: ReconcileState["model"];
  let renderedTree: string | undefined;
  if (renderedCommit) {
    // A shallow cache may not hold the rendered commit any more: then the next render is a full one.
    renderedTree = await repo.treeOf(renderedCommit).catch(() => undefined);
    if (renderedTree) {
      tree = await readTreeFiles(repo.gitdir, repo.cache, renderedTree, wantedSource);
      model = (await reader.load(tree)).model;
    }
  }
  logger.info(
    { statusCommit: tip, renderedCommit, files: files.size },
    "restored state from the status branch (signature verified)",
  );
  return { state: restoreState(files, tree, model), renderedTree, observed, syncFiles };
}

// The state rebuilt by rendering again the source commit the branch names — if that commit is the
// source branch's tip or in its history — with the branch's files only compared with and taken as
// bounded observations; every file the branch holds differently is repaired by the next commit.
// When the named commit cannot be used, nothing is rendered (so nothing syncs) until the next
// reconcile renders the tip in full, and what it leaves of the branch's files is removed then.
async function rebuild(reader: BranchReader, tip: string, head: string) {
  const { logger, repo } = reader;
  const tree = await repo.treeOf(tip);
  const isRendered = (path: string) => path.startsWith("rendered/");
  const { files, observed, syncFiles } = await statusFiles(
    repo,
    tree,
    (path) => ownedPath(path) && !isRendered(path),
  );
  const claimed = sourcePosition(files).renderedCommit;
  const source =
    claimed && (await inHistory(repo.gitdir, repo.cache, head, claimed))
      ? await loadSource(reader, claimed)
      : undefined;
  const model = source?.loaded.model;
  let rebuilt: Pick<RestoredBranch, "state" | "repair" | "renderedTree" | "sweep">;
  if (source && model) {
    // rendered/ is not read: only its paths and object ids, to compare the render with.
    const renderedIds = await readTreeBlobIds(repo.gitdir, repo.cache, tree, isRendered);
    const found = rebuildState({
      restored: restoreState(files, source.tree, model),
      rendered: {
        paths: [...renderedIds.keys()],
        holds: (path, text) => renderedIds.get(path) === objectId("blob", new TextEncoder().encode(text)),
      },
      // The autoscalers' status is among the sync's files: their recorded totals are observations too.
      files: new Map([...files, ...syncFiles]),
      observed,
      now: reader.now(),
      secretDigestKey: reader.secretDigestKey,
    });
    rebuilt = { state: found.state, repair: found.repair, renderedTree: source.treeOid, sweep: false };
  } else {
    // Compared with by the next render of the tip, never synced: without a model nothing is. (The
    // branch's rendered/ files are read as text only for that comparison.)
    const rendered = await readTreeFiles(repo.gitdir, repo.cache, tree, isRendered);
    const texts = [...rendered].map(([path, bytes]) => [path, new TextDecoder().decode(bytes)] as const);
    const state = {
      ...restoreState(new Map([...files, ...texts]), new Map(), undefined),
      sourceCommit: undefined,
      renderedCommit: undefined,
      model: undefined,
    };
    rebuilt = { state, repair: new Map(), renderedTree: undefined, sweep: true };
  }
  logger.info(
    {
      statusCommit: tip,
      renderedCommit: model ? claimed : null,
      claimed: claimed ?? null,
      repair: rebuilt.repair.size,
    },
    "rebuilt state by rendering the source again (the status branch is not signed by a trusted key)",
  );
  return { ...rebuilt, observed, syncFiles };
}

// The branch's files the predicate keeps, observed blocks split off (into `observed`) and the
// whole files of the writers beside the reconcile kept apart (in `syncFiles`).
async function statusFiles(repo: FleetRepo, tree: string, wanted: (path: string) => boolean) {
  const raw = await readTreeFiles(repo.gitdir, repo.cache, tree, wanted);
  const files = new Map<string, string>();
  const observed = new Map<string, string>();
  const syncFiles = new Map<string, string>();
  for (const [path, bytes] of raw) {
    const text = new TextDecoder().decode(bytes);
    if (isSyncFile(path)) {
      syncFiles.set(path, text);
      continue;
    }
    const { base, observed: block } = splitObserved(text);
    files.set(path, base);
    // An app's file left where gitfleet wrote it before buckets moves with the next commit; its
    // observed block goes with it.
    const app = unbucketedApp(path);
    if (block !== undefined) observed.set(app === undefined ? path : appStatusPath(app), block);
  }
  return { files, observed, syncFiles };
}

async function loadSource(reader: BranchReader, commit: string) {
  const { repo } = reader;
  const treeOid = await repo.treeOf(commit).catch(() => undefined);
  if (!treeOid) return undefined;
  const tree = await readTreeFiles(repo.gitdir, repo.cache, treeOid, wantedSource);
  return { tree, treeOid, loaded: await reader.load(tree) };
}

/** Files the reconcile does not write, whole: inventories, pull-mode agents' reports, policies' and autoscalers' status (status/layout.ts says who writes what). */
export function isSyncFile(path: string): boolean {
  const writer = writerOf(path);
  return writer !== undefined && writer !== "reconcile";
}

/** Under the directories gitfleet writes on the status branch (a directory is asked for as "name/"). */
export function ownedPath(path: string): boolean {
  return OWNED_DIRECTORIES.some((directory) => path.startsWith(`${directory}/`));
}

/**
 * Source files worth reading: every file outside hidden trees, as `gitfleet validate` reads a
 * checkout — a kustomization or a Helm app may read any file of the repo (a chart in charts/, a shared
 * base, a generator's input), and the controller must see what validate saw.
 */
export function wantedSource(path: string): boolean {
  return !path.split("/").some((part) => part.startsWith("."));
}
