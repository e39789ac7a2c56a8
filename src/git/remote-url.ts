import fs from "node:fs";
import git from "isomorphic-git";
import { gitdirOf } from "./read-tree.js";

/** The URL a local repository's remote (origin) fetches from, as its Git config says; undefined when none. */
export async function remoteUrl(dir: string, remote = "origin"): Promise<string | undefined> {
  const value = await git
    .getConfig({ fs, gitdir: gitdirOf(dir), path: `remote.${remote}.url` })
    .catch(() => undefined);
  return typeof value === "string" && value !== "" ? value : undefined;
}
