import { randomBytes } from "node:crypto";
import fsp from "node:fs/promises";
import { basename, dirname, join } from "node:path";

/**
 * Writes a file so that a reader, or a process killed halfway, never leaves it half-written: the
 * bytes go to a temporary file in the same directory (named like git's own `tmp_obj_*`, which git
 * gc removes if a kill leaves one behind), then a rename puts it in place. isomorphic-git writes
 * loose objects in place, and a SIGKILL mid-write left a truncated object that a later run, seeing
 * the file exists, never rewrote.
 */
async function atomicWriteFile(...args: Parameters<typeof fsp.writeFile>): Promise<void> {
  const [file, data, options] = args;
  if (typeof file !== "string") return fsp.writeFile(file, data, options);
  const temporary = join(
    dirname(file),
    `tmp_obj_${basename(file).slice(0, 8)}${randomBytes(6).toString("hex")}`,
  );
  try {
    await fsp.writeFile(temporary, data, options);
    await fsp.rename(temporary, file);
  } catch (error) {
    await fsp.rm(temporary, { force: true });
    throw error;
  }
}

/**
 * The file system handed to isomorphic-git: Node's promise API, except that `readFile()` called
 * with no arguments resolves at once. isomorphic-git calls it that way on every command to detect a
 * promise-based file system, and Node answers by building an error with a stack trace — a third of
 * the time of reading a blob. Everything else is Node's own.
 */
export const gitFs = {
  promises: {
    readFile: ((...args: unknown[]) =>
      args.length === 0
        ? Promise.resolve(undefined)
        : fsp.readFile(...(args as Parameters<typeof fsp.readFile>))) as typeof fsp.readFile,
    writeFile: atomicWriteFile,
    mkdir: fsp.mkdir,
    rmdir: fsp.rmdir,
    rm: fsp.rm,
    unlink: fsp.unlink,
    stat: fsp.stat,
    lstat: fsp.lstat,
    readdir: fsp.readdir,
    readlink: fsp.readlink,
    symlink: fsp.symlink,
    chmod: fsp.chmod,
  },
};
