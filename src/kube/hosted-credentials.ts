import { asMap, type JsonMap } from "../apimachinery/json.js";
import { planCredentials, type SecretData } from "../credentials/control-plane-pki.js";
import { PKI_SECRETS, pkiSecretsOf } from "../manifests/controlplane/pki-layout.js";
import type { CredentialRecord, HostedCredentials } from "../model/controlplane/credential-record.js";
import { type HostedControlPlane, resolveControlPlanes } from "../model/controlplane/hosted-control-plane.js";
import { oneLine } from "../model/one-line.js";
import type { FleetModel, HostedPlaneStates } from "../model/types.js";
import { mapConcurrently } from "../util/map-concurrently.js";
import { type BackupStores, ensureBackupStoreSecret } from "./backup-store-secret.js";
import { restartAfterCaReplacement } from "./ca-replacement-restart.js";
import { MAX_VALUE_BYTES, writeSecret } from "./hosted-secrets.js";
import type { MemberClient } from "./member-client.js";
import { ensureNodeBootstrap } from "./node-bootstrap.js";
import { fetchOffHostBackup } from "./restore-fetch.js";

/**
 * The control planes a cluster hosts, resolved against their classes (hosted clusters whose class
 * is missing are invalid and never get here).
 */
export function planesHostedBy(
  model: FleetModel,
  host: string,
  planes?: HostedPlaneStates,
): HostedControlPlane[] {
  return resolveControlPlanes(model, host, planes).map((entry) => entry.plane);
}

/**
 * Brings the credentials of every control plane `client`'s cluster hosts up to date in it: reads
 * their Secrets, generates what is missing, expiring or invalidated (credentials/control-plane-pki.ts)
 * and writes only that, by server-side apply under its own field manager. Runs after the host's sync
 * (which creates the namespaces and the data-less Secrets). Returns per hosted cluster what each
 * credential is now, or why the pass failed: fingerprints and dates, never data.
 */
export async function ensureHostedCredentials(
  client: MemberClient,
  model: FleetModel,
  now: number,
  planes?: HostedPlaneStates,
  stores?: BackupStores,
): Promise<HostedCredentials> {
  const hosted = planesHostedBy(model, client.cluster, planes);
  const passes = new Map<string, HostedCredentials[string]>();
  // Control planes are brought up to date CREDENTIAL_PASSES at a time (each is a dozen reads and a
  // hosted API server that may not answer yet); those sharing an etcd one after another, the first
  // making the etcd's CA the others use.
  await mapConcurrently(etcdGroups(hosted), CREDENTIAL_PASSES, async (group) => {
    let etcdCa: EtcdCa | undefined;
    for (const plane of group) {
      const pass = await credentialPass(client, plane, now, etcdCa, stores);
      passes.set(plane.cluster, pass.entry);
      etcdCa = pass.etcdCa ?? etcdCa;
    }
  });
  const result: Record<string, HostedCredentials[string]> = {};
  for (const plane of hosted) result[plane.cluster] = passes.get(plane.cluster) as HostedCredentials[string];
  return result;
}

/** How many control planes of one host have their credentials brought up to date at once. */
export const CREDENTIAL_PASSES = 8;

type EtcdCa = Awaited<ReturnType<typeof planCredentials>>["etcdCa"];

// The planes in groups that must run one after another: those sharing an etcd; every other alone.
function etcdGroups(hosted: readonly HostedControlPlane[]): HostedControlPlane[][] {
  const groups = new Map<string, HostedControlPlane[]>();
  for (const plane of hosted) {
    const key = plane.etcd.mode === "Shared" ? `etcd ${plane.etcd.name}` : `plane ${plane.cluster}`;
    const group = groups.get(key);
    if (group) group.push(plane);
    else groups.set(key, [plane]);
  }
  return [...groups.values()];
}

// One control plane's pass: its Secrets read, what is due generated and written, its join tokens.
async function credentialPass(
  client: MemberClient,
  plane: HostedControlPlane,
  now: number,
  sharedCa: EtcdCa | undefined,
  stores: BackupStores | undefined,
): Promise<{ entry: HostedCredentials[string]; etcdCa?: EtcdCa }> {
  try {
    // An off-host restore brings the CAs back before anything is planned from them.
    const fetched = await restoreFetch(client, plane, stores, now);
    const existing = await readSecrets(client, plane);
    const shared = plane.etcd.mode === "Shared" ? sharedCa : undefined;
    const plan = await planCredentials(plane, existing, now, shared);
    for (const write of plan.writes) await writeSecret(client, write.namespace, write.name, write.data);
    // The restart follows the cluster CA: as just written, else as the host holds it.
    const caKey = `${plane.namespace}/${PKI_SECRETS.ca.name}`;
    const restarted = await restartAfterCaReplacement(
      client,
      plane,
      plan.writes.find((w) => `${w.namespace}/${w.name}` === caKey)?.data ?? existing.get(caKey),
    );
    const bootstrapped = await withNodeBootstrap(client, plane, now, plan.records);
    const storeError = await ensureBackupStoreSecret(client, plane, stores);
    const entry = {
      ...bootstrapped,
      ...(storeError ? { backupStoreError: storeError } : {}),
      ...(fetched ? { restoreFetch: fetched } : {}),
      ...(restarted.length > 0 ? { restarted } : {}),
    };
    return plane.etcd.mode === "Shared" ? { entry, etcdCa: { ...plan.etcdCa, changed: false } } : { entry };
  } catch (error) {
    // A failure names what failed, never what a Secret held.
    return {
      entry: {
        error: `credentials of ${plane.cluster}: ${oneLine(error instanceof Error ? error.message : String(error))}`,
      },
    };
  }
}

// An off-host restore that is Fetching: its backup fetched (or found fetched), by its name. A fetch
// that fails fails the pass, so that no certificate is planned from CAs that are not back yet.
async function restoreFetch(
  client: MemberClient,
  plane: HostedControlPlane,
  stores: BackupStores | undefined,
  now: number,
): Promise<{ readonly restore: string; readonly fetched: string } | undefined> {
  const restore = plane.restore;
  if (restore?.phase !== "Fetching" || restore.backup === undefined) return undefined;
  try {
    return {
      restore: restore.name,
      fetched: await fetchOffHostBackup(client, plane, restore, stores, new Date(now)),
    };
  } catch (error) {
    throw new Error(
      `restore ${restore.name} cannot fetch its off-host backup: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

// The node pools' join tokens, once the credentials are in place: a hosted API server that does not
// answer yet fails this part alone, and the host's next sync tries again.
async function withNodeBootstrap(
  client: MemberClient,
  plane: HostedControlPlane,
  now: number,
  records: readonly CredentialRecord[],
): Promise<HostedCredentials[string]> {
  if (plane.nodePools.length === 0) return { records };
  try {
    const bootstrap = await ensureNodeBootstrap(client, plane, now);
    return {
      records: [...records, ...bootstrap.records],
      ...(bootstrap.servingCsrs.length > 0 ? { servingCsrs: bootstrap.servingCsrs } : {}),
      ...(bootstrap.pools.length > 0 ? { nodePools: bootstrap.pools } : {}),
    };
  } catch (error) {
    return {
      records,
      joinError: `join tokens of ${plane.cluster}: ${oneLine(error instanceof Error ? error.message : String(error))}`,
    };
  }
}

// The control plane's Secrets as the host holds them now, decoded; Secrets without data (the
// rendered, data-less ones before their first pass) count as missing.
async function readSecrets(
  client: MemberClient,
  plane: HostedControlPlane,
): Promise<Map<string, SecretData>> {
  const existing = new Map<string, SecretData>();
  for (const { namespace, secret } of pkiSecretsOf(plane)) {
    const live = await client.get({ apiVersion: "v1", kind: "Secret", namespace, name: secret.name });
    const data = decoded(asMap(live?.data));
    if (Object.keys(data).length > 0) existing.set(`${namespace}/${secret.name}`, data);
  }
  return existing;
}

function decoded(data: JsonMap): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(data))
    if (typeof value === "string" && value.length <= MAX_VALUE_BYTES * 2)
      out[key] = Buffer.from(value, "base64").toString("utf8");
  return out;
}
