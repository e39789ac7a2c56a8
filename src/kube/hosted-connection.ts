import { KubeConfig } from "@kubernetes/client-node";
import { readGeneratedKubeconfig } from "../credentials/kubeconfig-text.js";
import { checkPem } from "../credentials/pem.js";

/** The name of the one user of a hosted cluster's connection. */
const ADMIN_USER = "gitfleet-admin";

/**
 * A hosted cluster's client configuration, built by gitfleet from typed parts: the endpoint the fleet
 * repo gives (the control plane's expose settings) and the CA and client certificate its host holds,
 * each checked to be bounded PEM that parses. The admin kubeconfig the host holds is read as data,
 * never handed to a kubeconfig loader: nothing in it can name a file, a token file, a proxy, a plugin
 * or another server. One that holds anything gitfleet does not write is refused (gitfleet writes it
 * again at the host's next sync). Errors name what is wrong, never what the Secret held.
 */
export function hostedKubeConfig(hosted: {
  readonly cluster: string;
  readonly host: string;
  readonly server: string;
  readonly kubeconfig: string;
}): KubeConfig | { readonly error: string } {
  const { cluster, host, server, kubeconfig } = hosted;
  const what = `its admin kubeconfig in host ${host}`;
  const parts = readGeneratedKubeconfig(kubeconfig);
  if (!parts) return { error: `${what} is not one gitfleet wrote (it does not parse as one)` };
  if (parts.foreign.length > 0)
    return {
      error: `${what} holds ${parts.foreign.slice(0, 5).join(", ")}, which gitfleet never writes; it is not used`,
    };
  const ca = checkPem(parts.caPem, "certificates");
  if ("error" in ca) return { error: `the CA of ${what} ${ca.error}` };
  const certificate = checkPem(parts.certificatePem, "certificates");
  if ("error" in certificate) return { error: `the client certificate of ${what} ${certificate.error}` };
  const key = checkPem(parts.keyPem, "private key");
  if ("error" in key) return { error: `the client key of ${what} ${key.error}` };
  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: [{ name: cluster, server, caData: b64(ca.pem), skipTLSVerify: false }],
    users: [{ name: ADMIN_USER, certData: b64(certificate.pem), keyData: b64(key.pem) }],
    contexts: [{ name: cluster, cluster, user: ADMIN_USER }],
    currentContext: cluster,
  });
  return config;
}

const b64 = (text: string) => Buffer.from(text).toString("base64");
