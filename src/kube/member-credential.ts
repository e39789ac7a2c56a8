import { createHash, X509Certificate } from "node:crypto";
import { readFileSync, statSync } from "node:fs";
import type { KubeConfig } from "@kubernetes/client-node";
import { CERTIFICATE_WARNING_MS, type MemberCredential } from "../sync/sync-result.js";

// A certificate file larger than this is not read (a kubeconfig's own bound).
const MAX_CERTIFICATE_BYTES = 2 ** 20;

// A bearer token longer than this is not read for an expiry (a JWT is a few kilobytes at most).
const MAX_TOKEN_CHARS = 16_384;

/**
 * When the credential of a configuration's current user stops working: a client certificate's
 * notAfter (inline data, or a file of at most 1 MiB), else a bearer token's `exp` when the token is a
 * JWT (a ServiceAccount token, an OIDC ID token). Undefined for what says nothing of its end (a
 * static token, an exec plugin, a password) or does not parse. Reads the certificate file only;
 * never returns or logs a credential, only a fingerprint of it.
 */
export function credentialOf(config: KubeConfig, now: number): MemberCredential | undefined {
  const user = config.getCurrentUser();
  if (!user) return undefined;
  const pem = certificatePem(user.certData, user.certFile);
  if (pem) {
    try {
      const certificate = new X509Certificate(pem);
      return credential("client-certificate", Date.parse(certificate.validTo), certificate.raw, now);
    } catch {
      return undefined;
    }
  }
  const token = user.token;
  if (typeof token !== "string" || token.length > MAX_TOKEN_CHARS) return undefined;
  const exp = jwtExpiry(token);
  return exp === undefined ? undefined : credential("token", exp * 1000, Buffer.from(token), now);
}

function credential(
  kind: MemberCredential["kind"],
  notAfter: number,
  bytes: Uint8Array,
  now: number,
): MemberCredential | undefined {
  if (!Number.isFinite(notAfter)) return undefined;
  return {
    kind,
    notAfter: new Date(notAfter).toISOString().replace(/\.\d{3}Z$/, "Z"),
    fingerprint: createHash("sha256").update(bytes).digest("hex").slice(0, 16),
    expiring: notAfter - now < CERTIFICATE_WARNING_MS,
  };
}

function certificatePem(data: string | undefined, file: string | undefined): string | undefined {
  if (data) return Buffer.from(data, "base64").toString("utf8");
  if (!file) return undefined;
  try {
    const stat = statSync(file);
    return stat.isFile() && stat.size <= MAX_CERTIFICATE_BYTES ? readFileSync(file, "utf8") : undefined;
  } catch {
    return undefined;
  }
}

// The `exp` claim of a JWT's payload (seconds since the epoch), without checking its signature: the
// member checks that; gitfleet only wants to know when it will stop.
function jwtExpiry(token: string): number | undefined {
  const parts = token.split(".");
  if (parts.length !== 3) return undefined;
  try {
    const payload = JSON.parse(Buffer.from(parts[1] as string, "base64url").toString("utf8")) as unknown;
    const exp = (payload as { exp?: unknown } | null)?.exp;
    return typeof exp === "number" && Number.isFinite(exp) && exp > 0 ? exp : undefined;
  } catch {
    return undefined;
  }
}
