import { crossSign, type Issued, readCertificate, signedBy, splitChain, withChain } from "./x509.js";

/**
 * A CA rollover's overlap: the CA a new one replaced, still valid, and the new CA's certificate
 * signed by it. While it lasts, every trust bundle gitfleet writes holds both CAs and every
 * certificate the new CA signs is served with the cross-signed one behind it, so a client that
 * trusts only the previous CA (a kubeconfig handed out before) verifies the new certificates, and
 * certificates the previous CA signed are still accepted. It ends when the previous CA expires.
 */
export interface Overlap {
  readonly previousPem: string;
  readonly crossPem: string;
  /** When the previous CA expires, and the overlap with it (epoch ms). */
  readonly endsAt: number;
}

/** The keys of a CA's Secret, besides its own certificate and key (tls.crt, tls.key). */
export const CA_KEYS = {
  /** What components trust: the CA, then the previous one during an overlap. */
  trust: "ca.crt",
  /** The CA a rollover replaced, during the overlap. */
  previous: "previous.crt",
  /** The CA's certificate signed by the previous one, during the overlap. */
  cross: "cross.crt",
} as const;

/**
 * Whether a CA is rolled over now: once it would no longer outlive a certificate it signs and that
 * certificate's renewal window, so everything it ever signed expires before it does — the overlap
 * gives a client holding one the whole of that certificate's life to take a new one.
 */
export function rolloverDue(
  caNotAfter: number,
  now: number,
  validityMs: number,
  renewBeforeMs: number,
): boolean {
  return caNotAfter - now <= validityMs + renewBeforeMs;
}

/** A rollover from `previous` (undefined: it had already expired or did not parse) to `next`. */
export async function startOverlap(
  next: Issued,
  previous: Issued | undefined,
  now: number,
): Promise<Overlap | undefined> {
  if (!previous || previous.certificate.notAfter.getTime() <= now) return undefined;
  const cross = await crossSign(next, previous, now);
  return {
    previousPem: previous.certificatePem,
    crossPem: cross.certificatePem,
    endsAt: previous.certificate.notAfter.getTime(),
  };
}

/**
 * The overlap a CA's Secret records, when it still holds: the previous CA parses and has not
 * expired, and the cross-signed certificate is the CA's own key signed by it. Anything else (a
 * Secret edited in the host, an overlap that ended) is no overlap.
 */
export async function readOverlap(
  data: Readonly<Record<string, string>>,
  ca: Issued,
  now: number,
): Promise<Overlap | undefined> {
  const previousPem = data[CA_KEYS.previous];
  const crossPem = data[CA_KEYS.cross];
  if (previousPem === undefined || crossPem === undefined) return undefined;
  // One certificate each, as gitfleet writes them: nothing else rides into the trust bundle.
  if (!singleCertificate(previousPem) || !singleCertificate(crossPem)) return undefined;
  const previous = readCertificate(previousPem);
  const cross = readCertificate(crossPem);
  if (!previous || !cross || previous.notAfter.getTime() <= now) return undefined;
  if (cross.publicKey.toString("pem") !== ca.certificate.publicKey.toString("pem")) return undefined;
  if (cross.subject !== ca.certificate.subject || !(await signedBy(cross, previous))) return undefined;
  return { previousPem, crossPem, endsAt: previous.notAfter.getTime() };
}

function singleCertificate(pem: string): boolean {
  return pem.trimStart().startsWith("-----BEGIN CERTIFICATE-----") && splitChain(pem).rest.trim() === "";
}

/** The trust bundle: the CA, then the previous one during an overlap. */
export function trustBundle(ca: Issued, overlap: Overlap | undefined): string {
  return withChain(ca.certificatePem, overlap?.previousPem ?? "");
}

/** What a CA's Secret holds. */
export function authorityData(ca: Issued, overlap: Overlap | undefined): Record<string, string> {
  return {
    "tls.crt": ca.certificatePem,
    "tls.key": ca.key.privatePem,
    [CA_KEYS.trust]: trustBundle(ca, overlap),
    ...(overlap ? { [CA_KEYS.previous]: overlap.previousPem, [CA_KEYS.cross]: overlap.crossPem } : {}),
  };
}
