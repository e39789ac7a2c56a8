import { createReadStream, createWriteStream } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";

/**
 * The archive a backup is: a POSIX ustar file of regular files only, readable by any tar. Written
 * from files on disk, entry by entry; read back only as far as its bounds allow — the entries a
 * caller allows by name, each at most the size it allows — so an archive from a store cannot name a
 * path outside the directory it is unpacked into, a link, a device, or more bytes than it should.
 */
const BLOCK = 512;
/** The largest entry ustar's 11 octal digits can say: 8 GiB − 1. */
export const MAX_ENTRY_BYTES = 8 ** 11 - 1;

/** An entry's name as the archive holds it: plain segments joined by '/'. */
export function isPlainEntryName(name: string): boolean {
  return (
    name.length > 0 &&
    name.length <= 100 &&
    name.split("/").every((segment) => /^[A-Za-z0-9_][A-Za-z0-9._-]*$/.test(segment))
  );
}

/** Writes an archive of the given files (name in the archive → path on disk) into `path`. */
export async function writeArchive(
  path: string,
  entries: ReadonlyArray<{ readonly name: string; readonly from: string }>,
  mtime: Date,
): Promise<void> {
  await pipeline(archiveStream(entries, mtime), createWriteStream(path, { flags: "wx", mode: 0o600 }));
}

/**
 * The archive of the given files as a stream, made as it is read: nothing of it is written anywhere
 * but where the stream goes (a backup's goes straight into its encryption).
 */
export function archiveStream(
  entries: ReadonlyArray<{ readonly name: string; readonly from: string }>,
  mtime: Date,
): Readable {
  return Readable.from(archiveChunks(entries, mtime));
}

async function* archiveChunks(
  entries: ReadonlyArray<{ readonly name: string; readonly from: string }>,
  mtime: Date,
): AsyncGenerator<Buffer> {
  for (const entry of entries) yield* entryChunks(entry, mtime);
  yield Buffer.alloc(2 * BLOCK);
}

// One entry: its header, its bytes as they are when it is read (a file that changes meanwhile fails
// the archive), padding to the next block.
async function* entryChunks(
  entry: { readonly name: string; readonly from: string },
  mtime: Date,
): AsyncGenerator<Buffer> {
  if (!isPlainEntryName(entry.name)) throw new Error(`archive entry ${entry.name} is not a plain name`);
  const source = await open(entry.from, "r");
  try {
    const { size } = await source.stat();
    if (size > MAX_ENTRY_BYTES) throw new Error(`${entry.name} is larger than an archive entry may be`);
    yield header(entry.name, size, mtime);
    let copied = 0;
    for await (const chunk of source.createReadStream({ autoClose: false })) {
      copied += (chunk as Buffer).byteLength;
      if (copied > size) throw new Error(`${entry.name} grew while it was archived`);
      yield chunk as Buffer;
    }
    if (copied !== size) throw new Error(`${entry.name} shrank while it was archived`);
    const pad = (BLOCK - (size % BLOCK)) % BLOCK;
    if (pad) yield Buffer.alloc(pad);
  } finally {
    await source.close();
  }
}

function header(name: string, size: number, mtime: Date): Buffer {
  const block = Buffer.alloc(BLOCK);
  block.write(name, 0, 100, "utf8");
  block.write("0000600\0", 100, "ascii");
  block.write("0000000\0", 108, "ascii");
  block.write("0000000\0", 116, "ascii");
  block.write(`${size.toString(8).padStart(11, "0")}\0`, 124, "ascii");
  block.write(
    `${Math.floor(mtime.getTime() / 1000)
      .toString(8)
      .padStart(11, "0")}\0`,
    136,
    "ascii",
  );
  block.write("        ", 148, "ascii");
  block.write("0", 156, "ascii");
  block.write("ustar\0", 257, "ascii");
  block.write("00", 263, "ascii");
  const sum = block.reduce((total, byte) => total + byte, 0);
  block.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148, "ascii");
  return block;
}

/** What an archive may hold: a name's largest size, or undefined when the name is not allowed. */
export type EntryAllowance = (name: string) => number | undefined;

/** An entry found: its name, size, and where its bytes start in the archive. */
export interface ArchiveEntry {
  readonly name: string;
  readonly size: number;
  readonly offset: number;
}

/**
 * The entries of the archive at `path`, each checked: a header whose checksum is wrong, a type other
 * than a regular file, a name not allowed (or seen twice), a size past its allowance or past the
 * archive's end, or more than `maxEntries` entries, refuses the whole archive.
 */
export async function readArchiveIndex(
  path: string,
  allowance: EntryAllowance,
  maxEntries: number,
): Promise<ArchiveEntry[]> {
  const file = await open(path, "r");
  try {
    const { size: total } = await file.stat();
    const entries: ArchiveEntry[] = [];
    const seen = new Set<string>();
    let at = 0;
    for (;;) {
      const block = await readBlock(file, at);
      if (!block) throw new Error("the archive ends without its end marker");
      if (block.every((byte) => byte === 0)) return entries;
      if (entries.length >= maxEntries) throw new Error(`the archive holds more than ${maxEntries} entries`);
      const entry = parseHeader(block, at + BLOCK);
      checkEntry(entry, allowance, seen, total);
      seen.add(entry.name);
      entries.push(entry);
      at = entry.offset + Math.ceil(entry.size / BLOCK) * BLOCK;
    }
  } finally {
    await file.close();
  }
}

function checkEntry(
  entry: ArchiveEntry,
  allowance: EntryAllowance,
  seen: ReadonlySet<string>,
  total: number,
): void {
  const allowed = allowance(entry.name);
  if (allowed === undefined)
    throw new Error(`the archive holds ${JSON.stringify(entry.name)}, which a backup never holds`);
  if (seen.has(entry.name)) throw new Error(`the archive holds ${entry.name} twice`);
  if (entry.size > allowed)
    throw new Error(`${entry.name} is ${entry.size} bytes, more than the ${allowed} allowed`);
  if (entry.offset + entry.size > total) throw new Error(`${entry.name} runs past the archive's end`);
}

async function readBlock(file: FileHandle, at: number): Promise<Buffer | undefined> {
  const block = Buffer.alloc(BLOCK);
  const { bytesRead } = await file.read(block, 0, BLOCK, at);
  return bytesRead === BLOCK ? block : undefined;
}

function parseHeader(block: Buffer, offset: number): ArchiveEntry {
  const stored = octal(block.subarray(148, 156), "checksum");
  const copy = Buffer.from(block);
  copy.fill(0x20, 148, 156);
  if (copy.reduce((total, byte) => total + byte, 0) !== stored)
    throw new Error("an archive header's checksum is wrong");
  const type = String.fromCharCode(block[156] ?? 0);
  const name = cString(block.subarray(0, 100));
  const prefix =
    block.subarray(257, 262).toString("latin1") === "ustar" ? cString(block.subarray(345, 500)) : "";
  if (type !== "0" && type !== "\0")
    throw new Error(
      `the archive holds ${JSON.stringify(name.slice(0, 100))} of type ${JSON.stringify(type)}: a backup holds regular files only`,
    );
  if (prefix !== "")
    throw new Error("the archive names an entry with a ustar prefix: a backup's names are short");
  if (!isPlainEntryName(name))
    throw new Error(`the archive holds ${JSON.stringify(name.slice(0, 100))}, not a plain name`);
  return { name, size: octal(block.subarray(124, 136), "size"), offset };
}

function cString(field: Buffer): string {
  const end = field.indexOf(0);
  return field.subarray(0, end === -1 ? field.length : end).toString("utf8");
}

function octal(field: Buffer, what: string): number {
  const text = cString(field).trim();
  if (!/^[0-7]{1,12}$/.test(text)) throw new Error(`an archive header's ${what} is not an octal number`);
  const value = Number.parseInt(text, 8);
  if (!Number.isSafeInteger(value)) throw new Error(`an archive header's ${what} is out of range`);
  return value;
}

/** One entry's bytes as a stream (the index says where they are). */
export function entryStream(path: string, entry: ArchiveEntry): NodeJS.ReadableStream {
  if (entry.size === 0) return createReadStream(path, { start: 1, end: 0 });
  return createReadStream(path, { start: entry.offset, end: entry.offset + entry.size - 1 });
}
