/**
 * The status branch's layout (DESIGN.md §3): every path gitfleet writes there and which writer owns
 * it. Everything outside the owned directories is people's and kept as it is.
 */

/** The top-level directories of the status branch gitfleet writes; everything else on it is kept. */
export const OWNED_DIRECTORIES: readonly string[] = ["rendered", "status"];

/** Who writes a status file: the reconcile (its render), or a writer beside it, whole files of its own. */
export type StatusWriter =
  | "reconcile"
  | "sync"
  | "agent"
  | "shard"
  | "migrations"
  | "upgrades"
  | "restores"
  | "autoscaling";

/** One kind of file on the status branch: where it lives, who writes it, and what it holds. */
export interface StatusFileKind {
  /** The path, with <placeholders>. */
  readonly path: string;
  /** The directory (ending in /) or the exact path it matches. */
  readonly match: string;
  readonly writer: StatusWriter;
  /** The observed block at its end belongs to the sync (DESIGN.md §3, ADR 0004). */
  readonly observedBySync?: boolean;
  readonly holds: string;
}

export const RENDERED_DIRECTORY = "rendered/";
export const STATUS_DIRECTORY = "status/";
export const APPS_DIRECTORY = "status/apps/";
export const CLUSTERS_DIRECTORY = "status/clusters/";
export const INVENTORY_DIRECTORY = "status/inventory/";
export const AGENTS_DIRECTORY = "status/agents/";
export const MIGRATIONS_DIRECTORY = "status/migrations/";
export const AUTOSCALING_DIRECTORY = "status/autoscaling/";
export const UPGRADES_DIRECTORY = "status/upgrades/";
export const RESTORES_DIRECTORY = "status/restores/";

export const STATUS_FILES: readonly StatusFileKind[] = [
  {
    path: "rendered/<cluster>/<namespace|_cluster>/<group>.<kind>.<name>.yaml",
    match: RENDERED_DIRECTORY,
    writer: "reconcile",
    holds: "what each cluster gets",
  },
  {
    path: "status/source.yaml",
    match: "status/source.yaml",
    writer: "reconcile",
    holds: "where the loop stands: the source commit reconciled, the one rendered, its problems",
  },
  {
    path: "status/apps/<bucket>/<app>.yaml",
    match: APPS_DIRECTORY,
    writer: "reconcile",
    observedBySync: true,
    holds: "an app's source commit, decisions, failover records and errors; its health per cluster",
  },
  {
    path: "status/clusters/<cluster>.yaml",
    match: CLUSTERS_DIRECTORY,
    writer: "reconcile",
    observedBySync: true,
    holds: "the objects a cluster gets; its probed condition, capacity and sync",
  },
  {
    path: "status/inventory/<cluster>.yaml",
    match: INVENTORY_DIRECTORY,
    writer: "sync",
    holds: "what gitfleet applied to a cluster: the only objects it may delete there",
  },
  {
    path: "status/agents/<cluster>.yaml",
    match: AGENTS_DIRECTORY,
    writer: "agent",
    holds: "a pull-mode agent's report",
  },
  {
    path: "status/shard.json",
    match: "status/shard.json",
    writer: "shard",
    holds:
      "on a shard's own branch: what its holder observed of the shard's members (conditions, sync results)",
  },
  {
    path: "status/migrations/<name>.yaml",
    match: MIGRATIONS_DIRECTORY,
    writer: "migrations",
    holds: "a migration's batches and their state",
  },
  {
    path: "status/upgrades/<name>.yaml",
    match: UPGRADES_DIRECTORY,
    writer: "upgrades",
    holds: "a control-plane upgrade's version, batches and their state",
  },
  {
    path: "status/restores/<name>.yaml",
    match: RESTORES_DIRECTORY,
    writer: "restores",
    holds: "an etcd restore's phase and outcome (kept after its file leaves the repo: etcd runs on its data)",
  },
  {
    path: "status/autoscaling/<kind>/<namespace>/<name>.yaml",
    match: AUTOSCALING_DIRECTORY,
    writer: "autoscaling",
    holds: "autoscalers' totals, history and held divisions",
  },
];

/** The kind of file a path on the status branch is; undefined for paths gitfleet does not write. */
export function statusFileKind(path: string): StatusFileKind | undefined {
  return STATUS_FILES.find((kind) =>
    kind.match.endsWith("/") ? path.startsWith(kind.match) : path === kind.match,
  );
}

/** Who writes a path on the status branch; undefined when gitfleet does not. */
export function writerOf(path: string): StatusWriter | undefined {
  return statusFileKind(path)?.writer;
}
