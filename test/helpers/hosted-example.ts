import { fileURLToPath } from "node:url";
import type { MemberClient } from "../../src/kube/member-client.js";
import {
  type HostedControlPlane,
  resolveControlPlane,
} from "../../src/model/controlplane/hosted-control-plane.js";
import type { Cluster, ControlPlaneSpec, NodePoolSpec } from "../../src/model/types.js";
import { readDirectoryTree } from "../../src/source/read-directory.js";

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

/**
 * pc-1, hosted by meta-1 (LoadBalancer at 203.0.113.1), of a class at `version`, with one node pool
 * "workers" of three replicas and the settings given: a control plane resolved as the controller has it.
 */
export function planeWithPool(version: string, pool: Partial<NodePoolSpec> = {}): HostedControlPlane {
  const cluster: Cluster = {
    apiVersion: "gitfleet.io/v1alpha1",
    kind: "Cluster",
    metadata: { name: "pc-1" },
    spec: {
      controlPlane: {
        host: "meta-1",
        class: "standard",
        expose: { type: "LoadBalancer", address: "203.0.113.1" },
        nodePools: [{ name: "workers", replicas: 3, ...pool }],
      },
    },
    origin: { file: "clusters/pc-1.yaml", index: 0 },
  };
  const plane = resolveControlPlane(
    cluster,
    new Map([
      [
        "standard",
        {
          apiVersion: "gitfleet.io/v1alpha1",
          kind: "ControlPlaneClass",
          metadata: { name: "standard" },
          spec: { version, etcd: { version: "3.6.4-0" } },
          origin: { file: "controlplanes/standard.yaml", index: 0 },
        },
      ],
    ]),
  );
  if (!plane) throw new Error("pc-1 did not resolve");
  return plane;
}

/** The image gitfleet's own containers run in the off-host example class. */
export const OFFSITE_IMAGE = "registry.example.com/platform/gitfleet:0.1.0";

/**
 * The hosted example with the class "offsite" (the example's "standard" sending its backups to the
 * store "offsite", with a 4Gi quota) and pc-3 of that class on meta-1 behind a LoadBalancer: a fleet
 * tree to load.
 */
export async function offsiteExample(): Promise<Map<string, Uint8Array>> {
  const encoder = new TextEncoder();
  const tree = new Map(await readDirectoryTree(HOSTED_EXAMPLE_DIR)) as Map<string, Uint8Array>;
  const standard = new TextDecoder().decode(tree.get("controlplanes/standard.yaml"));
  const offsite = standard
    .replace("name: standard", "name: offsite")
    .replace(
      '      schedule: "0 */6 * * *"\n',
      `      schedule: "0 */6 * * *"\n      offHost: { store: offsite, image: ${OFFSITE_IMAGE} }\n`,
    )
    .replace("    storage: 20Gi\n", "    storage: 20Gi\n    quota: 4Gi\n");
  if (!offsite.includes("offHost") || !offsite.includes("quota: 4Gi"))
    throw new Error("the example's class standard no longer reads as the offsite class expects");
  tree.set("controlplanes/offsite.yaml", encoder.encode(offsite));
  tree.set(
    "clusters/pc-3.yaml",
    encoder.encode(
      "apiVersion: gitfleet.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: pc-3\nspec:\n  controlPlane:\n    host: meta-1\n    class: offsite\n    expose: { type: LoadBalancer }\n",
    ),
  );
  return tree;
}
