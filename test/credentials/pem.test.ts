import { describe, expect, it } from "vitest";
import { checkPem, MAX_PEM_BYTES } from "../../src/credentials/pem.js";
import { createCertificateAuthority, generateKeyPair } from "../../src/credentials/x509.js";

const ca = await createCertificateAuthority(
  { commonName: "c", usage: "ca", validityMs: 3_600_000 },
  Date.now(),
);
const key = await generateKeyPair();
const body = (pem: string) => pem.split("\n").slice(1, -2).join("\n");

describe("checkPem", () => {
  it.each([
    ["one certificate", ca.certificatePem, "certificates", undefined],
    ["a chain of two", `${ca.certificatePem}\n${ca.certificatePem}`, "certificates", undefined],
    ["a private key", key.privatePem, "private key", undefined],
    [
      "a key where certificates go",
      key.privatePem,
      "certificates",
      "holds a PEM block that is not a certificate",
    ],
    ["a certificate where a key goes", ca.certificatePem, "private key", "is not one PEM private key"],
    ["two keys", `${key.privatePem}${key.privatePem}`, "private key", "is not one PEM private key"],
    ["text around a block", `x\n${ca.certificatePem}`, "certificates", "is not PEM"],
    ["a path", "/var/run/secrets/kubernetes.io/serviceaccount/token", "certificates", "is not PEM"],
    ["nothing", "", "certificates", "is not PEM"],
    ["a block never closed", ca.certificatePem.split("-----END")[0] as string, "certificates", "is not PEM"],
    [
      "base64 that is not a certificate",
      `-----BEGIN CERTIFICATE-----\n${body(key.privatePem)}\n-----END CERTIFICATE-----\n`,
      "certificates",
      "holds a certificate that does not parse",
    ],
    [
      "a line that is not base64",
      `-----BEGIN CERTIFICATE-----\nnot base64!\n-----END CERTIFICATE-----\n`,
      "certificates",
      "is not PEM",
    ],
  ] as const)("%s", (_name, text, kind, error) => {
    const checked = checkPem(text, kind);
    expect("error" in checked ? checked.error : undefined).toBe(error);
  });

  it.each([
    ["at the bound", MAX_PEM_BYTES, "is not PEM"],
    ["one past the bound", MAX_PEM_BYTES + 1, `is larger than ${MAX_PEM_BYTES} bytes`],
  ])("size %s", (_name, size, error) => {
    expect(checkPem("A".repeat(size), "certificates")).toEqual({ error });
  });
});
