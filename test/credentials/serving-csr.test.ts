import "reflect-metadata";
import { webcrypto } from "node:crypto";
import * as x509 from "@peculiar/x509";
import { describe, expect, it } from "vitest";
import {
  type CsrFacts,
  judgeServingCsr,
  KUBELET_SERVING_SIGNER,
  MAX_CSR_REQUEST_BYTES,
  type NodeFacts,
} from "../../src/credentials/serving-csr.js";

/** The rule kubelet serving CSRs are approved by, case by case, each way it can refuse. */
const ALGORITHM = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" } as const;

async function request(subject: string, names: { type: "dns" | "ip" | "email" | "url"; value: string }[]) {
  const keys = (await webcrypto.subtle.generateKey(ALGORITHM, true, [
    "sign",
    "verify",
  ])) as webcrypto.CryptoKeyPair;
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({
    name: subject,
    keys,
    signingAlgorithm: ALGORITHM,
    extensions: names.length > 0 ? [new x509.SubjectAlternativeNameExtension(names)] : [],
  });
  return csr.toString("pem");
}

const GOOD_NAMES = [
  { type: "dns" as const, value: "worker-1" },
  { type: "ip" as const, value: "10.0.0.5" },
];
const good = await request("CN=system:node:worker-1, O=system:nodes", GOOD_NAMES);

// The same request with the last byte of its signature changed: it parses, it does not verify.
function tampered(pem: string): string {
  const der = Buffer.from(pem.replace(/-----[^-]+-----/g, "").replace(/\s+/g, ""), "base64");
  der[der.length - 1] = (der[der.length - 1] ?? 0) ^ 0x01;
  return `-----BEGIN CERTIFICATE REQUEST-----\n${der.toString("base64")}\n-----END CERTIFICATE REQUEST-----\n`;
}

const CSR: CsrFacts = {
  name: "csr-1",
  signerName: KUBELET_SERVING_SIGNER,
  username: "system:node:worker-1",
  groups: ["system:nodes", "system:authenticated"],
  usages: ["digital signature", "server auth"],
  request: good,
  decided: false,
};

const NODE: NodeFacts = {
  name: "worker-1",
  pool: "workers",
  addresses: [
    { type: "Hostname", address: "worker-1" },
    { type: "InternalIP", address: "10.0.0.5" },
  ],
};
const POOLS = new Set(["workers"]);
const nodes =
  (...list: NodeFacts[]) =>
  (name: string) =>
    list.find((n) => n.name === name);

describe("kubelet serving CSRs", () => {
  it("approves a node's request for the names it reports", async () => {
    expect(await judgeServingCsr(CSR, nodes(NODE), POOLS)).toEqual({
      csr: "csr-1",
      node: "worker-1",
      approved: true,
    });
    const withEncipherment = { ...CSR, usages: ["digital signature", "key encipherment", "server auth"] };
    expect((await judgeServingCsr(withEncipherment, nodes(NODE), POOLS))?.approved).toBe(true);
  });

  it.each([
    ["another signer", { signerName: "kubernetes.io/kube-apiserver-client-kubelet" }],
    ["one already decided", { decided: true }],
  ])("leaves alone %s", async (_, change) => {
    expect(await judgeServingCsr({ ...CSR, ...change }, nodes(NODE), POOLS)).toBeUndefined();
  });

  const cases: [string, () => Promise<Partial<CsrFacts>>, NodeFacts[], RegExp][] = [
    ["a user that is not a node", async () => ({ username: "alice" }), [NODE], /not requested by a node/],
    [
      "a node outside system:nodes",
      async () => ({ groups: ["system:authenticated"] }),
      [NODE],
      /not requested by a node/,
    ],
    [
      "client auth",
      async () => ({ usages: ["digital signature", "server auth", "client auth"] }),
      [NODE],
      /usages/,
    ],
    ["no server auth", async () => ({ usages: ["digital signature"] }), [NODE], /usages/],
    ["a request that does not parse", async () => ({ request: "not a request" }), [NODE], /does not parse/],
    [
      "a request over the size bound",
      async () => ({ request: good + " ".repeat(MAX_CSR_REQUEST_BYTES) }),
      [NODE],
      /does not parse/,
    ],
    [
      "another node's subject",
      async () => ({ request: await request("CN=system:node:worker-2, O=system:nodes", GOOD_NAMES) }),
      [NODE],
      /subject/,
    ],
    [
      "a subject without its organization",
      async () => ({ request: await request("CN=system:node:worker-1", GOOD_NAMES) }),
      [NODE],
      /subject/,
    ],
    [
      "a subject with system:masters",
      async () => ({
        request: await request("CN=system:node:worker-1, O=system:nodes, O=system:masters", GOOD_NAMES),
      }),
      [NODE],
      /subject/,
    ],
    [
      "no names",
      async () => ({ request: await request("CN=system:node:worker-1, O=system:nodes", []) }),
      [NODE],
      /names no DNS name or IP/,
    ],
    [
      "an email name",
      async () => ({
        request: await request("CN=system:node:worker-1, O=system:nodes", [
          ...GOOD_NAMES,
          { type: "email", value: "a@b.c" },
        ]),
      }),
      [NODE],
      /names a email/,
    ],
    [
      "a URI name",
      async () => ({
        request: await request("CN=system:node:worker-1, O=system:nodes", [
          { type: "url", value: "https://x" },
        ]),
      }),
      [NODE],
      /names a url/,
    ],
    ["a node that is not registered", async () => ({}), [], /not registered/],
    ["a node in no pool", async () => ({}), [{ ...NODE, pool: undefined }], /in no node pool/],
    ["a node in another cluster's pool", async () => ({}), [{ ...NODE, pool: "gpu" }], /in no node pool/],
    [
      "a DNS name the node does not report",
      async () => ({
        request: await request("CN=system:node:worker-1, O=system:nodes", [
          { type: "dns", value: "api.example.com" },
        ]),
      }),
      [NODE],
      /names api\.example\.com, which node worker-1 does not report/,
    ],
    [
      "an IP the node reports only as its hostname",
      async () => ({
        request: await request("CN=system:node:worker-1, O=system:nodes", [
          { type: "ip", value: "10.0.0.9" },
        ]),
      }),
      [{ ...NODE, addresses: [...NODE.addresses, { type: "Hostname", address: "10.0.0.9" }] }],
      /names 10\.0\.0\.9/,
    ],
    ["a signature that does not verify", async () => ({ request: tampered(good) }), [NODE], /signature/],
  ];

  it.each(cases)("leaves pending %s, saying why", async (_, change, registered, reason) => {
    const decision = await judgeServingCsr({ ...CSR, ...(await change()) }, nodes(...registered), POOLS);
    expect(decision?.approved).toBe(false);
    expect(decision && !decision.approved ? decision.reason : "").toMatch(reason);
  });
});
