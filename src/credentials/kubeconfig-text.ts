/** What a generated kubeconfig holds. */
export interface KubeconfigContent {
  readonly cluster: string;
  readonly server: string;
  readonly caPem: string;
  readonly user: string;
  readonly certificatePem: string;
  readonly keyPem: string;
}

const b64 = (text: string) => Buffer.from(text).toString("base64");
const unb64 = (text: unknown) =>
  typeof text === "string" ? Buffer.from(text, "base64").toString("utf8") : "";

/**
 * A kubeconfig with one cluster, one user (a client certificate) and one context, current. Written
 * as JSON, which every kubeconfig reader (client-go, kubectl, @kubernetes/client-node) reads as YAML.
 */
export function kubeconfigText(content: KubeconfigContent): string {
  return configText(
    content,
    { "certificate-authority-data": b64(content.caPem) },
    { "client-certificate-data": b64(content.certificatePem), "client-key-data": b64(content.keyPem) },
  );
}

/** The file names a component kubeconfig's Secret holds beside it, in the directory it is mounted in. */
export const KUBECONFIG_FILES = { ca: "ca.crt", certificate: "tls.crt", key: "tls.key" } as const;

/**
 * A kubeconfig whose CA, client certificate and key are files of `dir` (the Secret's other keys,
 * mounted beside it): client-go reads such files again when they change, so a renewed certificate
 * reaches a running kube-controller-manager or kube-scheduler without a restart.
 */
export function fileKubeconfigText(
  content: Omit<KubeconfigContent, "caPem" | "certificatePem" | "keyPem">,
  dir: string,
): string {
  return configText(
    content,
    { "certificate-authority": `${dir}/${KUBECONFIG_FILES.ca}` },
    {
      "client-certificate": `${dir}/${KUBECONFIG_FILES.certificate}`,
      "client-key": `${dir}/${KUBECONFIG_FILES.key}`,
    },
  );
}

function configText(
  content: Pick<KubeconfigContent, "cluster" | "server" | "user">,
  authority: Record<string, string>,
  credential: Record<string, string>,
): string {
  const config = {
    apiVersion: "v1",
    kind: "Config",
    clusters: [{ name: content.cluster, cluster: { server: content.server, ...authority } }],
    users: [{ name: content.user, user: credential }],
    contexts: [{ name: content.cluster, context: { cluster: content.cluster, user: content.user } }],
    "current-context": content.cluster,
  };
  return `${JSON.stringify(config, null, 2)}\n`;
}

/** What a kubeconfig gitfleet generated holds, read back; `foreign` names what it never writes. */
export interface GeneratedKubeconfig {
  readonly server: string;
  readonly caPem: string;
  readonly certificatePem: string;
  readonly keyPem: string;
  /** Fields besides the ones kubeconfigText writes (a token, a file, a plugin, a proxy…), by name. */
  readonly foreign: readonly string[];
}

/** The largest kubeconfig text read back from a member (gitfleet's own are a few kilobytes). */
export const MAX_KUBECONFIG_TEXT = 256 * 1024;

const CLUSTER_FIELDS = new Set(["server", "certificate-authority-data"]);
const USER_FIELDS = new Set(["client-certificate-data", "client-key-data"]);
const TOP_FIELDS = new Set([
  "apiVersion",
  "kind",
  "clusters",
  "users",
  "contexts",
  "current-context",
  "preferences",
]);

/**
 * Reads back what kubeconfigText wrote (its server, CA and client credentials, decoded), or undefined
 * for text that is not a JSON kubeconfig with one cluster and one user. The text comes from a Secret in
 * a member: untrusted, only ever parsed as JSON, and nothing in it is used as a path, a command or a
 * proxy. Field names gitfleet never writes are listed in `foreign` (sanitized: names only, never values).
 */
export function readGeneratedKubeconfig(text: string): GeneratedKubeconfig | undefined {
  if (text.length > MAX_KUBECONFIG_TEXT) return undefined;
  let config: unknown;
  try {
    config = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isObject(config)) return undefined;
  const clusters = Array.isArray(config.clusters) ? config.clusters : [];
  const users = Array.isArray(config.users) ? config.users : [];
  const cluster = isObject(clusters[0]) && isObject(clusters[0].cluster) ? clusters[0].cluster : undefined;
  const user = isObject(users[0]) && isObject(users[0].user) ? users[0].user : undefined;
  if (!cluster || !user || typeof cluster.server !== "string") return undefined;
  const foreign = [
    ...Object.keys(config).filter((key) => !TOP_FIELDS.has(key)),
    ...(clusters.length > 1 ? ["clusters[1]"] : []),
    ...(users.length > 1 ? ["users[1]"] : []),
    ...Object.keys(cluster).filter((key) => !CLUSTER_FIELDS.has(key)),
    ...Object.keys(user).filter((key) => !USER_FIELDS.has(key)),
  ].map(fieldName);
  return {
    server: cluster.server,
    caPem: unb64(cluster["certificate-authority-data"]),
    certificatePem: unb64(user["client-certificate-data"]),
    keyPem: unb64(user["client-key-data"]),
    foreign: [...new Set(foreign)].sort(),
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

// A field name from a member, safe to say: short, and only the characters kubeconfig fields use.
function fieldName(key: string): string {
  return /^[A-Za-z0-9_.[\]-]{1,40}$/.test(key) ? key : "(a field with an unusual name)";
}
