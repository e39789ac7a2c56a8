import { createHash } from "node:crypto";
import fs from "node:fs/promises";
import { join } from "node:path";
import { crc32, deflateSync } from "node:zlib";
import git from "isomorphic-git";
import { gitFs } from "./git-fs.js";

/** The Git object types a status commit is made of. */
export type ObjectType = "blob" | "tree" | "commit";

const TYPE_CODE: Readonly<Record<ObjectType, number>> = { commit: 1, tree: 2, blob: 3 };

/** Up to this many objects are written loose; more go into one packfile. */
const LOOSE_LIMIT = 64;

/** One tree entry: a file (blob) or a directory (tree). */
export interface TreeItem {
  readonly name: string;
  readonly type: "blob" | "tree";
  readonly oid: string;
}

/**
 * Git objects collected in memory and written together: a handful as loose objects (isomorphic-git),
 * many as a single packfile with its index. Writing thousands of loose objects costs a few file
 * operations each — a first reconcile of a large fleet writes tens of thousands — while a pack is
 * two files, written to temporary names and renamed, so a kill mid-write leaves nothing half-written.
 */
export class ObjectBatch {
  private readonly objects = new Map<string, { readonly type: ObjectType; readonly bytes: Uint8Array }>();

  /** Adds an object and returns its id (nothing is written yet). */
  add(type: ObjectType, bytes: Uint8Array): string {
    const oid = objectId(type, bytes);
    if (!this.objects.has(oid)) this.objects.set(oid, { type, bytes });
    return oid;
  }

  /** Adds a tree made of `items` (Git's entry order is applied here). */
  addTree(items: readonly TreeItem[]): string {
    return this.add("tree", treeBytes(items));
  }

  /** The ids of every object added. */
  oids(): string[] {
    return [...this.objects.keys()];
  }

  /** Writes every object into the repository. */
  async persist(gitdir: string): Promise<void> {
    if (this.objects.size === 0) return;
    if (this.objects.size <= LOOSE_LIMIT) {
      for (const [, { type, bytes }] of this.objects)
        await git.writeObject({ fs: gitFs, gitdir, type, object: bytes, format: "content" });
      return;
    }
    await writePack(
      gitdir,
      [...this.objects].map(([oid, object]) => ({ oid, ...object })),
    );
  }
}

/** The id Git gives an object: SHA-1 of "<type> <size>\0" and the content. */
export function objectId(type: ObjectType, bytes: Uint8Array): string {
  return createHash("sha1").update(`${type} ${bytes.length}\0`).update(bytes).digest("hex");
}

// Git sorts tree entries by name, comparing a directory's name as if it ended in "/".
function treeBytes(items: readonly TreeItem[]): Uint8Array {
  const keyed = items.map((item) => ({
    item,
    key: Buffer.from(item.type === "tree" ? `${item.name}/` : item.name),
  }));
  const sorted = keyed.sort((a, b) => Buffer.compare(a.key, b.key)).map(({ item }) => item);
  const parts: Buffer[] = [];
  for (const item of sorted) {
    parts.push(Buffer.from(`${item.type === "tree" ? "40000" : "100644"} ${item.name}\0`));
    parts.push(Buffer.from(item.oid, "hex"));
  }
  return Buffer.concat(parts);
}

async function writePack(
  gitdir: string,
  objects: readonly { readonly oid: string; readonly type: ObjectType; readonly bytes: Uint8Array }[],
): Promise<void> {
  const header = Buffer.alloc(12);
  header.write("PACK", 0);
  header.writeUInt32BE(2, 4);
  header.writeUInt32BE(objects.length, 8);
  const chunks: Buffer[] = [header];
  const entries: { oid: string; offset: number; crc: number }[] = [];
  let offset = header.length;
  for (const { oid, type, bytes } of objects) {
    const entry = Buffer.concat([entryHeader(TYPE_CODE[type], bytes.length), deflateSync(bytes)]);
    entries.push({ oid, offset, crc: crc32(entry) });
    chunks.push(entry);
    offset += entry.length;
  }
  if (offset >= 2 ** 31) throw new Error("status commit too large for one packfile");
  const body = Buffer.concat(chunks);
  const packHash = createHash("sha1").update(body).digest();
  const pack = Buffer.concat([body, packHash]);
  const index = packIndex(entries, packHash);
  const directory = join(gitdir, "objects", "pack");
  await fs.mkdir(directory, { recursive: true });
  const name = `pack-${packHash.toString("hex")}`;
  // The pack first, then its index: readers only look at packs that have an index.
  for (const [suffix, data] of [
    [".pack", pack],
    [".idx", index],
  ] as const) {
    const temporary = join(directory, `tmp-${name}${suffix}`);
    await fs.writeFile(temporary, data);
    await fs.rename(temporary, join(directory, `${name}${suffix}`));
  }
}

// Type and size: 3 type bits and 4 size bits in the first byte, then 7 size bits per byte.
function entryHeader(type: number, size: number): Buffer {
  const bytes = [(type << 4) | (size & 0x0f)];
  let rest = Math.floor(size / 16);
  while (rest > 0) {
    bytes[bytes.length - 1] = (bytes[bytes.length - 1] as number) | 0x80;
    bytes.push(rest & 0x7f);
    rest = Math.floor(rest / 128);
  }
  return Buffer.from(bytes);
}

// Pack index version 2: fan-out table, sorted ids, CRC-32s, offsets, pack checksum, own checksum.
function packIndex(
  entries: readonly { oid: string; offset: number; crc: number }[],
  packHash: Buffer,
): Buffer {
  const sorted = [...entries].sort((a, b) => (a.oid < b.oid ? -1 : a.oid > b.oid ? 1 : 0));
  const fanout = Buffer.alloc(256 * 4);
  for (let byte = 0, i = 0; byte < 256; byte++) {
    while (i < sorted.length && Number.parseInt((sorted[i] as { oid: string }).oid.slice(0, 2), 16) <= byte)
      i++;
    fanout.writeUInt32BE(i, byte * 4);
  }
  const ids = Buffer.concat(sorted.map((e) => Buffer.from(e.oid, "hex")));
  const crcs = Buffer.alloc(sorted.length * 4);
  const offsets = Buffer.alloc(sorted.length * 4);
  sorted.forEach((e, i) => {
    crcs.writeUInt32BE(e.crc >>> 0, i * 4);
    offsets.writeUInt32BE(e.offset, i * 4);
  });
  const head = Buffer.from([0xff, 0x74, 0x4f, 0x63, 0, 0, 0, 2]);
  const body = Buffer.concat([head, fanout, ids, crcs, offsets, packHash]);
  return Buffer.concat([body, createHash("sha1").update(body).digest()]);
}
