import { BACKED_UP_PKI } from "../manifests/controlplane/pki-layout.js";

/**
 * What an off-host backup archive holds, and nothing else: `backup.json` (what it is), `snapshot.db`
 * (the etcd snapshot), and `pki/<secret>/<key>` for each key of the Secrets BACKED_UP_PKI names.
 */
export const BACKUP_MANIFEST = "backup.json";
export const SNAPSHOT_ENTRY = "snapshot.db";
/** The largest manifest and PKI file a backup holds (a PEM certificate chain or key is a few KiB). */
const MAX_SMALL_ENTRY = 64 * 1024;

/** The archive entry of each backed-up Secret key: pki/<secret>/<key>. */
export function pkiEntries(): { readonly secret: string; readonly key: string; readonly entry: string }[] {
  return BACKED_UP_PKI.flatMap((secret) =>
    Object.keys(secret.keys).map((key) => ({ secret: secret.name, key, entry: `pki/${secret.name}/${key}` })),
  );
}

/** The PKI files a backup must hold to bring a cluster back: each CA's key pair and the service-account key. */
export const REQUIRED_PKI = [
  "pki/ca/tls.crt",
  "pki/ca/tls.key",
  "pki/front-proxy-ca/tls.crt",
  "pki/front-proxy-ca/tls.key",
  "pki/etcd-ca/tls.crt",
  "pki/etcd-ca/tls.key",
  "pki/service-account/sa.key",
  "pki/service-account/sa.pub",
] as const;

/** How large each entry of a backup may be (undefined: never in a backup); the snapshot up to `maxSnapshot`. */
export function backupAllowance(maxSnapshot: number): (name: string) => number | undefined {
  const small = new Set([BACKUP_MANIFEST, ...pkiEntries().map((e) => e.entry)]);
  return (name) => (name === SNAPSHOT_ENTRY ? maxSnapshot : small.has(name) ? MAX_SMALL_ENTRY : undefined);
}

/** What backup.json says. */
export interface BackupManifest {
  readonly cluster: string;
  /** The snapshot file's name in the host's backup volume. */
  readonly snapshot: string;
  /** When the push ran (RFC 3339). */
  readonly takenAt: string;
}

/** A snapshot's file name as the backup Job writes it in its volume: a plain `.db` name, no directory. */
export const SNAPSHOT_FILE_NAME = /^[A-Za-z0-9._-]{1,200}\.db$/;

/** The object key of a backup: <prefix><cluster>/<yyyymmddThhmmssZ>-<snapshot>.tar.age — newest sorts last. */
export function backupKey(prefix: string, cluster: string, snapshot: string, at: Date): string {
  const stamp = at
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d{3}/, "");
  return `${prefix}${cluster}/${stamp}-${snapshot.replace(/\.db$/, "")}.tar.age`;
}

/** Whether a listed key is a backup of `cluster` under `prefix` (what backupKey writes). */
export function isBackupKey(prefix: string, cluster: string, key: string): boolean {
  const rest = key.startsWith(`${prefix}${cluster}/`) ? key.slice(prefix.length + cluster.length + 1) : "";
  return /^\d{8}T\d{6}Z-[A-Za-z0-9._-]{1,200}\.tar\.age$/.test(rest);
}

/**
 * The key of an off-host restore's staged copy: <prefix><cluster>/restores/<restore>.tar.age — the
 * snapshot alone, re-encrypted to a key made for that restore (never a backup: it holds no keys).
 */
export function stagedKey(prefix: string, cluster: string, restore: string): string {
  return `${prefix}${cluster}/restores/${restore}.tar.age`;
}
