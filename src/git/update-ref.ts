import fs from "node:fs/promises";
import { dirname, join } from "node:path";
import git from "isomorphic-git";
import { gitFs } from "./git-fs.js";

/** A lock older than this was left by a process that died holding it. */
const STALE_LOCK_MS = 30_000;

/**
 * Moves a ref from `expected` (undefined: the ref must not exist) to `value`, atomically and only if
 * it still points at `expected` — the compare-and-swap that lets two controllers share a repository.
 * Uses Git's own lock protocol (`<ref>.lock` created exclusively, then renamed over the ref), so the
 * git CLI and other writers respect it too, and a kill at any point leaves the old value or the new
 * one, never a torn file. Returns false when the ref moved or another writer holds the lock.
 */
export async function compareAndSwapRef(
  gitdir: string,
  ref: string,
  expected: string | undefined,
  value: string,
): Promise<boolean> {
  const path = join(gitdir, ref);
  const lock = `${path}.lock`;
  await fs.mkdir(dirname(path), { recursive: true });
  const handle = await openLock(lock);
  if (!handle) return false;
  try {
    const current = await git.resolveRef({ fs: gitFs, gitdir, ref }).catch(() => undefined);
    if (current !== expected) {
      await handle.close();
      await fs.rm(lock, { force: true });
      return false;
    }
    await handle.writeFile(`${value}\n`);
    await handle.sync();
    await handle.close();
    await fs.rename(lock, path);
    return true;
  } catch (error) {
    await fs.rm(lock, { force: true });
    throw error;
  }
}

async function openLock(lock: string): Promise<fs.FileHandle | undefined> {
  try {
    return await fs.open(lock, "wx");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    const stat = await fs.stat(lock).catch(() => undefined);
    if (stat && Date.now() - stat.mtimeMs > STALE_LOCK_MS) {
      await fs.rm(lock, { force: true });
      return fs.open(lock, "wx").catch(() => undefined);
    }
    return undefined;
  }
}
