import { fileURLToPath } from "node:url";
import type { MemberClient } from "../../src/kube/member-client.js";
import type { Cluster, ControlPlaneSpec } from "../../src/model/types.js";

/** The documented hosted-clusters example: meta-1 hosts pc-1 and pc-2 (shared etcd etcd-a). */
export const HOSTED_EXAMPLE_DIR = fileURLToPath(
  new URL("../../docs/examples/hosted-clusters", import.meta.url),
);

/** pc-1, hosted by meta as the class "standard" with `expose`, and meta: Cluster objects as loaded. */
export function hostedPair(expose: ControlPlaneSpec["expose"]): {
  readonly host: Cluster;
  readonly hosted: Cluster;
} {
  const hosted: Cluster = {
    apiVersion: "gitfleet.io/v1alpha1",
    kind: "Cluster",
    metadata: { name: "pc-1" },
    spec: { controlPlane: { host: "meta", class: "standard", expose } },
    origin: { file: "clusters/pc-1.yaml", index: 0 },
  };
  return { host: { ...hosted, metadata: { name: "meta" }, spec: {} }, hosted };
}

/** The admin kubeconfig Secret of pc-1 in its host's control-plane namespace (made with its namespace). */
export async function putAdminKubeconfig(host: MemberClient, text: string): Promise<void> {
  await host.apply({ apiVersion: "v1", kind: "Namespace", metadata: { name: "gitfleet-cp-pc-1" } }, true);
  await host.apply(
    {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "admin-kubeconfig", namespace: "gitfleet-cp-pc-1" },
      data: { kubeconfig: Buffer.from(text).toString("base64") },
    },
    true,
  );
}
