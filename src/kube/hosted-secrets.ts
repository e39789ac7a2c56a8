import { asMap } from "../apimachinery/json.js";
import { PKI_SECRETS } from "../manifests/controlplane/pki-layout.js";
import type { MemberClient } from "./member-client.js";

/** The field manager of the credentials' data: not gitfleet's own, so applying the rendered Secrets never touches it. */
export const CREDENTIALS_FIELD_MANAGER = "gitfleet-credentials";

/** The largest Secret value read back (a certificate chain or kubeconfig is kilobytes). */
export const MAX_VALUE_BYTES = 256 * 1024;

/**
 * The admin kubeconfig of a hosted cluster as its host holds it (what gitfleet connects with), or
 * undefined while there is none. Read at each use, so a renewed one takes effect at once.
 */
export async function readAdminKubeconfig(
  host: MemberClient,
  namespace: string,
): Promise<string | undefined> {
  const live = await host.get({
    apiVersion: "v1",
    kind: "Secret",
    namespace,
    name: PKI_SECRETS.adminKubeconfig.name,
  });
  const value = asMap(live?.data).kubeconfig;
  if (typeof value !== "string" || value.length > MAX_VALUE_BYTES * 2) return undefined;
  return Buffer.from(value, "base64").toString("utf8");
}

/**
 * Writes a Secret's data in the host, by server-side apply under the credentials' field manager: the
 * rendered, data-less Secret of the same name keeps its labels and annotations.
 */
export async function writeSecret(
  client: MemberClient,
  namespace: string,
  name: string,
  data: Readonly<Record<string, string>>,
): Promise<void> {
  const encoded = Object.fromEntries(
    Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString("base64")]),
  );
  await client.apply(
    { apiVersion: "v1", kind: "Secret", metadata: { name, namespace }, type: "Opaque", data: encoded },
    true,
    CREDENTIALS_FIELD_MANAGER,
  );
}
