import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { asMap } from "../../src/apimachinery/json.js";
import { MemberClient } from "../../src/kube/member-client.js";
import { approveServingCsrs, RECENT_CSR_MS } from "../../src/kube/serving-csr-approval.js";
import { memberClientConfig } from "../../src/sim/kubeconfig.js";
import { type SimulatedMember, startMember } from "../../src/sim/member-server.js";
import { planeWithPool } from "../helpers/hosted-example.js";

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
    const [record] = await approveServingCsrs(client, planeWithPool("v1.36.1", { replicas: 1 }), at + age);
    expect(record).toMatchObject({ csr: "csr-1", approved: false });
    expect(record?.recent === true).toBe(recent);
  });
});
