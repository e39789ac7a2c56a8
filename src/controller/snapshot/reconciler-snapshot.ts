import { type CachedFileRecord, type ParseCache, parseCacheRecords } from "../../load/parse-cache.js";
import type { FleetModel } from "../../model/types.js";
import type { ReconcileState } from "../../reconcile/reconcile-step.js";
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

/** Entries per part: a part is encoded whole, so this bounds what a write holds at once. */
const BATCH = 2000;

/** The fleet-sized collections, written in batches after a skeleton that holds everything else. */
type Collection =
  | "tree"
  | "files"
  | "appCommits"
  | "observed"
  | "syncFiles"
  | "objects"
  | "decisions"
  | "errors"
  | "apps"
  | "parse";

interface Skeleton {
  readonly kind: "skeleton";
  readonly branch: RestoredBranch;
}

interface Batch {
  readonly kind: Collection;
  readonly entries: readonly unknown[];
}

/**
 * The snapshot of what is held now, as parts: a skeleton, then each fleet-sized collection in
 * batches. What may change while the parts are written (the observed blocks, the sync's files, the
 * parse cache's file list) is copied now; the reconcile's state is never changed in place.
 */
export function snapshotParts(branch: RestoredBranch, cache: ParseCache): Iterable<unknown> {
  const { state } = branch;
  const collections: [Collection, readonly unknown[]][] = [
    ["tree", [...state.tree]],
    ["files", [...state.files]],
    ["appCommits", [...state.appCommits]],
    ["observed", [...branch.observed]],
    ["syncFiles", [...branch.syncFiles]],
    ["objects", state.render.objects],
    ["decisions", state.render.decisions],
    ["errors", state.render.errors],
    ["apps", state.model?.apps ?? []],
  ];
  const skeleton: Skeleton = {
    kind: "skeleton",
    branch: {
      ...branch,
      repair: new Map(branch.repair),
      observed: new Map(),
      syncFiles: new Map(),
      state: {
        ...state,
        tree: new Map(),
        files: new Map(),
        appCommits: new Map(),
        render: { objects: [], decisions: [], errors: [] },
        model: state.model ? { ...state.model, apps: [] } : undefined,
      },
    },
  };
  const files = [...cache.files];
  return (function* () {
    yield skeleton;
    for (const [kind, entries] of collections)
      for (let at = 0; at < entries.length; at += BATCH)
        yield { kind, entries: entries.slice(at, at + BATCH) } satisfies Batch;
    for (let at = 0; at < files.length; at += BATCH) {
      const records = parseCacheRecords({ files: new Map(files.slice(at, at + BATCH)) });
      // A file's bytes are the tree's most of the time: kept once, taken from the tree when read.
      const entries = records.map((r) => (state.tree.get(r.path) === r.bytes ? { ...r, bytes: null } : r));
      yield { kind: "parse", entries } satisfies Batch;
    }
  })();
}

/** The snapshot the parts make, when they have a snapshot's shape (their tag and build were checked already). */
export function snapshotFrom(parts: readonly unknown[]): ReconcilerSnapshot | undefined {
  const [skeleton, ...batches] = parts;
  if (!isSkeleton(skeleton)) return undefined;
  const gathered = new Map<Collection, unknown[]>();
  for (const batch of batches) {
    if (!isBatch(batch)) return undefined;
    const list = gathered.get(batch.kind) ?? [];
    for (const entry of batch.entries) list.push(entry);
    gathered.set(batch.kind, list);
  }
  const all = <T>(kind: Collection) => (gathered.get(kind) ?? []) as T[];
  const { branch } = skeleton;
  const tree = new Map(all<[string, Uint8Array]>("tree"));
  const model = branch.state.model;
  const state: ReconcileState = {
    ...branch.state,
    tree,
    files: new Map(all("files")),
    appCommits: new Map(all("appCommits")),
    render: { objects: all("objects"), decisions: all("decisions"), errors: all("errors") },
    model: model ? ({ ...model, apps: all("apps") } as FleetModel) : undefined,
  };
  const parse = all<CachedFileRecord & { bytes: Uint8Array | null }>("parse").map((r) => ({
    ...r,
    bytes: r.bytes ?? tree.get(r.path) ?? new Uint8Array(),
  }));
  return {
    branch: { ...branch, state, observed: new Map(all("observed")), syncFiles: new Map(all("syncFiles")) },
    parse,
  };
}

function isSkeleton(part: unknown): part is Skeleton {
  if (typeof part !== "object" || part === null || (part as Skeleton).kind !== "skeleton") return false;
  const { branch } = part as Skeleton;
  return (
    typeof branch === "object" &&
    branch !== null &&
    typeof branch.statusTip === "string" &&
    branch.repair instanceof Map &&
    typeof branch.state === "object" &&
    branch.state !== null
  );
}

function isBatch(part: unknown): part is Batch {
  return typeof part === "object" && part !== null && Array.isArray((part as Batch).entries);
}
