import { BACKUP_STORE_SECRET } from "../manifests/controlplane/pki-layout.js";
import type { HostedControlPlane } from "../model/controlplane/hosted-control-plane.js";
import { oneLine } from "../model/one-line.js";
import { writeSecret } from "./hosted-secrets.js";
import type { MemberClient } from "./member-client.js";

/**
 * The operator's backup stores by name: a store's files (endpoint, bucket, region, prefix, the key
 * pair, recipients), already validated; rejects with why a store cannot be given (never with what a
 * file holds).
 */
export type BackupStores = (store: string) => Promise<Readonly<Record<string, string>>>;

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
    await writeSecret(client, plane.etcd.namespace, BACKUP_STORE_SECRET.name, await stores(offHost.store));
    return undefined;
  } catch (error) {
    return `backup store ${offHost.store}: ${oneLine(error instanceof Error ? error.message : String(error))}`;
  }
}
