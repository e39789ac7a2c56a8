import { execFileSync } from "node:child_process";
import { X509Certificate } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { KubeConfig } from "@kubernetes/client-node";
import { afterAll, describe, expect, it } from "vitest";
import { credentialOf } from "../../src/kube/member-credential.js";
import { CERTIFICATE_WARNING_MS } from "../../src/sync/sync-result.js";
import { tempDir } from "../helpers/git-repo.js";

// When the credential gitfleet reaches a direct member with stops working: a client certificate
// (made by the real openssl) or a JWT bearer token; the warning two weeks ahead, at and either side
// of the threshold.

const work = tempDir("gitfleet-member-credential-");
afterAll(() => work.cleanup());

function certificate(days: number): { pem: string; notAfter: number } {
  const key = join(work.dir, `key-${days}.pem`);
  const cert = join(work.dir, `cert-${days}.pem`);
  execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:P-256",
      "-nodes",
      "-keyout",
      key,
      "-out",
      cert,
      "-days",
      String(days),
      "-subj",
      "/CN=gitfleet",
    ],
    { stdio: "ignore" },
  );
  const pem = readFileSync(cert, "utf8");
  return { pem, notAfter: Date.parse(new X509Certificate(pem).validTo) };
}

function config(user: Record<string, string>): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: "m", server: "https://127.0.0.1:6443", skipTLSVerify: false }],
    users: [{ name: "u", ...user }],
    contexts: [{ name: "m", cluster: "m", user: "u" }],
    currentContext: "m",
  });
  return kc;
}

const jwt = (claims: object) =>
  [{ alg: "RS256", typ: "JWT" }, claims]
    .map((p) => Buffer.from(JSON.stringify(p)).toString("base64url"))
    .join(".") + ".c2ln";

describe("credentialOf", () => {
  const { pem, notAfter } = certificate(30);

  it.each([
    ["a day more than two weeks before", notAfter - CERTIFICATE_WARNING_MS - 86_400_000, false],
    ["a millisecond more than two weeks before", notAfter - CERTIFICATE_WARNING_MS - 1, false],
    ["exactly two weeks before", notAfter - CERTIFICATE_WARNING_MS, false],
    ["a millisecond less than two weeks before", notAfter - CERTIFICATE_WARNING_MS + 1, true],
    ["after it expired", notAfter + 1, true],
  ])("reads a client certificate's notAfter, expiring %s: %s", (_when, now, expiring) => {
    const credential = credentialOf(
      config({ certData: Buffer.from(pem).toString("base64"), keyData: "" }),
      now,
    );
    expect(credential).toEqual({
      kind: "client-certificate",
      notAfter: new Date(notAfter).toISOString().replace(/\.\d{3}Z$/, "Z"),
      fingerprint: expect.stringMatching(/^[0-9a-f]{16}$/),
      expiring,
    });
  });

  it("reads a certificate file as well as inline data, to the same fingerprint", () => {
    const file = join(work.dir, "client.pem");
    writeFileSync(file, pem);
    const now = notAfter - 30 * 86_400_000;
    expect(credentialOf(config({ certFile: file, keyFile: file }), now)).toEqual(
      credentialOf(config({ certData: Buffer.from(pem).toString("base64") }), now),
    );
  });

  it.each([
    [
      "a JWT's exp",
      jwt({ sub: "system:serviceaccount:gitfleet-system:gitfleet", exp: 1_900_000_000 }),
      "2030-03-17T17:46:40Z",
    ],
    ["a JWT without exp", jwt({ sub: "x" }), undefined],
    ["a static token", "0123456789abcdef", undefined],
    ["a token whose payload is not JSON", "a.bm90IGpzb24.c2ln", undefined],
    ["a token longer than 16 KiB", jwt({ exp: 1_900_000_000, pad: "x".repeat(20_000) }), undefined],
  ])("reads %s", (_name, token, notAfter) => {
    const credential = credentialOf(config({ token }), 1_800_000_000_000);
    expect(credential?.notAfter).toBe(notAfter);
    if (credential) {
      expect(credential.kind).toBe("token");
      expect(JSON.stringify(credential)).not.toContain(token.slice(0, 20));
    }
  });

  it("says nothing of a user without a certificate or token, or a certificate that does not parse", () => {
    expect(credentialOf(config({ username: "u", password: "p" }), 0)).toBeUndefined();
    expect(
      credentialOf(config({ certData: Buffer.from("not a certificate").toString("base64") }), 0),
    ).toBeUndefined();
  });
});
