import "reflect-metadata";
import { createHash, randomInt } from "node:crypto";
import * as x509 from "@peculiar/x509";
import type { JsonMap } from "../apimachinery/json.js";
import { NODE_POOL_LABEL, type ResolvedNodePool } from "../model/controlplane/node-pools.js";
import { parseDuration } from "../model/duration.js";

/**
 * Bootstrap tokens for a hosted cluster's node pools, as kubeadm makes them: `<id>.<secret>`, six and
 * sixteen characters of [a-z0-9], kept in kube-system as Secrets `bootstrap-token-<id>` of type
 * bootstrap.kubernetes.io/token that the API server authenticates (as system:bootstrap:<id> in
 * system:bootstrappers and the pool's group) and the bootstrap signer signs cluster-info with. The
 * token's secret half is a credential: it lives only in the hosted cluster and in the host's join
 * Secret, never in Git, a log or the status branch (which records a fingerprint and the expiry).
 */
export interface BootstrapToken {
  readonly id: string;
  readonly secret: string;
}

/** A pool's token as the hosted cluster holds it. */
export interface LiveToken {
  readonly id: string;
  readonly pool: string | undefined;
  /** When it expires (ms since the epoch); undefined: never. */
  readonly expires: number | undefined;
}

/** The Secret type and namespace of bootstrap tokens. */
export const BOOTSTRAP_TOKEN_TYPE = "bootstrap.kubernetes.io/token";
export const BOOTSTRAP_TOKEN_NAMESPACE = "kube-system";
const ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";
const ID_PATTERN = /^[a-z0-9]{6}$/;
const DAY_MS = 86_400_000;

/**
 * The pools that need a new token now: those whose newest token (the one expiring last) is missing,
 * expired or has less than half of the pool's token lifetime left. Pure.
 */
export function poolsNeedingTokens(
  pools: readonly ResolvedNodePool[],
  live: readonly LiveToken[],
  now: number,
): ResolvedNodePool[] {
  return pools.filter((pool) => {
    const ttl = tokenTTLMs(pool);
    const newest = newestToken(live, pool.name);
    if (!newest) return true;
    return newest.expires !== undefined && newest.expires - now < ttl / 2;
  });
}

/** The token of a pool that expires last and is still valid at `now`, if any. */
export function newestToken(live: readonly LiveToken[], pool: string, now?: number): LiveToken | undefined {
  const valid = live.filter(
    (token) =>
      token.pool === pool && (now === undefined || token.expires === undefined || token.expires > now),
  );
  return valid.sort(
    (a, b) => (b.expires ?? Number.POSITIVE_INFINITY) - (a.expires ?? Number.POSITIVE_INFINITY),
  )[0];
}

/** A pool's token lifetime in milliseconds (its tokenTTL; validation refuses what does not parse). */
export function tokenTTLMs(pool: ResolvedNodePool): number {
  return parseDuration(pool.tokenTTL) ?? DAY_MS;
}

/** A new random token (crypto.randomInt, no modulo bias). */
export function generateToken(): BootstrapToken {
  const draw = (length: number) =>
    Array.from({ length }, () => ALPHABET[randomInt(ALPHABET.length)] as string).join("");
  return { id: draw(6), secret: draw(16) };
}

/** `<id>.<secret>`: what `kubeadm join --token` takes. */
export function tokenText(token: BootstrapToken): string {
  return `${token.id}.${token.secret}`;
}

/** The Secret the API server reads a token from (k8s.io/cluster-bootstrap's layout). */
export function tokenSecret(pool: ResolvedNodePool, token: BootstrapToken, expires: number): JsonMap {
  const data: Record<string, string> = {
    "token-id": token.id,
    "token-secret": token.secret,
    expiration: new Date(expires).toISOString().replace(/\.\d{3}Z$/, "Z"),
    "usage-bootstrap-authentication": "true",
    "usage-bootstrap-signing": "true",
    "auth-extra-groups": pool.bootstrapGroup,
    description: `gitfleet: joins nodes to pool ${pool.name}`,
  };
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: {
      name: `bootstrap-token-${token.id}`,
      namespace: BOOTSTRAP_TOKEN_NAMESPACE,
      labels: { [NODE_POOL_LABEL]: pool.name },
    },
    type: BOOTSTRAP_TOKEN_TYPE,
    data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString("base64")])),
  };
}

/**
 * A token Secret read back from the hosted cluster, or undefined when it is not one gitfleet can use:
 * only the id, the pool label and the expiry are read — never the secret half.
 */
export function readLiveToken(secret: JsonMap): LiveToken | undefined {
  if (secret.type !== BOOTSTRAP_TOKEN_TYPE) return undefined;
  const data = (secret.data ?? {}) as Record<string, unknown>;
  const text = (key: string) =>
    typeof data[key] === "string" && (data[key] as string).length <= 256
      ? Buffer.from(data[key] as string, "base64").toString("utf8")
      : undefined;
  const id = text("token-id");
  if (id === undefined || !ID_PATTERN.test(id)) return undefined;
  const expiration = text("expiration");
  const expires = expiration === undefined ? undefined : Date.parse(expiration);
  const labels = ((secret.metadata as JsonMap | undefined)?.labels ?? {}) as Record<string, unknown>;
  const pool = typeof labels[NODE_POOL_LABEL] === "string" ? (labels[NODE_POOL_LABEL] as string) : undefined;
  return { id, pool, expires: expires === undefined || Number.isNaN(expires) ? undefined : expires };
}

/**
 * `sha256:<hex>` of the CA certificate's SubjectPublicKeyInfo: what `kubeadm join
 * --discovery-token-ca-cert-hash` pins the cluster's CA by.
 */
export function caCertHash(caPem: string): string {
  const certificate = new x509.X509Certificate(caPem);
  return `sha256:${createHash("sha256").update(Buffer.from(certificate.publicKey.rawData)).digest("hex")}`;
}

/**
 * The kubeconfig kube-public/cluster-info holds: the cluster's endpoint and CA, no user. The bootstrap
 * signer adds a signature per token (jws-kubeconfig-<id>) that a joining machine checks with its token.
 */
export function clusterInfoKubeconfig(server: string, caPem: string): string {
  const config = {
    apiVersion: "v1",
    kind: "Config",
    clusters: [
      {
        name: "",
        cluster: { server, "certificate-authority-data": Buffer.from(caPem).toString("base64") },
      },
    ],
    contexts: [],
    "current-context": "",
    users: [],
  };
  return `${JSON.stringify(config, null, 2)}\n`;
}

/** The command a machine runs to join: kubeadm's, with the endpoint as host:port. */
export function joinCommand(server: string, token: BootstrapToken, hash: string): string {
  const endpoint = new URL(server).host;
  return `kubeadm join ${endpoint} --token ${tokenText(token)} --discovery-token-ca-cert-hash ${hash}`;
}

/**
 * The kubelet flags a pool's machine registers with: `--node-labels` (the pool's labels, sorted) and
 * `--register-with-taints` (key=value:Effect), as KUBELET_EXTRA_ARGS takes them.
 */
export function kubeletExtraArgs(pool: ResolvedNodePool): string {
  const labels = Object.entries(pool.labels)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, value]) => `${key}=${value}`)
    .join(",");
  const taints = pool.taints.map((t) => `${t.key}${t.value ? `=${t.value}` : ""}:${t.effect}`).join(",");
  return [`--node-labels=${labels}`, ...(taints ? [`--register-with-taints=${taints}`] : [])].join(" ");
}

/** A token's fingerprint for the status branch: sha256 of the whole token (the id alone is no secret). */
export function tokenFingerprint(token: BootstrapToken): string {
  return `sha256:${createHash("sha256").update(tokenText(token)).digest("hex")}`;
}
