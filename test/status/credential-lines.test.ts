import { describe, expect, it } from "vitest";
import type { HostedCredentials } from "../../src/model/controlplane/credential-record.js";
import { credentialLines } from "../../src/status/hosted-plane-status.js";

/** The commit message's lines for what a host's credentials pass did, and only that. */
describe("credential lines", () => {
  const kept = {
    namespace: "gitfleet-cp-pc-1",
    name: "ca",
    action: "kept" as const,
    fingerprint: "sha256:aa",
  };
  it.each<[string, HostedCredentials, string[]]>([
    ["nothing changed", { "pc-1": { records: [kept] } }, []],
    [
      "a failed pass",
      { "pc-1": { error: "credentials of pc-1: boom" } },
      ["meta-1: credentials of pc-1: boom"],
    ],
    [
      "a created credential",
      { "pc-1": { records: [kept, { ...kept, name: "admin-kubeconfig", action: "created" }] } },
      ["meta-1: credentials of pc-1 created: admin-kubeconfig"],
    ],
    [
      "serving certificates approved, one left pending",
      {
        "pc-1": {
          records: [kept],
          servingCsrs: [
            { csr: "csr-a", node: "w-0", approved: true },
            {
              csr: "csr-b",
              node: "w-1",
              approved: false,
              reason: "it names 10.0.0.99, which node w-1 does not report",
            },
            { csr: "csr-c", node: "w-2", approved: true },
          ],
        },
      },
      ["meta-1: serving certificates of pc-1 approved for w-0, w-2"],
    ],
    [
      "serving certificates left pending only",
      { "pc-1": { records: [kept], servingCsrs: [{ csr: "csr-b", approved: false, reason: "x" }] } },
      [],
    ],
  ])("%s", (_, credentials, lines) => {
    expect(credentialLines("meta-1", credentials)).toEqual(lines);
  });
});
