import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex, utf8ToBytes } from "@noble/hashes/utils.js";
import type { FileTree } from "./file-tree.js";

/** The digest of files: every path and its bytes (or that it is absent), in the order given. */
export function filesDigest(
  files: readonly { readonly path: string; readonly bytes: Uint8Array | undefined }[],
): string {
  const hash = sha256.create();
  for (const { path, bytes } of files) {
    hash.update(utf8ToBytes(`${path}\0${bytes === undefined ? "absent" : bytes.length}\0`));
    if (bytes) hash.update(bytes);
  }
  return bytesToHex(hash.digest());
}

/** A tree that records every path looked up in it (by get or has), for a digest of what a build read. */
export class RecordingTree implements FileTree {
  readonly seen = new Set<string>();

  constructor(private readonly tree: FileTree) {}

  get size(): number {
    return this.tree.size;
  }
  get(path: string): Uint8Array | undefined {
    this.seen.add(path);
    return this.tree.get(path);
  }
  has(path: string): boolean {
    this.seen.add(path);
    return this.tree.has(path);
  }
  forEach(callback: (value: Uint8Array, key: string, map: ReadonlyMap<string, Uint8Array>) => void): void {
    this.tree.forEach(callback);
  }
  entries(): MapIterator<[string, Uint8Array]> {
    return this.tree.entries();
  }
  keys(): MapIterator<string> {
    return this.tree.keys();
  }
  values(): MapIterator<Uint8Array> {
    return this.tree.values();
  }
  [Symbol.iterator](): MapIterator<[string, Uint8Array]> {
    return this.tree[Symbol.iterator]();
  }

  /** The digest of every path looked up and what the tree holds there. */
  digest(): string {
    return filesDigest([...this.seen].sort().map((path) => ({ path, bytes: this.tree.get(path) })));
  }
}
