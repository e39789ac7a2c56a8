import { createHash } from "node:crypto";
import { asMap, type JsonMap } from "../apimachinery/json.js";
import {
  BOOTSTRAP_TOKEN_NAMESPACE,
  type BootstrapToken,
  caCertHash,
  clusterInfoKubeconfig,
  generateToken,
  joinCommand,
  kubeletExtraArgs,
  type LiveToken,
  poolsNeedingTokens,
  readLiveToken,
  tokenSecret,
  tokenText,
  tokenTTLMs,
} from "../credentials/bootstrap-tokens.js";
import { readGeneratedKubeconfig } from "../credentials/kubeconfig-text.js";
import { controlPlaneEndpoints } from "../manifests/controlplane/endpoints.js";
import { CLUSTER_INFO_CONFIGMAP } from "../manifests/controlplane/node-bootstrap-objects.js";
import type {
  CredentialRecord,
  NodePoolRecord,
  ServingCsrRecord,
} from "../model/controlplane/credential-record.js";
import type { HostedControlPlane } from "../model/controlplane/hosted-control-plane.js";
import { NODE_POOL_LABEL, type ResolvedNodePool } from "../model/controlplane/node-pools.js";
import { hostedKubeConfig } from "./hosted-connection.js";
import { CREDENTIALS_FIELD_MANAGER, readAdminKubeconfig } from "./hosted-secrets.js";
import { MemberClient } from "./member-client.js";
import { keepNodePools } from "./node-pool-upkeep.js";
import { approveServingCsrs } from "./serving-csr-approval.js";

/** How long one read or write of the node bootstrap waits for a hosted API server. */
const HOSTED_TIMEOUT_MS = 10_000;

/** The host Secret a pool's machines join with: join-<pool> in the control plane's namespace. */
export function joinSecretName(pool: string): string {
  return `join-${pool}`;
}

/**
 * Keeps a hosted cluster's node pools joinable, after its host's credentials pass: kube-public's
 * cluster-info holds the cluster's endpoint and CA (the bootstrap signer signs it per token); each
 * pool has a bootstrap token with at least half its lifetime left (a new one is minted before the
 * newest runs out, expired ones are left to the token cleaner); the host's join-<pool> Secret holds
 * what a machine needs — the token, the CA's hash, the endpoint and the `kubeadm join` command. The
 * secret half of a token goes only into the hosted cluster and that host Secret. Returns one record
 * per pool (the token's fingerprint and expiry), or throws why the pass failed; a hosted API server
 * that does not answer yet fails it, and the next sync of the host tries again.
 */
export async function ensureNodeBootstrap(
  host: MemberClient,
  plane: HostedControlPlane,
  now: number,
): Promise<{ records: CredentialRecord[]; servingCsrs: ServingCsrRecord[]; pools: NodePoolRecord[] }> {
  if (plane.nodePools.length === 0) return { records: [], servingCsrs: [], pools: [] };
  // The endpoint the fleet repo gives (as the hosted cluster's connection uses), never one the host names.
  const server = controlPlaneEndpoints(plane).external;
  const text = await readAdminKubeconfig(host, plane.namespace);
  const caPem = text === undefined ? undefined : readGeneratedKubeconfig(text)?.caPem;
  if (text === undefined || caPem === undefined)
    throw new Error("its admin kubeconfig is not in the host yet");
  const config = hostedKubeConfig({ cluster: plane.cluster, host: plane.host, server, kubeconfig: text });
  if ("error" in config) throw new Error(config.error);
  const hosted = new MemberClient(plane.cluster, config, { timeoutMs: HOSTED_TIMEOUT_MS, retries: 1 });
  await hosted.apply(
    {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { ...CLUSTER_INFO_CONFIGMAP },
      data: { kubeconfig: clusterInfoKubeconfig(server, caPem) },
    },
    true,
    CREDENTIALS_FIELD_MANAGER,
  );
  const live = await liveTokens(hosted);
  const joins = await joinSecrets(host, plane.namespace);
  const hash = caCertHash(caPem);
  const minted = new Set(poolsNeedingTokens(plane.nodePools, live, now).map((p) => p.name));
  const records: CredentialRecord[] = [];
  for (const pool of plane.nodePools) {
    // A join Secret that names no valid token (the host lost it, or it was never written) needs one.
    const joinable = live.some(
      (t) => t.id === joins.get(pool.name)?.id && t.pool === pool.name && (t.expires ?? Infinity) > now,
    );
    if (minted.has(pool.name) || !joinable) {
      const token = generateToken();
      const expires = now + tokenTTLMs(pool);
      await hosted.create(tokenSecret(pool, token, expires), CREDENTIALS_FIELD_MANAGER);
      await writeJoinSecret(host, plane, pool, { token, expires, server, hash });
      records.push(record(plane, pool, token.id, expires, "created"));
    } else {
      const current = live.find((t) => t.id === joins.get(pool.name)?.id);
      await refreshJoinSettings(host, plane, pool, joins.get(pool.name));
      records.push(record(plane, pool, current?.id ?? "", current?.expires, "kept"));
    }
  }
  await removeJoinSecretsOfGonePools(host, plane, joins);
  return {
    records,
    servingCsrs: await approveServingCsrs(hosted, plane, now),
    pools: await keepNodePools(host, hosted, plane, now),
  };
}

async function liveTokens(hosted: MemberClient): Promise<LiveToken[]> {
  const tokens: LiveToken[] = [];
  await hosted.pages(
    "v1",
    "Secret",
    { namespace: BOOTSTRAP_TOKEN_NAMESPACE, labelSelector: NODE_POOL_LABEL, limit: 200 },
    (items) => {
      for (const item of items) {
        const token = readLiveToken(item);
        if (token) tokens.push(token);
      }
    },
  );
  return tokens;
}

/** What a host's join Secret says besides the token: the token's id and what a machine runs with. */
interface JoinSecretFacts {
  readonly id: string;
  readonly kubeletVersion: string | undefined;
  readonly kubeletExtraArgs: string | undefined;
}

// The host's join Secrets of this control plane, by pool: the token id each names (never the token)
// and the kubelet settings it gives machines.
async function joinSecrets(host: MemberClient, namespace: string): Promise<Map<string, JoinSecretFacts>> {
  const out = new Map<string, JoinSecretFacts>();
  const decoded = (value: unknown, max: number) =>
    typeof value === "string" && value.length <= max
      ? Buffer.from(value, "base64").toString("utf8")
      : undefined;
  await host.pages("v1", "Secret", { namespace, labelSelector: NODE_POOL_LABEL, limit: 200 }, (items) => {
    for (const item of items) {
      const pool = asMap(asMap(item.metadata).labels)[NODE_POOL_LABEL];
      const data = asMap(item.data);
      const id = decoded(data["token-id"], 16);
      if (typeof pool === "string" && id !== undefined)
        out.set(pool, {
          id,
          kubeletVersion: decoded(data["kubelet-version"], 128),
          kubeletExtraArgs: decoded(data["kubelet-extra-args"], MAX_EXTRA_ARGS_BASE64),
        });
    }
  });
  return out;
}

/** The most a join Secret's kubelet-extra-args is read back at (base64): 20 taints and the labels. */
const MAX_EXTRA_ARGS_BASE64 = 64 * 1024;

// A kept token's join Secret whose kubelet version or flags the pool no longer gives (the pool's
// version moved): those two keys are brought up to date, the token left as it is.
async function refreshJoinSettings(
  host: MemberClient,
  plane: HostedControlPlane,
  pool: ResolvedNodePool,
  facts: JoinSecretFacts | undefined,
): Promise<void> {
  const args = kubeletExtraArgs(pool);
  if (!facts || (facts.kubeletVersion === pool.kubeletVersion && facts.kubeletExtraArgs === args)) return;
  const b64 = (text: string) => Buffer.from(text).toString("base64");
  await host.mergePatch(
    { apiVersion: "v1", kind: "Secret", namespace: plane.namespace, name: joinSecretName(pool.name) },
    { data: { "kubelet-version": b64(pool.kubeletVersion), "kubelet-extra-args": b64(args) } },
    CREDENTIALS_FIELD_MANAGER,
  );
}

async function writeJoinSecret(
  host: MemberClient,
  plane: HostedControlPlane,
  pool: ResolvedNodePool,
  join: { token: BootstrapToken; expires: number; server: string; hash: string },
): Promise<void> {
  const data: Record<string, string> = {
    "token-id": join.token.id,
    token: tokenText(join.token),
    "ca-cert-hash": join.hash,
    server: join.server,
    expiration: new Date(join.expires).toISOString(),
    command: joinCommand(join.server, join.token, join.hash),
    "kubelet-version": pool.kubeletVersion,
    "kubelet-extra-args": kubeletExtraArgs(pool),
  };
  const secret: JsonMap = {
    apiVersion: "v1",
    kind: "Secret",
    metadata: {
      name: joinSecretName(pool.name),
      namespace: plane.namespace,
      labels: { [NODE_POOL_LABEL]: pool.name, "gitfleet.io/hosted-cluster": plane.cluster },
    },
    type: "Opaque",
    data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString("base64")])),
  };
  await host.apply(secret, true, CREDENTIALS_FIELD_MANAGER);
}

async function removeJoinSecretsOfGonePools(
  host: MemberClient,
  plane: HostedControlPlane,
  joins: ReadonlyMap<string, JoinSecretFacts>,
): Promise<void> {
  const pools = new Set(plane.nodePools.map((p) => p.name));
  for (const pool of joins.keys()) {
    if (pools.has(pool)) continue;
    const address = {
      apiVersion: "v1",
      kind: "Secret",
      namespace: plane.namespace,
      name: joinSecretName(pool),
    };
    const live = await host.get(address);
    const uid = asMap(live?.metadata).uid;
    if (typeof uid === "string") await host.delete(address, uid);
  }
}

function record(
  plane: HostedControlPlane,
  pool: ResolvedNodePool,
  id: string,
  expires: number | undefined,
  action: "created" | "kept",
): CredentialRecord {
  return {
    namespace: plane.namespace,
    name: joinSecretName(pool.name),
    action,
    ...(action === "created" ? { reason: "a join token for the pool" } : {}),
    // The token id is no secret (kubeadm token list prints it); the status branch keeps its digest.
    fingerprint: `sha256:${createHash("sha256").update(id).digest("hex")}`,
    ...(expires === undefined ? {} : { notAfter: new Date(expires).toISOString() }),
  };
}
