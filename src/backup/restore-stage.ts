import { mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateIdentity, identityToRecipient } from "age-encryption";
import { BACKUP_MANIFEST, pkiEntries, SNAPSHOT_ENTRY } from "./backup-contents.js";
import { pullBackup } from "./pull.js";
import { stageSnapshot } from "./push.js";
import type { BackupStore } from "./store-config.js";

/** One off-host restore's fetch: whose backup (`latest` or a key), for which restore. */
export interface StageRestoreRequest {
  readonly store: BackupStore;
  /** The store's identity file's identities: gitfleet's own, never a host's. */
  readonly identities: readonly string[];
  readonly cluster: string;
  readonly restore: string;
  readonly backup: string;
  /** The largest backup taken: the etcd's quota, with room. */
  readonly maxBytes: number;
  readonly now: Date;
}

/** What a fetch brings back: the backup's key, its PKI as text, and the identity made for the restore. */
export interface StagedRestore {
  readonly key: string;
  /** Per backed-up Secret, its keys as the backup holds them. */
  readonly pki: Readonly<Record<string, Readonly<Record<string, string>>>>;
  /** The age identity that opens the staged snapshot, and nothing else. */
  readonly identity: string;
}

/**
 * Gets a cluster's backup (the key asked for, else its newest) and opens it, in a private temporary
 * directory removed afterwards; puts its snapshot alone back in the store, encrypted to an age key
 * made now for this restore (stagedKey(prefix, cluster, restore)); returns the backup's key, its
 * PKI and that key's identity. The store, the pull and the archive are bounded as `gitfleet backup
 * pull` bounds them.
 */
export async function stageRestore(request: StageRestoreRequest): Promise<StagedRestore> {
  const work = await mkdtemp(join(tmpdir(), "gitfleet-restore-"));
  try {
    const into = join(work, "backup");
    const pulled = await pullBackup({
      store: request.store,
      cluster: request.cluster,
      ...(request.backup !== "latest" ? { key: request.backup } : {}),
      identities: request.identities,
      into,
      workDir: work,
      maxBytes: request.maxBytes,
    });
    const pki: Record<string, Record<string, string>> = {};
    for (const entry of pkiEntries()) {
      const file = join(into, entry.entry);
      if (!(await stat(file).catch(() => undefined))?.isFile()) continue;
      pki[entry.secret] = { ...pki[entry.secret], [entry.key]: await readFile(file, "utf8") };
    }
    const identity = await generateIdentity();
    await stageSnapshot({
      cluster: request.cluster,
      restore: request.restore,
      manifest: join(into, BACKUP_MANIFEST),
      snapshot: join(into, SNAPSHOT_ENTRY),
      recipient: await identityToRecipient(identity),
      store: request.store,
      workDir: work,
      now: request.now,
    });
    return { key: pulled.key, pki, identity };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
