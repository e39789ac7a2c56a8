import { constants, type Stats } from "node:fs";
import { type FileHandle, open, realpath, stat } from "node:fs/promises";
import { isAbsolute, relative, sep } from "node:path";

/** A file read within bounds, with what identifies its version; or why not (never the path, never content). */
export type BoundedRead =
  | { readonly ok: true; readonly bytes: Uint8Array; readonly version: string }
  | { readonly ok: false; readonly reason: BoundedReadFailure };

/** Why a bounded read gave nothing: phrases that complete "the file …" and name no host detail. */
export type BoundedReadFailure =
  | "does not exist"
  | "is not a regular file"
  | "is outside its directory"
  | "is too large"
  | "cannot be read";

/**
 * Reads a file the operator configured, refusing what could exhaust or hang the process: only a
 * regular file (never a device, FIFO or directory), at most `maxBytes`, read asynchronously, and —
 * with `within` — only when its real path (symlinks resolved, as a mounted Kubernetes Secret's are)
 * stays inside that directory. Opening is non-blocking and the opened file is checked again, so a
 * file swapped for a FIFO between the checks is refused too.
 */
export async function readBoundedFile(
  path: string,
  maxBytes: number,
  options: { readonly within?: string } = {},
): Promise<BoundedRead> {
  let real: string;
  try {
    real = await realpath(path);
    if (options.within !== undefined && !isInside(await realpath(options.within), real))
      return { ok: false, reason: "is outside its directory" };
  } catch (error) {
    return { ok: false, reason: missing(error) ? "does not exist" : "cannot be read" };
  }
  const refused = refusal(await stat(real).catch(() => undefined), maxBytes);
  if (refused) return { ok: false, reason: refused };
  const handle = await open(real, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW).catch(
    () => undefined,
  );
  if (!handle) return { ok: false, reason: "cannot be read" };
  try {
    const info = await handle.stat();
    const changed = refusal(info, maxBytes);
    if (changed) return { ok: false, reason: changed };
    const bytes = await readAtMost(handle, maxBytes);
    if (!bytes) return { ok: false, reason: "is too large" };
    return { ok: true, bytes, version: `${info.dev}:${info.ino}:${info.size}:${info.mtimeMs}` };
  } catch {
    return { ok: false, reason: "cannot be read" };
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/**
 * A file the operator named (a token, a key, known_hosts), read within bounds, or an error that says
 * `what` and why — never the content.
 */
export async function readConfiguredFile(path: string, what: string, maxBytes: number): Promise<Uint8Array> {
  const read = await readBoundedFile(path, maxBytes);
  if (!read.ok)
    throw new Error(
      `${what} ${read.reason}${read.reason === "is too large" ? ` (over ${maxBytes} bytes)` : ""}`,
    );
  return read.bytes;
}

// Why a file is refused by what stat says of it, or undefined.
function refusal(info: Stats | undefined, maxBytes: number): BoundedReadFailure | undefined {
  if (!info) return "cannot be read";
  if (!info.isFile()) return "is not a regular file";
  return info.size > maxBytes ? "is too large" : undefined;
}

// The file's bytes, or undefined when it holds more than maxBytes (it grew since stat).
async function readAtMost(handle: FileHandle, maxBytes: number): Promise<Uint8Array | undefined> {
  const buffer = new Uint8Array(maxBytes + 1);
  let length = 0;
  for (;;) {
    const { bytesRead } = await handle.read(buffer, length, buffer.length - length, null);
    if (bytesRead === 0) return buffer.slice(0, length);
    length += bytesRead;
    if (length > maxBytes) return undefined;
  }
}

/** The version string of a file as readBoundedFile reports it, without reading it (undefined: gone). */
export async function fileVersion(path: string): Promise<string | undefined> {
  const info = await stat(path).catch(() => undefined);
  return info ? `${info.dev}:${info.ino}:${info.size}:${info.mtimeMs}` : undefined;
}

// Inside: below root, not root itself. A name that merely starts with ".." (the ..2026_… directory a
// mounted Secret's files resolve into) is inside; only a ".." segment climbs out.
function isInside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel !== "" && rel !== ".." && !rel.startsWith(`..${sep}`) && !isAbsolute(rel);
}

function missing(error: unknown): boolean {
  return (
    (error as NodeJS.ErrnoException).code === "ENOENT" || (error as NodeJS.ErrnoException).code === "ENOTDIR"
  );
}
