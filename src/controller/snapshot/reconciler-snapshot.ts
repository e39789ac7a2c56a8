import { type CachedFileRecord, type ParseCache, parseCacheRecords } from "../../load/parse-cache.js";
import type { RestoredBranch } from "../branch-restore.js";

/**
 * What a reconciler keeps on disk between runs: the status branch as it held it (the reconcile's
 * state with its model, render and files, the observed blocks, what is pending) and its parse cache
 * (the fleet repo's files parsed and read). The first lets a restarted process start at the tip it
 * describes without reading the branch; the second, keyed by content, spares it parsing the source
 * again whatever the tip.
 */
export interface ReconcilerSnapshot {
  readonly branch: RestoredBranch;
  readonly parse: readonly CachedFileRecord[];
}

/** The snapshot of what is held now. */
export function snapshotOf(branch: RestoredBranch, cache: ParseCache): ReconcilerSnapshot {
  return { branch, parse: parseCacheRecords(cache) };
}

/** The payload as a snapshot, when it has a snapshot's shape (its tag and build were checked already). */
export function asSnapshot(payload: unknown): ReconcilerSnapshot | undefined {
  if (typeof payload !== "object" || payload === null) return undefined;
  const { branch, parse } = payload as Partial<ReconcilerSnapshot>;
  if (!Array.isArray(parse) || typeof branch !== "object" || branch === null) return undefined;
  const maps = [branch.observed, branch.syncFiles, branch.repair, branch.state?.files, branch.state?.tree];
  if (!maps.every((map) => map instanceof Map) || typeof branch.statusTip !== "string") return undefined;
  return payload as ReconcilerSnapshot;
}
