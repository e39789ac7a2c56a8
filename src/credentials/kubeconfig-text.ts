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
  const config = {
    apiVersion: "v1",
    kind: "Config",
    clusters: [
      {
        name: content.cluster,
        cluster: { server: content.server, "certificate-authority-data": b64(content.caPem) },
      },
    ],
    users: [
      {
        name: content.user,
        user: {
          "client-certificate-data": b64(content.certificatePem),
          "client-key-data": b64(content.keyPem),
        },
      },
    ],
    contexts: [{ name: content.cluster, context: { cluster: content.cluster, user: content.user } }],
    "current-context": content.cluster,
  };
  return `${JSON.stringify(config, null, 2)}\n`;
}

/**
 * Reads back what kubeconfigText wrote (its server, CA and client credentials); undefined for
 * anything else. The text comes from a Secret in a member: untrusted, never more than parsed.
 */
export function readKubeconfigCredentials(
  text: string,
): { server: string; caPem: string; certificatePem: string; keyPem: string } | undefined {
  try {
    if (text.length > 1_000_000) return undefined;
    const config = JSON.parse(text) as {
      clusters?: { cluster?: Record<string, unknown> }[];
      users?: { user?: Record<string, unknown> }[];
    };
    const cluster = config.clusters?.[0]?.cluster ?? {};
    const user = config.users?.[0]?.user ?? {};
    if (typeof cluster.server !== "string") return undefined;
    return {
      server: cluster.server,
      caPem: unb64(cluster["certificate-authority-data"]),
      certificatePem: unb64(user["client-certificate-data"]),
      keyPem: unb64(user["client-key-data"]),
    };
  } catch {
    return undefined;
  }
}
