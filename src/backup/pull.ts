import { createReadStream, createWriteStream } from "node:fs";
import { mkdir, mkdtemp, open, rm } from "node:fs/promises";
import { dirname, join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import { Decrypter } from "age-encryption";
import { explainInvalidDns1123Label } from "../apimachinery/names.js";
import { type ListedObject, S3Client } from "../objectstore/s3-client.js";
import { type ArchiveEntry, entryStream, readArchiveIndex } from "./archive.js";
import {
  BACKUP_MANIFEST,
  type BackupManifest,
  backupAllowance,
  isBackupKey,
  REQUIRED_PKI,
  SNAPSHOT_ENTRY,
  SNAPSHOT_FILE_NAME,
  stagedKey,
} from "./backup-contents.js";
import type { BackupStore } from "./store-config.js";

/** The most entries a backup archive may hold: the manifest, the snapshot and the PKI keys, with room. */
const MAX_ENTRIES = 64;

/** A cluster's backups in the store, oldest first (the newest is last). */
export async function listBackups(store: BackupStore, cluster: string): Promise<ListedObject[]> {
  const client = new S3Client(store.location, store.key);
  const listed = await client.list(`${store.prefix}${cluster}/`);
  return listed
    .filter((o) => isBackupKey(store.prefix, cluster, o.key))
    .sort((a, b) => (a.key < b.key ? -1 : 1));
}

/**
 * One pull: whose backup (a key, else the newest; or the copy staged for a restore), the identities
 * that open it, where it goes.
 */
export interface PullRequest {
  readonly store: BackupStore;
  readonly cluster: string;
  readonly key?: string;
  /** An off-host restore's name: its staged copy (the snapshot alone), not a backup. */
  readonly staged?: string;
  /** age identities (AGE-SECRET-KEY-1…); one of the recipients' must be among them. */
  readonly identities: readonly string[];
  /** A directory to unpack into: made, and refused if it holds anything. */
  readonly into: string;
  readonly workDir: string;
  /** The largest object read, and the largest snapshot taken. */
  readonly maxBytes: number;
}

/** What a pull unpacked. */
export interface PullResult {
  readonly key: string;
  readonly manifest: BackupManifest;
  /** The entries written under `into`, in archive order. */
  readonly files: readonly string[];
}

/**
 * Gets a backup (the key asked for, else the cluster's newest), decrypts it with the identities and
 * unpacks it: only a backup's own entries (backup.json, snapshot.db, pki/<secret>/<key>), each within
 * its size, written as new files (0600) under `into`. A backup that names another cluster, lacks
 * the snapshot or a CA's key, or holds anything else is refused and nothing is unpacked. A restore's
 * staged copy holds backup.json and snapshot.db only.
 */
export async function pullBackup(request: PullRequest): Promise<PullResult> {
  const key = await keyOf(request);
  if (!request.staged && !isBackupKey(request.store.prefix, request.cluster, key))
    throw new Error(`${key} is not a backup of ${request.cluster} in this store`);
  const work = await mkdtemp(join(request.workDir, "pull-"));
  try {
    const encrypted = join(work, "backup.tar.age");
    await new S3Client(request.store.location, request.store.key).getFile(key, encrypted, request.maxBytes);
    const decrypter = new Decrypter();
    for (const identity of request.identities) decrypter.addIdentity(identity);
    const archive = join(work, "backup.tar");
    const cipher = Readable.toWeb(createReadStream(encrypted)) as ReadableStream<Uint8Array>;
    const plain = await decrypter.decrypt(cipher).catch((error: unknown) => {
      throw new Error(
        `${key} cannot be opened with these identities: ${error instanceof Error ? error.message : String(error)}`,
      );
    });
    await pipeline(
      Readable.fromWeb(plain as WebReadableStream<Uint8Array>),
      createWriteStream(archive, { mode: 0o600 }),
    );
    const entries = await readArchiveIndex(archive, backupAllowance(request.maxBytes), MAX_ENTRIES);
    const names = new Set(entries.map((e) => e.name));
    const required = [BACKUP_MANIFEST, SNAPSHOT_ENTRY, ...(request.staged ? [] : REQUIRED_PKI)];
    const lacking = required.filter((name) => !names.has(name));
    if (lacking.length > 0) throw new Error(`${key} lacks ${lacking.join(", ")}`);
    if (request.staged && names.size !== required.length)
      throw new Error(`${key} holds more than a staged snapshot`);
    const manifestEntry = entries.find((e) => e.name === BACKUP_MANIFEST);
    const manifest = parseManifest(manifestEntry ? await readSlice(archive, manifestEntry) : Buffer.alloc(0));
    if (manifest.cluster !== request.cluster)
      throw new Error(`${key} is a backup of ${JSON.stringify(manifest.cluster)}, not of ${request.cluster}`);
    await mkdir(request.into, { recursive: true, mode: 0o700 });
    for (const entry of entries) {
      const target = join(request.into, entry.name);
      await mkdir(dirname(target), { recursive: true, mode: 0o700 });
      await pipeline(entryStream(archive, entry), createWriteStream(target, { mode: 0o600, flags: "wx" }));
    }
    return { key, manifest, files: entries.map((e) => e.name) };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

// The key a pull gets: the staged copy of a restore, the key asked for, or the cluster's newest backup.
async function keyOf(request: PullRequest): Promise<string> {
  if (request.staged) {
    const why = explainInvalidDns1123Label(request.staged);
    if (why) throw new Error(`restore ${JSON.stringify(request.staged.slice(0, 80))}: ${why}`);
    return stagedKey(request.store.prefix, request.cluster, request.staged);
  }
  const key = request.key ?? (await listBackups(request.store, request.cluster)).at(-1)?.key;
  if (!key) throw new Error(`the store holds no backup of ${request.cluster}`);
  return key;
}

async function readSlice(path: string, entry: ArchiveEntry): Promise<Buffer> {
  const file = await open(path, "r");
  try {
    const bytes = Buffer.alloc(entry.size);
    await file.read(bytes, 0, entry.size, entry.offset);
    return bytes;
  } finally {
    await file.close();
  }
}

function parseManifest(bytes: Uint8Array): BackupManifest {
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch {
    throw new Error(`${BACKUP_MANIFEST} is not JSON`);
  }
  const map = (value ?? {}) as Record<string, unknown>;
  const text = (field: string, pattern: RegExp) => {
    const found = map[field];
    if (typeof found !== "string" || !pattern.test(found))
      throw new Error(`${BACKUP_MANIFEST}: ${field} is missing or malformed`);
    return found;
  };
  const cluster = text("cluster", /^.{1,63}$/);
  if (explainInvalidDns1123Label(cluster)) throw new Error(`${BACKUP_MANIFEST}: cluster is malformed`);
  return {
    cluster,
    snapshot: text("snapshot", SNAPSHOT_FILE_NAME),
    takenAt: text("takenAt", /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/),
  };
}
