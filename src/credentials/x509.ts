import "reflect-metadata";
import { createHash, randomBytes, webcrypto } from "node:crypto";

import * as x509 from "@peculiar/x509";
import { isIP } from "../manifests/controlplane/control-plane-objects.js";

type CryptoKey = webcrypto.CryptoKey;
type CryptoKeyPair = webcrypto.CryptoKeyPair;
/** Node's WebCrypto, as the library's (DOM-typed) parameters take it. */
/** Node's WebCrypto, as @peculiar/x509 takes it. */
export const X509_CRYPTO = webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0];
const provider = X509_CRYPTO;
x509.cryptoProvider.set(provider);

/** Every key gitfleet generates: ECDSA on P-256, signed with SHA-256 (what kubeadm offers as ECDSA-P256). */
const ALGORITHM = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" } as const;
/** Certificates start five minutes in the past, so a member whose clock is a little behind accepts them. */
const BACKDATE_MS = 5 * 60_000;

/** A key pair and its PEM forms. */
export interface KeyPair {
  readonly keys: CryptoKeyPair;
  /** PKCS#8 "PRIVATE KEY". */
  readonly privatePem: string;
  /** SPKI "PUBLIC KEY". */
  readonly publicPem: string;
}

/** A certificate with the key it certifies. */
export interface Issued {
  readonly certificate: x509.X509Certificate;
  readonly certificatePem: string;
  readonly key: KeyPair;
}

/** What a certificate says about whom, for how long, and for what. */
export interface CertificateRequest {
  readonly commonName: string;
  readonly organization?: string;
  /** DNS names and IP addresses. */
  readonly names?: readonly string[];
  readonly usage: "ca" | "server" | "client" | "server-and-client";
  readonly validityMs: number;
}

/** A new key pair. */
export async function generateKeyPair(): Promise<KeyPair> {
  const keys = (await webcrypto.subtle.generateKey(ALGORITHM, true, ["sign", "verify"])) as CryptoKeyPair;
  const privatePem = pem("PRIVATE KEY", await webcrypto.subtle.exportKey("pkcs8", keys.privateKey));
  const publicPem = pem("PUBLIC KEY", await webcrypto.subtle.exportKey("spki", keys.publicKey));
  return { keys, privatePem, publicPem };
}

/** A self-signed CA. */
export async function createCertificateAuthority(request: CertificateRequest, now: number): Promise<Issued> {
  const key = await generateKeyPair();
  const certificate = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serialNumber(),
    name: subjectOf(request),
    notBefore: new Date(now - BACKDATE_MS),
    notAfter: new Date(now + request.validityMs),
    keys: key.keys,
    signingAlgorithm: ALGORITHM,
    extensions: await extensionsOf(request, key.keys.publicKey),
  });
  return { certificate, certificatePem: certificate.toString("pem"), key };
}

/** A certificate signed by `authority`. */
export async function issueCertificate(
  request: CertificateRequest,
  authority: Issued,
  now: number,
): Promise<Issued> {
  const key = await generateKeyPair();
  const notAfter = Math.min(now + request.validityMs, authority.certificate.notAfter.getTime());
  const certificate = await x509.X509CertificateGenerator.create({
    serialNumber: serialNumber(),
    subject: subjectOf(request),
    issuer: authority.certificate.subject,
    notBefore: new Date(now - BACKDATE_MS),
    notAfter: new Date(notAfter),
    publicKey: key.keys.publicKey,
    signingKey: authority.key.keys.privateKey,
    signingAlgorithm: ALGORITHM,
    extensions: [
      ...(await extensionsOf(request, key.keys.publicKey)),
      await x509.AuthorityKeyIdentifierExtension.create(authority.certificate),
    ],
  });
  return { certificate, certificatePem: certificate.toString("pem"), key };
}

/**
 * `authority`'s certificate signed by `by` instead of itself: the same subject and key, so whatever
 * `authority` signs also chains to `by`. A CA rollover serves it beside each new leaf, and a client
 * that trusts only the previous CA keeps verifying the new certificates until `by` expires.
 */
export async function crossSign(authority: Issued, by: Issued, now: number): Promise<Issued> {
  const certificate = await x509.X509CertificateGenerator.create({
    serialNumber: serialNumber(),
    subject: authority.certificate.subject,
    issuer: by.certificate.subject,
    notBefore: new Date(now - BACKDATE_MS),
    notAfter: by.certificate.notAfter,
    publicKey: authority.key.keys.publicKey,
    signingKey: by.key.keys.privateKey,
    signingAlgorithm: ALGORITHM,
    extensions: [
      ...(await extensionsOf({ commonName: "", usage: "ca", validityMs: 0 }, authority.key.keys.publicKey)),
      await x509.AuthorityKeyIdentifierExtension.create(by.certificate),
    ],
  });
  return { certificate, certificatePem: certificate.toString("pem"), key: authority.key };
}

/** When a certificate gitfleet made was issued: its notBefore, less the backdating every one gets. */
export function issuedAt(certificate: x509.X509Certificate): number {
  return certificate.notBefore.getTime() + BACKDATE_MS;
}

/** A certificate alone, read from PEM; undefined when it does not parse. */
export function readCertificate(certificatePem: string): x509.X509Certificate | undefined {
  try {
    return new x509.X509Certificate(certificatePem);
  } catch {
    return undefined;
  }
}

/** `pem` followed by `chain` (nothing, or more PEM blocks), each block on lines of its own. */
export function withChain(pem: string, chain: string): string {
  if (chain === "") return pem;
  return pem.endsWith("\n") ? pem + chain : `${pem}\n${chain}`;
}

/**
 * The first PEM block of a chain and the text after it: a leaf gitfleet wrote during a CA rollover
 * is followed by its CA's cross-signed certificate.
 */
export function splitChain(text: string): { readonly first: string; readonly rest: string } {
  const end = "-----END CERTIFICATE-----";
  const at = text.indexOf(end);
  if (at < 0) return { first: text, rest: "" };
  const cut = text.indexOf("\n", at + end.length);
  const split = cut < 0 ? text.length : cut + 1;
  return { first: text.slice(0, split), rest: text.slice(split) };
}

/**
 * Reads back a certificate and its key from PEM (a Secret's data); undefined when either does not
 * parse or the key is not the certificate's.
 */
export async function readIssued(certificatePem: string, keyPem: string): Promise<Issued | undefined> {
  try {
    const certificate = new x509.X509Certificate(certificatePem);
    const privateKey = await webcrypto.subtle.importKey("pkcs8", der(keyPem), ALGORITHM, true, ["sign"]);
    const publicKey = await certificate.publicKey.export(ALGORITHM, ["verify"], provider);
    const publicPem = pem("PUBLIC KEY", await webcrypto.subtle.exportKey("spki", publicKey));
    const issued: Issued = {
      certificate,
      certificatePem,
      key: { keys: { privateKey, publicKey } as CryptoKeyPair, privatePem: keyPem, publicPem },
    };
    return (await keyMatches(issued)) ? issued : undefined;
  } catch {
    return undefined;
  }
}

/** Whether `certificate` was signed by `authority`'s key. */
export async function signedBy(
  certificate: x509.X509Certificate,
  authority: x509.X509Certificate,
): Promise<boolean> {
  try {
    return await certificate.verify({ publicKey: authority.publicKey, signatureOnly: true }, provider);
  } catch {
    return false;
  }
}

/** The DNS names and IP addresses a certificate is for. */
export function namesOf(certificate: x509.X509Certificate): string[] {
  const extension = certificate.getExtension(x509.SubjectAlternativeNameExtension);
  return (extension?.names.toJSON() ?? []).map((name) => name.value).sort();
}

/** "sha256:…" of a certificate's DER: what the status branch records instead of the certificate. */
export function fingerprint(certificate: x509.X509Certificate): string {
  return `sha256:${createHash("sha256").update(new Uint8Array(certificate.rawData)).digest("hex")}`;
}

/** "sha256:…" of a public key (SPKI DER), for key pairs without a certificate. */
export function publicKeyFingerprint(publicPem: string): string {
  return `sha256:${createHash("sha256").update(der(publicPem)).digest("hex")}`;
}

async function keyMatches(issued: Issued): Promise<boolean> {
  const probe = new TextEncoder().encode("gitfleet");
  const signature = await webcrypto.subtle.sign(ALGORITHM, issued.key.keys.privateKey, probe);
  return webcrypto.subtle.verify(ALGORITHM, issued.key.keys.publicKey, signature, probe);
}

async function extensionsOf(request: CertificateRequest, publicKey: CryptoKey): Promise<x509.Extension[]> {
  const ca = request.usage === "ca";
  const flags = ca
    ? x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign | x509.KeyUsageFlags.digitalSignature
    : x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment;
  const extensions: x509.Extension[] = [
    new x509.BasicConstraintsExtension(ca, undefined, true),
    new x509.KeyUsagesExtension(flags, true),
    await x509.SubjectKeyIdentifierExtension.create(publicKey),
  ];
  if (!ca) {
    const usages = {
      server: [x509.ExtendedKeyUsage.serverAuth],
      client: [x509.ExtendedKeyUsage.clientAuth],
      "server-and-client": [x509.ExtendedKeyUsage.serverAuth, x509.ExtendedKeyUsage.clientAuth],
    }[request.usage];
    extensions.push(new x509.ExtendedKeyUsageExtension(usages));
  }
  if (request.names && request.names.length > 0)
    extensions.push(
      new x509.SubjectAlternativeNameExtension(
        request.names.map((name) => ({ type: isIP(name) ? "ip" : "dns", value: name })),
      ),
    );
  return extensions;
}

function subjectOf(request: CertificateRequest): string {
  const quote = (value: string) => value.replace(/([,+"\\<>;=])/g, "\\$1");
  return `${request.organization ? `O=${quote(request.organization)}, ` : ""}CN=${quote(request.commonName)}`;
}

// A positive 128-bit serial number, as RFC 5280 asks (unique and unpredictable).
function serialNumber(): string {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0] as number) & 0x7f;
  return bytes.toString("hex");
}

function pem(label: string, data: ArrayBuffer): string {
  const base64 = Buffer.from(data).toString("base64");
  const lines = base64.match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join("\n")}\n-----END ${label}-----\n`;
}

function der(text: string): Uint8Array {
  const body = text.replace(/-----(BEGIN|END) [A-Z ]+-----/g, "").replace(/\s+/g, "");
  return new Uint8Array(Buffer.from(body, "base64"));
}
