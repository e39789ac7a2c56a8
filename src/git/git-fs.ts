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

const LOOSE_OBJECT = /\/objects\/([0-9a-f]{2})\/([0-9a-f]{38})$/;

/**
 * The file system for one bulk read of objects that exist when it starts (the blobs of a tree).
 * isomorphic-git costs three failed or repeated file operations per object: it checks the git
 * directory (stat), looks for a loose object (an open that fails with ENOENT when the object is
 * packed, and Node builds an error with a stack for it) and lists the pack directory (readdir).
 * At 200,000 objects that was a third of a restart. Here the git directory's stat and the pack
 * directory's listing are read once per read, and a loose object is looked up in its directory's
 * listing (read once, at most 256 of them) before any open. Objects written while the read runs are
 * not seen; the read asks for none of them.
 */
export function readSessionFs(gitdir: string): typeof gitFs {
  const once = new Map<string, Promise<unknown>>();
  const remember = <T>(key: string, read: () => Promise<T>): Promise<T> => {
    let known = once.get(key) as Promise<T> | undefined;
    if (!known) {
      known = read();
      once.set(key, known);
    }
    return known;
  };
  const packs = join(gitdir, "objects", "pack");
  const looseNames = (prefix: string) =>
    remember(`loose:${prefix}`, () =>
      fsp.readdir(join(gitdir, "objects", prefix)).then(
        (names) => new Set(names),
        () => new Set<string>(),
      ),
    );
  const base = gitFs.promises;
  return {
    promises: {
      ...base,
      stat: ((path: unknown, ...rest: unknown[]) =>
        path === gitdir && rest.length === 0
          ? remember("stat", () => fsp.stat(gitdir))
          : fsp.stat(...([path, ...rest] as Parameters<typeof fsp.stat>))) as typeof fsp.stat,
      readdir: ((path: unknown, ...rest: unknown[]) =>
        path === packs && rest.length === 0
          ? remember("packs", () => fsp.readdir(packs))
          : fsp.readdir(...([path, ...rest] as Parameters<typeof fsp.readdir>))) as typeof fsp.readdir,
      readFile: (async (...args: unknown[]) => {
        const loose = typeof args[0] === "string" ? LOOSE_OBJECT.exec(args[0]) : null;
        if (loose && !(await looseNames(loose[1] as string)).has(loose[2] as string)) throw NO_LOOSE_OBJECT;
        return base.readFile(...(args as Parameters<typeof fsp.readFile>));
      }) as typeof fsp.readFile,
    },
  };
}

// isomorphic-git takes any failure to read a loose object as "not loose" and looks in the packs.
const NO_LOOSE_OBJECT = Object.assign(new Error("no such loose object"), { code: "ENOENT" });
