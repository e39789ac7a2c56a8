import { lstat, readdir, unlink } from "node:fs/promises";
import { join } from "node:path";
import { S3Client } from "../objectstore/s3-client.js";
import { isBackupKey, SNAPSHOT_FILE_NAME } from "./backup-contents.js";
import type { BackupStore } from "./store-config.js";

/** The most snapshots or backups a class may keep (`etcd.backup.keep`). */
export const MAX_KEEP = 1000;

/** A snapshot in the backup volume: its name and when it was last written. */
export interface SnapshotFile {
  readonly name: string;
  readonly mtimeMs: number;
}

/** The most snapshots or backups one prune is told to hold (the restores in the repo name them). */
export const MAX_HELD = 100;

/**
 * The snapshots to delete so that `keep` remain: `taken`, the run's own, and the newest others by
 * time written (a tie broken by name, the later name kept). The `held` ones (those a restore in the
 * repo names) are neither deleted nor counted. Pure.
 */
export function snapshotsToPrune(
  files: readonly SnapshotFile[],
  keep: number,
  taken: string,
  held: readonly string[] = [],
): string[] {
  assertKeep(keep);
  const kept = new Set(held);
  return files
    .filter((f) => f.name !== taken && !kept.has(f.name))
    .sort((a, b) => b.mtimeMs - a.mtimeMs || compareNames(b.name, a.name))
    .slice(keep - 1)
    .map((f) => f.name)
    .sort(compareNames);
}

/**
 * The backups of a cluster to delete from its store so that `keep` remain: `pushed`, the run's own
 * (listed yet or not), and the newest others — keys as backupKey writes them sort by when they were
 * pushed. Keys that are not this cluster's backups (a restore's staged copy, anything else) are
 * left, and so are the `held` ones (those a restore in the repo names), which are not counted. Pure.
 */
export function backupsToPrune(
  keys: readonly string[],
  keep: number,
  pushed: string,
  prefix: string,
  cluster: string,
  held: readonly string[] = [],
): string[] {
  assertKeep(keep);
  const kept = new Set(held);
  const others = [...new Set(keys)]
    .filter((k) => k !== pushed && !kept.has(k) && isBackupKey(prefix, cluster, k))
    .sort(compareNames);
  return others.slice(0, Math.max(0, others.length - (keep - 1)));
}

const compareNames = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

function assertKeep(keep: number): void {
  if (!Number.isInteger(keep) || keep < 1 || keep > MAX_KEEP)
    throw new Error(`keep must be a whole number from 1 to ${MAX_KEEP} (got ${keep})`);
}

// Held names are only compared with what is listed, never used as paths or keys.
function assertHeld(held: readonly string[]): void {
  if (held.length > MAX_HELD) throw new Error(`at most ${MAX_HELD} held (got ${held.length})`);
}

/**
 * Deletes the snapshots of the backup volume `dir` beyond the newest `keep`, after a run took
 * `taken`; the `held` ones are left out of the count and kept. Only plain `.db` files directly in
 * `dir` count: a directory (a restore's fetched snapshot), a link and anything else are never read,
 * followed or deleted. Returns what it deleted.
 */
export async function pruneSnapshots(
  dir: string,
  keep: number,
  taken: string,
  held: readonly string[] = [],
): Promise<string[]> {
  assertHeld(held);
  if (!SNAPSHOT_FILE_NAME.test(taken))
    throw new Error(`snapshot ${JSON.stringify(taken)} is not a plain .db file name`);
  const files: SnapshotFile[] = [];
  for (const name of await readdir(dir)) {
    if (!SNAPSHOT_FILE_NAME.test(name)) continue;
    const info = await lstat(join(dir, name)).catch(() => undefined);
    if (info?.isFile()) files.push({ name, mtimeMs: info.mtimeMs });
  }
  if (!files.some((f) => f.name === taken))
    throw new Error(`snapshot ${taken} is not in ${dir}: nothing was deleted`);
  const doomed = snapshotsToPrune(files, keep, taken, held);
  for (const name of doomed) await unlink(join(dir, name));
  return doomed;
}

/**
 * Deletes a cluster's backups in the store beyond the newest `keep`, after a push put `pushed`; the
 * `held` keys are left out of the count and kept. Returns the keys it deleted.
 */
export async function pruneBackups(
  store: BackupStore,
  cluster: string,
  keep: number,
  pushed: string,
  held: readonly string[] = [],
): Promise<string[]> {
  assertHeld(held);
  const client = new S3Client(store.location, store.key);
  const listed = await client.list(`${store.prefix}${cluster}/`);
  const doomed = backupsToPrune(
    listed.map((o) => o.key),
    keep,
    pushed,
    store.prefix,
    cluster,
    held,
  );
  for (const key of doomed) await client.delete(key);
  return doomed;
}
