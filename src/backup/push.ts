import { createWriteStream } from "node:fs";
import { mkdtemp, rm, stat, writeFile } from "node:fs/promises";
import { basename, join } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import { Encrypter } from "age-encryption";
import { S3Client } from "../objectstore/s3-client.js";
import { archiveStream } from "./archive.js";
import {
  BACKUP_MANIFEST,
  type BackupManifest,
  backupKey,
  pkiEntries,
  REQUIRED_PKI,
  SNAPSHOT_ENTRY,
  SNAPSHOT_FILE_NAME,
  stagedKey,
} from "./backup-contents.js";
import type { BackupStore } from "./store-config.js";

/** One push: whose snapshot, where its files are, where it goes. */
export interface PushRequest {
  readonly cluster: string;
  /** The snapshot file etcdctl wrote. */
  readonly snapshot: string;
  /** The mounted PKI Secrets: <pkiDir>/<secret>/<key>. */
  readonly pkiDir: string;
  readonly store: BackupStore;
  /** Where the archive and its encrypted copy are made (removed afterwards). */
  readonly workDir: string;
  readonly now: Date;
}

/** What a push put: its key, size and SHA-256 (of the encrypted object). */
export interface PushResult {
  readonly key: string;
  readonly size: number;
  readonly sha256: string;
}

/**
 * Packs the snapshot with the cluster's PKI into an archive, encrypts it to the store's age
 * recipients as it is made — the plaintext archive is never written anywhere — into a private
 * directory under `workDir` (removed whatever happens), and puts the encrypted file in the store.
 */
export async function pushBackup(request: PushRequest): Promise<PushResult> {
  const snapshot = basename(request.snapshot);
  if (!SNAPSHOT_FILE_NAME.test(snapshot))
    throw new Error(`snapshot ${snapshot} is not a plain .db file name`);
  const info = await stat(request.snapshot).catch(() => undefined);
  if (!info?.isFile()) throw new Error(`snapshot ${snapshot} is not a file`);
  const pki = await presentPki(request.pkiDir);
  const missing = REQUIRED_PKI.filter((entry) => !pki.some((found) => found.name === entry));
  if (missing.length > 0) throw new Error(`the PKI lacks ${missing.join(", ")}: nothing was put`);
  const work = await mkdtemp(join(request.workDir, "push-"));
  try {
    const manifest: BackupManifest = {
      cluster: request.cluster,
      snapshot,
      takenAt: request.now.toISOString(),
    };
    await writeFile(join(work, BACKUP_MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o600 });
    const key = backupKey(request.store.prefix, request.cluster, snapshot, request.now);
    return await sealAndPut({
      entries: [
        // The manifest and the keys first: a reader that wants them stops before the snapshot.
        { name: BACKUP_MANIFEST, from: join(work, BACKUP_MANIFEST) },
        ...pki,
        { name: SNAPSHOT_ENTRY, from: request.snapshot },
      ],
      recipients: request.store.recipients,
      store: request.store,
      key,
      work,
      now: request.now,
    });
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** One off-host restore's staged copy: the snapshot a pull unpacked, for the restore Job to fetch. */
export interface StageRequest {
  readonly cluster: string;
  /** The restore's name: the copy's key is stagedKey(prefix, cluster, restore). */
  readonly restore: string;
  /** The unpacked backup.json and snapshot.db. */
  readonly manifest: string;
  readonly snapshot: string;
  /** The one recipient the copy is encrypted to: a key made for this restore alone. */
  readonly recipient: string;
  readonly store: BackupStore;
  readonly workDir: string;
  readonly now: Date;
}

/**
 * Puts a restore's staged copy: backup.json and the snapshot — never the keys — encrypted as the
 * archive is made to the restore's own recipient, so what the host is given opens that copy alone.
 */
export async function stageSnapshot(request: StageRequest): Promise<PushResult> {
  const work = await mkdtemp(join(request.workDir, "stage-"));
  try {
    return await sealAndPut({
      entries: [
        { name: BACKUP_MANIFEST, from: request.manifest },
        { name: SNAPSHOT_ENTRY, from: request.snapshot },
      ],
      recipients: [request.recipient],
      store: request.store,
      key: stagedKey(request.store.prefix, request.cluster, request.restore),
      work,
      now: request.now,
    });
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

// An archive of the entries, encrypted to the recipients as it is made into `work`, put at `key`.
async function sealAndPut(input: {
  readonly entries: readonly { readonly name: string; readonly from: string }[];
  readonly recipients: readonly string[];
  readonly store: BackupStore;
  readonly key: string;
  readonly work: string;
  readonly now: Date;
}): Promise<PushResult> {
  const archive = archiveStream(input.entries, input.now);
  const encrypted = join(input.work, "backup.tar.age");
  const encrypter = new Encrypter();
  for (const recipient of input.recipients) encrypter.addRecipient(recipient);
  const sealed = await encrypter.encrypt(Readable.toWeb(archive) as ReadableStream<Uint8Array>);
  await pipeline(
    Readable.fromWeb(sealed as WebReadableStream<Uint8Array>),
    createWriteStream(encrypted, { mode: 0o600, flags: "wx" }),
  );
  const client = new S3Client(input.store.location, input.store.key);
  const put = await client.putFile(input.key, encrypted);
  return { key: input.key, ...put };
}

// The backed-up Secrets' keys that are mounted under pkiDir (an overlap's keys only while it lasts).
async function presentPki(pkiDir: string): Promise<{ name: string; from: string }[]> {
  const present: { name: string; from: string }[] = [];
  for (const { secret, key, entry } of pkiEntries()) {
    const from = join(pkiDir, secret, key);
    const info = await stat(from).catch(() => undefined);
    if (info?.isFile()) present.push({ name: entry, from });
  }
  return present;
}
