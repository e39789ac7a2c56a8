import git from "isomorphic-git";
import type { StatusCommitChange } from "../observe/fleet-events.js";
import type { FleetRepo } from "./fleet-repo.js";
import { gitFs as fs } from "./git-fs.js";
import { diffTrees } from "./tree-diff.js";

/** The status files events are read from: clusters', apps', migrations' and the source's. */
const EVENT_FILES =
  /^status\/(?:clusters\/[^/]+|apps\/(?:[0-9a-f]{2}\/)?[^/]+|migrations\/[^/]+|source)\.yaml$/;
/** A status file larger than this is not read for events (gitfleet writes them far smaller). */
const MAX_FILE = 1024 * 1024;

/**
 * A status commit as events see it: its message, its time, and the status files it changed with
 * their text before (its first parent) and after. Only the files events read are read.
 */
export async function statusCommitChange(repo: FleetRepo, commit: string): Promise<StatusCommitChange> {
  const { commit: read } = await git.readCommit({ fs, gitdir: repo.gitdir, cache: repo.cache, oid: commit });
  const parent = read.parent[0];
  const before = parent ? await repo.treeOf(parent) : undefined;
  const changes = (await diffTrees(repo.gitdir, repo.cache, before, read.tree)).filter((c) =>
    EVENT_FILES.test(c.path),
  );
  const text = async (oid: string | null) => {
    if (oid === null) return undefined;
    const bytes = await repo.readBlob(oid);
    return bytes.byteLength > MAX_FILE ? undefined : new TextDecoder().decode(bytes);
  };
  const files = [];
  for (const change of changes)
    files.push({ path: change.path, before: await text(change.previous), after: await text(change.oid) });
  return {
    commit,
    time: new Date(read.committer.timestamp * 1000).toISOString(),
    message: read.message,
    files,
  };
}
