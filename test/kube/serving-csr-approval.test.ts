import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { asMap } from "../../src/apimachinery/json.js";
import { MemberClient } from "../../src/kube/member-client.js";
import { approveServingCsrs, RECENT_CSR_MS } from "../../src/kube/serving-csr-approval.js";
import { resolveControlPlane } from "../../src/model/controlplane/hosted-control-plane.js";
import type { Cluster, ControlPlaneClass } from "../../src/model/types.js";
import { memberClientConfig } from "../../src/sim/kubeconfig.js";
import { type SimulatedMember, startMember } from "../../src/sim/member-server.js";

/**
 * A serving CSR left pending keeps its host coming back soon only while it is recent: one asked for
 * lately may be approved on the next pass (its Node reports its addresses), one pending for longer
 * waits for the ordinary resync.
 */
let member: SimulatedMember;
let client: MemberClient;
beforeEach(async () => {
  member = await startMember({ name: "pc-1" });
  client = new MemberClient("pc-1", memberClientConfig(member), { retries: 0, timeoutMs: 5_000 });
});
afterEach(async () => member.close());

const CLASS: ControlPlaneClass = {
  apiVersion: "gitfleet.io/v1alpha1",
  kind: "ControlPlaneClass",
  metadata: { name: "standard" },
  spec: { version: "v1.36.1", etcd: { version: "3.6.4-0" } },
  origin: { file: "controlplanes/standard.yaml", index: 0 },
};
const CLUSTER: Cluster = {
  apiVersion: "gitfleet.io/v1alpha1",
  kind: "Cluster",
  metadata: { name: "pc-1" },
  spec: {
    controlPlane: {
      host: "meta-1",
      class: "standard",
      expose: { type: "LoadBalancer", address: "203.0.113.1" },
      nodePools: [{ name: "workers", replicas: 1 }],
    },
  },
  origin: { file: "clusters/pc-1.yaml", index: 0 },
};

describe("pending serving CSRs", () => {
  it.each<[string, number, boolean]>([
    ["just asked for", 0, true],
    ["just inside the window", RECENT_CSR_MS - 1, true],
    ["at its end", RECENT_CSR_MS, false],
    ["past it", RECENT_CSR_MS + 1, false],
  ])("are recent when %s", async (_name, age, recent) => {
    const created = asMap(
      await client.raw("POST", "/apis/certificates.k8s.io/v1/certificatesigningrequests", {
        apiVersion: "certificates.k8s.io/v1",
        kind: "CertificateSigningRequest",
        metadata: { name: "csr-1" },
        spec: {
          request: Buffer.from("not a request").toString("base64"),
          signerName: "kubernetes.io/kubelet-serving",
          usages: ["server auth"],
        },
      }),
    );
    const at = Date.parse(String(asMap(created.metadata).creationTimestamp));
    const plane = resolveControlPlane(CLUSTER, new Map([["standard", CLASS]]));
    const [record] = await approveServingCsrs(client, plane as NonNullable<typeof plane>, at + age);
    expect(record).toMatchObject({ csr: "csr-1", approved: false });
    expect(record?.recent === true).toBe(recent);
  });
});
