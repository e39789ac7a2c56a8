import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { deserialize, serialize } from "node:v8";

/**
 * The bytes of a snapshot: a magic line, a header line (JSON), a 32-byte tag and the payload (the
 * value in V8's serialization format). The tag covers the header and the payload: an HMAC-SHA256 when
 * the process has a key (derived from its signing key, so that a snapshot nobody with that key wrote
 * is refused like a tip no trusted key signed), else a SHA-256 that catches a torn or damaged file.
 */
const MAGIC = "gitfleet-snapshot\n";
/** The layout of the bytes; the payload's shapes are pinned by the code fingerprint. */
const FORMAT = 1;
const TAG_BYTES = 32;
const MAX_HEADER_BYTES = 4096;

/** What the header says; all of it must match what the reader expects. */
export interface SnapshotHeader {
  /** The digest of the code that wrote it (code-fingerprint.ts). */
  readonly code: string;
  /** The status branch its state describes. */
  readonly statusBranch: string;
  /** The status commit its state describes. */
  readonly statusTip: string;
}

interface WrittenHeader extends SnapshotHeader {
  readonly format: number;
  readonly tag: "hmac-sha256" | "sha256";
  readonly payloadBytes: number;
}

/** A snapshot read back: the header and the payload, or why it was refused. */
export type Decoded =
  | { readonly ok: true; readonly header: SnapshotHeader; readonly payload: unknown }
  | { readonly ok: false; readonly reason: string };

/** The snapshot's bytes (synchronous: the value is taken as it is now). */
export function encodeSnapshot(header: SnapshotHeader, payload: unknown, key?: Uint8Array): Buffer {
  const body = serialize(payload);
  const written: WrittenHeader = {
    format: FORMAT,
    ...header,
    tag: key ? "hmac-sha256" : "sha256",
    payloadBytes: body.length,
  };
  const head = Buffer.from(`${MAGIC}${JSON.stringify(written)}\n`, "utf8");
  return Buffer.concat([head, tagOf(key, head, body), body]);
}

/** What a reader expects of a snapshot before it reads its state: its build and its branch. */
export type Expected = Omit<SnapshotHeader, "statusTip">;

/** The snapshot in `bytes`, when it is whole, untouched and written for what the reader expects. */
export function decodeSnapshot(bytes: Uint8Array, expected: Expected, key?: Uint8Array): Decoded {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (!buffer.subarray(0, MAGIC.length).equals(Buffer.from(MAGIC))) return refused("not a gitfleet snapshot");
  const end = buffer.indexOf(10, MAGIC.length);
  if (end < 0 || end - MAGIC.length > MAX_HEADER_BYTES) return refused("its header is cut off or too long");
  const header = parseHeader(buffer.subarray(MAGIC.length, end).toString("utf8"));
  if (!header) return refused("its header is not what gitfleet writes");
  const mismatch = headerMismatch(header, expected, key);
  if (mismatch) return refused(mismatch);
  const bodyStart = end + 1 + TAG_BYTES;
  if (buffer.length !== bodyStart + header.payloadBytes)
    return refused(
      `it holds ${buffer.length} bytes where its header says ${bodyStart + header.payloadBytes}`,
    );
  const head = buffer.subarray(0, end + 1);
  const body = buffer.subarray(bodyStart);
  if (!timingSafeEqual(buffer.subarray(end + 1, bodyStart), tagOf(key, head, body)))
    return refused(
      key ? "its HMAC does not match (written without this key, or altered)" : "its checksum does not match",
    );
  try {
    return { ok: true, header, payload: deserialize(body) };
  } catch (error) {
    return refused(`its payload does not read: ${error instanceof Error ? error.message : String(error)}`);
  }
}

function tagOf(key: Uint8Array | undefined, head: Uint8Array, body: Uint8Array): Buffer {
  const hash = key ? createHmac("sha256", key) : createHash("sha256");
  return hash.update(head).update(body).digest();
}

function parseHeader(text: string): WrittenHeader | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null) return undefined;
  const header = value as Record<string, unknown>;
  const strings = ["code", "statusBranch", "statusTip", "tag"].every((k) => typeof header[k] === "string");
  const counts = [header.format, header.payloadBytes].every(
    (n) => Number.isSafeInteger(n) && (n as number) >= 0,
  );
  return strings && counts ? (header as unknown as WrittenHeader) : undefined;
}

function headerMismatch(
  header: WrittenHeader,
  expected: Expected,
  key: Uint8Array | undefined,
): string | undefined {
  if (header.format !== FORMAT) return `it is of format ${header.format}, this gitfleet reads ${FORMAT}`;
  if (header.code !== expected.code) return "it was written by another build of gitfleet";
  if (header.statusBranch !== expected.statusBranch)
    return `it describes the status branch ${header.statusBranch}, not ${expected.statusBranch}`;
  if (header.tag !== (key ? "hmac-sha256" : "sha256"))
    return key
      ? "it carries no HMAC (written without a signing key)"
      : "it carries an HMAC and this process has no key";
  return undefined;
}

function refused(reason: string): Decoded {
  return { ok: false, reason };
}

/** The HMAC key of a process's snapshots, derived from its signing key's bytes (never the key itself). */
export function snapshotKeyOf(signingKey: Uint8Array): Uint8Array {
  return createHmac("sha256", "gitfleet snapshot key").update(signingKey).digest();
}
