import { constants } from "node:buffer";
import { createHash, randomBytes } from "node:crypto";
import { mkdir, open, readdir, readFile, rename, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import { codeFingerprint } from "./code-fingerprint.js";
import { decodeSnapshot, encodeSnapshot } from "./snapshot-codec.js";

/** Where a write has got to: for crash tests, which kill the process at each. */
export type WriteStage = "partial" | "written" | "renamed";

export interface SnapshotStoreOptions {
  /** The directory that holds the snapshot (created 0700 when missing). */
  readonly dir: string;
  /** The status branch whose state it keeps: one file per branch. */
  readonly statusBranch: string;
  /** The HMAC key (snapshot-key.ts); without it, a SHA-256 checksum. */
  readonly key?: Uint8Array;
  /** A file larger than this is refused unread. Default 4 GiB less a byte (what a Buffer can hold). */
  readonly maxBytes?: number;
  /** Told as a write reaches each stage (crash tests). */
  readonly onWriteStage?: (stage: WriteStage) => void;
}

/** A snapshot read back, or why there is none to use. */
export type SnapshotRead =
  | { readonly kind: "none" }
  | { readonly kind: "refused"; readonly reason: string }
  | {
      readonly kind: "read";
      readonly statusTip: string;
      readonly parts: readonly unknown[];
      readonly bytes: number;
    };

/**
 * One status branch's snapshot in a directory: written whole or not at all (a temporary file, synced,
 * then renamed over the last one, so a kill at any point leaves the last whole snapshot or none), read
 * back only when its tag, its build and its branch match (snapshot-codec.ts). Never trusted further
 * than that: what it holds is a cache of what the status branch says at its tip.
 */
export class SnapshotStore {
  readonly path: string;

  constructor(private readonly options: SnapshotStoreOptions) {
    const name = createHash("sha256").update(options.statusBranch).digest("hex").slice(0, 16);
    this.path = join(options.dir, `status-${name}.snapshot`);
  }

  /**
   * Writes the parts as the state at `statusTip`, each encoded and written before the next is asked
   * for: the parts must describe what was held when they were made (reconciler-snapshot.ts copies
   * what may change meanwhile).
   */
  async write(statusTip: string, parts: Iterable<unknown>): Promise<{ readonly bytes: number }> {
    const { statusBranch, key, onWriteStage } = this.options;
    const header = { code: codeFingerprint(), statusBranch, statusTip };
    await mkdir(this.options.dir, { recursive: true, mode: 0o700 });
    await this.removeTemporaries();
    const temporary = `${this.path}.tmp-${process.pid}-${randomBytes(4).toString("hex")}`;
    const file = await open(temporary, "wx", 0o600);
    let bytes = 0;
    try {
      await encodeSnapshot(
        header,
        parts,
        async (chunk) => {
          await file.write(chunk);
          if (bytes === 0) onWriteStage?.("partial");
          bytes += chunk.length;
        },
        key,
      );
      await file.sync();
    } catch (error) {
      await file.close().catch(() => undefined);
      await rm(temporary, { force: true });
      throw error;
    }
    await file.close();
    onWriteStage?.("written");
    await rename(temporary, this.path);
    await syncDirectory(this.options.dir);
    onWriteStage?.("renamed");
    return { bytes };
  }

  /** The snapshot, if there is one this build wrote for this branch, whole and untouched. */
  async read(): Promise<SnapshotRead> {
    const size = await stat(this.path).then(
      (s) => s.size,
      () => undefined,
    );
    if (size === undefined) return { kind: "none" };
    const max = Math.min(this.options.maxBytes ?? constants.MAX_LENGTH, constants.MAX_LENGTH);
    if (size > max) return { kind: "refused", reason: `it is ${size} bytes, more than the ${max} allowed` };
    const bytes = await readFile(this.path);
    const { statusBranch, key } = this.options;
    const decoded = decodeSnapshot(bytes, { code: codeFingerprint(), statusBranch }, key);
    if (!decoded.ok) return { kind: "refused", reason: decoded.reason };
    return { kind: "read", statusTip: decoded.header.statusTip, parts: decoded.parts, bytes: size };
  }

  // Temporary files a killed write left behind.
  private async removeTemporaries(): Promise<void> {
    const prefix = `${this.path.slice(this.options.dir.length + 1)}.tmp-`;
    const names = await readdir(this.options.dir).catch(() => [] as string[]);
    for (const name of names)
      if (name.startsWith(prefix)) await rm(join(this.options.dir, name), { force: true });
  }
}

// The rename is durable once the directory is synced (ignored where a directory cannot be opened).
async function syncDirectory(dir: string): Promise<void> {
  const handle = await open(dir, "r").catch(() => undefined);
  if (!handle) return;
  await handle.sync().catch(() => undefined);
  await handle.close();
}
