import type { FleetRepo } from "../git/fleet-repo.js";
import { readTreeFiles } from "../git/read-tree.js";
import { diffTrees } from "../git/tree-diff.js";
import type { FileTree } from "../model/file-tree.js";
import { ALL } from "../reconcile/affected-apps.js";
import type { ReconcileState } from "../reconcile/reconcile-step.js";
import { wantedSource } from "./branch-restore.js";

/** A source commit's tree as the reconcile reads it, and the paths that changed since the last render. */
export interface SourceRead {
  readonly headTree: string;
  readonly tree: FileTree;
  readonly changedPaths: readonly string[] | typeof ALL;
}

/**
 * Reads the files gitfleet renders from a source commit: only what changed since the tree the state
 * was rendered from, or everything when there is no such tree (or its objects are gone, a cache
 * started afresh).
 */
export async function readSource(
  repo: FleetRepo,
  state: ReconcileState,
  renderedTree: string | undefined,
  head: string,
): Promise<SourceRead> {
  const headTree = await repo.treeOf(head);
  const changes =
    state.model && renderedTree
      ? await diffTrees(repo.gitdir, repo.cache, renderedTree, headTree).catch(() => undefined)
      : undefined;
  if (!state.model || !changes) {
    const tree = await readTreeFiles(repo.gitdir, repo.cache, headTree, wantedSource);
    return { headTree, tree, changedPaths: ALL };
  }
  const tree = new Map(state.tree);
  for (const change of changes) {
    if (change.oid === null || !wantedSource(change.path)) tree.delete(change.path);
    else tree.set(change.path, await repo.readBlob(change.oid));
  }
  return { headTree, tree, changedPaths: changes.map((c) => c.path) };
}
