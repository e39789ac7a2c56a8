import fsp from "node:fs/promises";

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
    writeFile: fsp.writeFile,
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
