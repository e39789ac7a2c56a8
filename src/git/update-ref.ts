import fs from "node:fs/promises";
import { dirname, join } from "node:path";
import git from "isomorphic-git";
import { gitFs } from "./git-fs.js";

/** How long a ref's lock is waited for, and after how long untouched it was left by a dead process. */
export interface LockTiming {
  readonly staleMs: number;
  readonly waitMs: number;
}

const DEFAULT_LOCK_TIMING: LockTiming = { staleMs: 15_000, waitMs: 20_000 };

/**
 * Moves a ref from `expected` (undefined: the ref must not exist) to `value`, atomically and only if
 * it still points at `expected` — the compare-and-swap that lets two controllers share a repository.
 * Uses Git's own lock protocol (`<ref>.lock` created exclusively, then renamed over the ref), so the
 * git CLI and other writers respect it too, and a kill at any point leaves the old value or the new
 * one, never a torn file. Returns false when the ref moved, or other writers kept the lock for the
 * whole wait.
 */
export async function compareAndSwapRef(
  gitdir: string,
  ref: string,
  expected: string | undefined,
  value: string,
  lockTiming: LockTiming = DEFAULT_LOCK_TIMING,
): Promise<boolean> {
  const path = join(gitdir, ref);
  const lock = `${path}.lock`;
  await fs.mkdir(dirname(path), { recursive: true });
  const handle = await openLock(lock, lockTiming);
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

/**
 * Takes `<ref>.lock`. A writer holds it for the few milliseconds a compare, a write and a rename
 * take, so a held lock is waited for; one that stays untouched for `staleMs` was left by a process
 * killed while holding it (the next start must not fail on it) and is broken. Gives up (undefined)
 * when other writers keep taking it for `waitMs`.
 */
async function openLock(lock: string, { staleMs, waitMs }: LockTiming): Promise<fs.FileHandle | undefined> {
  const deadline = Date.now() + waitMs;
  for (let pause = 10; ; pause = Math.min(pause * 2, 250)) {
    try {
      return await fs.open(lock, "wx");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    const stat = await fs.stat(lock).catch(() => undefined);
    if (stat && Date.now() - stat.mtimeMs > staleMs) await fs.rm(lock, { force: true });
    else if (Date.now() >= deadline) return undefined;
    else await new Promise((resolve) => setTimeout(resolve, pause));
  }
}
