import { createHash, createHmac, type Hash, type Hmac, timingSafeEqual } from "node:crypto";
import { deserialize, serialize } from "node:v8";

/**
 * The bytes of a snapshot: a magic line, a header line (JSON), the parts (each an 8-byte length and
 * a value in V8's serialization format) and a 32-byte tag. The tag covers everything before it: an
 * HMAC-SHA256 when the process has a key (derived from its signing key, so that a snapshot nobody
 * with that key wrote is refused like a tip no trusted key signed), else a SHA-256 that catches a
 * torn or damaged file. Parts are encoded and written one at a time, so writing a snapshot holds one
 * part's bytes at a time, not the whole state's.
 */
const MAGIC = "gitfleet-snapshot\n";
/** The layout of the bytes; the parts' shapes are pinned by the code fingerprint. */
const FORMAT = 2;
const TAG_BYTES = 32;
const LENGTH_BYTES = 8;
const MAX_HEADER_BYTES = 4096;

/** What the header says; all of it but the tip must match what the reader expects. */
export interface SnapshotHeader {
  /** The digest of the code that wrote it (code-fingerprint.ts). */
  readonly code: string;
  /** The status branch its state describes. */
  readonly statusBranch: string;
  /** The status commit its state describes. */
  readonly statusTip: string;
}

/** What a reader expects of a snapshot before it reads its state: its build and its branch. */
export type Expected = Omit<SnapshotHeader, "statusTip">;

interface WrittenHeader extends SnapshotHeader {
  readonly format: number;
  readonly tag: "hmac-sha256" | "sha256";
}

/** A snapshot read back: the header and the parts, or why it was refused. */
export type Decoded =
  | { readonly ok: true; readonly header: SnapshotHeader; readonly parts: readonly unknown[] }
  | { readonly ok: false; readonly reason: string };

/**
 * Encodes the parts one at a time, each handed to `write` (and awaited) before the next is encoded.
 * The first part is encoded before the first await.
 */
export async function encodeSnapshot(
  header: SnapshotHeader,
  parts: Iterable<unknown>,
  write: (bytes: Uint8Array) => Promise<void>,
  key?: Uint8Array,
): Promise<void> {
  const tag = tagger(key);
  const emit = async (bytes: Uint8Array) => {
    tag.update(bytes);
    await write(bytes);
  };
  const written: WrittenHeader = { format: FORMAT, ...header, tag: key ? "hmac-sha256" : "sha256" };
  const head = Buffer.from(`${MAGIC}${JSON.stringify(written)}\n`, "utf8");
  let first: Buffer | undefined = head;
  for (const part of parts) {
    const body = serialize(part);
    const length = Buffer.alloc(LENGTH_BYTES);
    length.writeBigUInt64BE(BigInt(body.length));
    await emit(first ? Buffer.concat([first, length]) : length);
    first = undefined;
    await emit(body);
  }
  if (first) await emit(first);
  await write(tag.digest());
}

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
  if (buffer.length < end + 1 + TAG_BYTES) return refused("it is cut off");
  const tagAt = buffer.length - TAG_BYTES;
  const tag = tagger(key).update(buffer.subarray(0, tagAt)).digest();
  if (!timingSafeEqual(buffer.subarray(tagAt), tag))
    return refused(
      key
        ? "its HMAC does not match (written without this key, cut off, or altered)"
        : "its checksum does not match",
    );
  return readParts(buffer.subarray(end + 1, tagAt), header);
}

// The parts between the header and the tag, each an 8-byte length and a value.
function readParts(buffer: Buffer, header: SnapshotHeader): Decoded {
  const parts: unknown[] = [];
  for (let at = 0; at < buffer.length; ) {
    if (at + LENGTH_BYTES > buffer.length) return refused("a part's length is cut off");
    const length = Number(buffer.readBigUInt64BE(at));
    at += LENGTH_BYTES;
    if (length > buffer.length - at) return refused("a part runs past the end");
    try {
      parts.push(deserialize(buffer.subarray(at, at + length)));
    } catch (error) {
      return refused(`a part does not read: ${error instanceof Error ? error.message : String(error)}`);
    }
    at += length;
  }
  return { ok: true, header, parts };
}

/** The HMAC key of a process's snapshots, derived from its signing key's bytes (never the key itself). */
export function snapshotKeyOf(signingKey: Uint8Array): Uint8Array {
  return createHmac("sha256", "gitfleet snapshot key").update(signingKey).digest();
}

function tagger(key: Uint8Array | undefined): Hash | Hmac {
  return key ? createHmac("sha256", key) : createHash("sha256");
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
  return strings && Number.isSafeInteger(header.format) ? (header as unknown as WrittenHeader) : undefined;
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
