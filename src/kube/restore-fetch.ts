import { asList, asMap } from "../apimachinery/json.js";
import { dedicatedEtcdObjects } from "../manifests/controlplane/etcd-objects.js";
import { BACKED_UP_PKI, pkiSecretsOf, restoreKeySecret } from "../manifests/controlplane/pki-layout.js";
import { memberNames } from "../model/controlplane/etcd-member-plan.js";
import { type HostedControlPlane, maxBackupBytes } from "../model/controlplane/hosted-control-plane.js";
import type { RestoreOverlay } from "../model/types.js";
import type { BackupStores } from "./backup-store-secret.js";
import { CREDENTIALS_FIELD_MANAGER, MAX_VALUE_BYTES, writeSecret } from "./hosted-secrets.js";
import type { MemberClient } from "./member-client.js";

/**
 * An off-host restore's fetch, in the host its control plane now runs in (the credentials step calls
 * it while the restore is Fetching, before any certificate is planned): the operator's store opens
 * the backup inside gitfleet and stages its snapshot alone for a key made for this restore
 * (BackupStores.fetch); its CAs and service-account key are written back into the control plane's
 * Secrets; and that key goes into the Secret the restore Job mounts (etcd-restore-<name>-key),
 * written last. A fetch that Secret already records for this restore (the same name, started at the
 * same commit) is done: it is not repeated. Returns the backup's key; rejects with why (never with
 * what a file or Secret holds).
 */
export async function fetchOffHostBackup(
  client: MemberClient,
  plane: HostedControlPlane,
  restore: RestoreOverlay,
  stores: BackupStores | undefined,
  now: Date,
): Promise<string> {
  const offHost = plane.etcd.backup.offHost;
  if (!offHost) throw new Error(`its class sends no backup off the host (etcd.backup.offHost)`);
  if (!stores) throw new Error(`backup store ${offHost.store}: gitfleet runs without --backup-stores-dir`);
  // The restore Job writes into the members' volumes: on a host the etcd never ran on, they are made
  // first, as the StatefulSet would make them (it takes them as its own).
  await ensureDataClaims(client, plane);
  const secret = restoreKeySecret(restore.name);
  const started = restore.startedIn ?? "";
  const done = await fetchedBefore(client, plane.etcd.namespace, secret, started);
  if (done) return done;
  const fetched = await stores.fetch(offHost.store, {
    cluster: plane.cluster,
    restore: restore.name,
    backup: restore.backup ?? "latest",
    maxBytes: maxBackupBytes(plane),
    now,
  });
  // Each backed-up Secret written back whole: the keys the backup holds, an overlap's previous
  // certificates included.
  for (const { namespace, secret: pki } of pkiSecretsOf(plane))
    if (BACKED_UP_PKI.includes(pki))
      await writeSecret(client, namespace, pki.name, fetched.pki[pki.name] ?? {});
  await writeSecret(client, plane.etcd.namespace, secret, {
    identity: `${fetched.identity}\n`,
    from: fetched.key,
    "started-in": started,
  });
  return fetched.key;
}

// Each member's volume claim the StatefulSet names data-<member>, made from its claim template with its
// pods' labels when it is not there (on a host the etcd never ran on); one that is there is left.
async function ensureDataClaims(client: MemberClient, plane: HostedControlPlane): Promise<void> {
  const statefulSet = dedicatedEtcdObjects(plane).find((o) => o.kind === "StatefulSet");
  const spec = asMap(statefulSet?.spec);
  const template = asMap(asList(spec.volumeClaimTemplates)[0]);
  const claim = String(asMap(template.metadata).name ?? "data");
  const labels = asMap(asMap(spec.selector).matchLabels);
  for (const member of memberNames(plane.etcd)) {
    const name = `${claim}-${member}`;
    const { namespace } = plane.etcd;
    if (await client.get({ apiVersion: "v1", kind: "PersistentVolumeClaim", namespace, name })) continue;
    await client.apply(
      {
        apiVersion: "v1",
        kind: "PersistentVolumeClaim",
        metadata: { name, namespace, labels: { ...labels } },
        spec: asMap(template.spec),
      },
      true,
      CREDENTIALS_FIELD_MANAGER,
    );
  }
}

// The backup's key a finished fetch of this restore recorded in its Secret, if one did (a restore of
// the same name that started at another commit is another restore: it fetches again).
async function fetchedBefore(
  client: MemberClient,
  namespace: string,
  name: string,
  started: string,
): Promise<string | undefined> {
  const live = await client.get({ apiVersion: "v1", kind: "Secret", namespace, name });
  const data = asMap(live?.data);
  const text = (value: unknown) =>
    typeof value === "string" && value.length <= MAX_VALUE_BYTES
      ? Buffer.from(value, "base64").toString("utf8")
      : undefined;
  const from = text(data.from);
  if (typeof data.identity !== "string" || !from || text(data["started-in"]) !== started) return undefined;
  return from;
}
