import { BACKUP_STORE_SECRET } from "../manifests/controlplane/pki-layout.js";
import type { HostedControlPlane } from "../model/controlplane/hosted-control-plane.js";
import { oneLine } from "../model/one-line.js";
import { writeSecret } from "./hosted-secrets.js";
import type { MemberClient } from "./member-client.js";

/** The operator's backup stores by name; each call rejects with why (never with what a file holds). */
export interface BackupStores {
  /**
   * A store's files (endpoint, bucket, region, prefix, the key pair, recipients), already
   * validated: what a host's backup Job is given.
   */
  files(store: string): Promise<Readonly<Record<string, string>>>;
  /**
   * An off-host restore's fetch: the cluster's backup (`latest` or a key) opened with the store's
   * `identity` file — gitfleet's own, never copied to a host — and its snapshot alone staged in the
   * store for a key made for the restore. Gives the backup's key, its PKI and that key's identity.
   */
  fetch(store: string, request: RestoreFetchRequest): Promise<FetchedBackup>;
}

/** Whose backup an off-host restore fetches. */
export interface RestoreFetchRequest {
  readonly cluster: string;
  readonly restore: string;
  /** `latest` or an object key. */
  readonly backup: string;
  /** The largest backup taken. */
  readonly maxBytes: number;
  readonly now: Date;
}

/** What an off-host restore's fetch brings back. */
export interface FetchedBackup {
  readonly key: string;
  /** Per backed-up Secret, its keys as the backup holds them. */
  readonly pki: Readonly<Record<string, Readonly<Record<string, string>>>>;
  /** The age identity that opens the staged snapshot alone. */
  readonly identity: string;
}

/**
 * For a control plane whose class sends backups off the host: copies the operator's store into the
 * Secret its backup Job mounts (etcd-backup-store, in its namespace), by server-side apply under the
 * credentials' field manager — a rotated key reaches the next backup. Returns why it could not, or
 * undefined (also when the class keeps backups in the host).
 */
export async function ensureBackupStoreSecret(
  client: MemberClient,
  plane: HostedControlPlane,
  stores: BackupStores | undefined,
): Promise<string | undefined> {
  const offHost = plane.etcd.backup.offHost;
  if (!offHost) return undefined;
  if (!stores)
    return `backup store ${offHost.store}: gitfleet runs without --backup-stores-dir, so no backup leaves the host`;
  try {
    await writeSecret(
      client,
      plane.etcd.namespace,
      BACKUP_STORE_SECRET.name,
      await stores.files(offHost.store),
    );
    return undefined;
  } catch (error) {
    return `backup store ${offHost.store}: ${oneLine(error instanceof Error ? error.message : String(error))}`;
  }
}
