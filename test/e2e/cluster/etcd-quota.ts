import type { MemberClient } from "../../../src/kube/member-client.js";

/**
 * Fills a hosted cluster's etcd until it refuses a write: ConfigMaps of ~700 KiB in default
 * (big-0, big-1, …), at most 200. Returns how many were made and why the next was refused.
 */
export async function fillEtcd(client: MemberClient): Promise<{ made: number; refused: string }> {
  const big = "x".repeat(700 * 1024);
  let made = 0;
  let refused = "";
  while (made < 200 && !refused) {
    await client
      .raw("POST", "/api/v1/namespaces/default/configmaps", {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: `big-${made}` },
        data: { v: big },
      })
      .then(() => made++)
      .catch((error: unknown) => {
        refused = String(error);
      });
  }
  return { made, refused };
}

/** Deletes what fillEtcd made (deletes are taken under NOSPACE). */
export async function emptyEtcd(client: MemberClient, made: number): Promise<void> {
  for (let i = 0; i < made; i++) await client.raw("DELETE", `/api/v1/namespaces/default/configmaps/big-${i}`);
}

/** Writes one small ConfigMap in default. */
export function writeSmall(client: MemberClient, name: string): Promise<unknown> {
  return client.raw("POST", "/api/v1/namespaces/default/configmaps", {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name },
    data: { v: "1" },
  });
}
