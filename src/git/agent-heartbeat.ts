import git from "isomorphic-git";
import type { Heartbeat } from "../model/heartbeat.js";
import type { FleetModel } from "../model/types.js";
import type { FleetRepo } from "./fleet-repo.js";
import { gitFs as fs } from "./git-fs.js";
import type { CommitAuthor } from "./status-writer.js";

/** The ref an agent's heartbeat moves: one per cluster, next to the status branch, never in its history. */
export function heartbeatBranch(statusBranch: string, cluster: string): string {
  return `${statusBranch}-heartbeats/${cluster}`;
}

/**
 * One heartbeat: a parentless commit (an empty tree, the time in its committer date) that replaces
 * the last one by compare-and-swap — a Lease carried over Git. The branch never grows a history and
 * the status branch gets no commit. Returns false when another copy of the agent moved it first.
 */
export async function beat(
  repo: FleetRepo,
  statusBranch: string,
  cluster: string,
  author: CommitAuthor,
): Promise<boolean> {
  const branch = heartbeatBranch(statusBranch, cluster);
  await repo.fetch([branch]).catch(() => undefined);
  const expected = await repo.branchTip(branch);
  const signature = { ...author, timezoneOffset: author.timezoneOffset ?? 0 };
  const tree = await git.writeTree({ fs, gitdir: repo.gitdir, tree: [] });
  const commit = await git.writeCommit({
    fs,
    gitdir: repo.gitdir,
    commit: {
      tree,
      parent: [],
      author: signature,
      committer: signature,
      message: `heartbeat ${cluster}\n`,
    },
  });
  return repo.publish(branch, expected, commit, [tree, commit]);
}

/** The latest heartbeat of every pull-mode cluster that has one. */
export async function readHeartbeats(
  repo: FleetRepo,
  statusBranch: string,
  model: FleetModel,
): Promise<Map<string, Heartbeat>> {
  const pull = model.clusters.filter((c) => c.spec.connection?.mode === "pull").map((c) => c.metadata.name);
  const beats = new Map<string, Heartbeat>();
  if (pull.length === 0) return beats;
  await repo.fetch(pull.map((cluster) => heartbeatBranch(statusBranch, cluster))).catch(() => undefined);
  for (const cluster of pull) {
    const tip = await repo.branchTip(heartbeatBranch(statusBranch, cluster)).catch(() => undefined);
    if (!tip) continue;
    const read = await git
      .readCommit({ fs, gitdir: repo.gitdir, cache: repo.cache, oid: tip })
      .catch(() => undefined);
    if (read) beats.set(cluster, { tip, claimedAt: read.commit.committer.timestamp * 1000 });
  }
  return beats;
}
