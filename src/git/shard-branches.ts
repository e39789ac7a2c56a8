import { CONTROLLER_TRAILER, EVENT_TRAILER, SOURCE_COMMIT_TRAILER } from "../model/trailers.js";
import { readShardReport, SHARD_REPORT_PATH, type ShardReport } from "../status/shard-report.js";
import type { FleetRepo } from "./fleet-repo.js";
import { readTreeFiles } from "./read-tree.js";
import { publishStatusCommit } from "./status-branch.js";
import type { CommitAuthor } from "./status-writer.js";

/** The branch a shard's holder writes its report to: its own, next to the status branch. */
export function shardBranch(statusBranch: string, shard: number): string {
  return `${statusBranch}-shards/${shard}`;
}

/**
 * The shards' own branches (`<status branch>-shards/<n>`): a holder commits what it observed of its
 * members there — no two writers on one branch while the Lease holds, and none on the status branch —
 * and the leader reads each one again only when its tip moved, keeping only what the shard may speak
 * for under the current assignment.
 */
export class ShardBranches {
  private readonly read = new Map<number, { tip: string; key: string; report: ShardReport | undefined }>();

  constructor(
    private readonly repo: FleetRepo,
    private readonly statusBranch: string,
  ) {}

  /** The latest valid report of each shard asked for; `clustersOf(shard)` are the clusters it has. */
  async reports(
    shards: readonly number[],
    clustersOf: (shard: number) => ReadonlySet<string>,
  ): Promise<Map<number, ShardReport>> {
    if (shards.length === 0) return new Map();
    await this.repo.fetch(shards.map((s) => shardBranch(this.statusBranch, s))).catch(() => undefined);
    const reports = new Map<number, ShardReport>();
    for (const shard of shards) {
      const report = await this.reportOf(shard, clustersOf(shard)).catch(() => undefined);
      if (report) reports.set(shard, report);
    }
    return reports;
  }

  private async reportOf(shard: number, clusters: ReadonlySet<string>): Promise<ShardReport | undefined> {
    const tip = await this.repo.branchTip(shardBranch(this.statusBranch, shard));
    if (!tip) return undefined;
    const key = [...clusters].sort().join(",");
    const known = this.read.get(shard);
    if (known?.tip === tip && known.key === key) return known.report;
    const text = await this.textAt(tip);
    const report = text === undefined ? undefined : readShardReport(text, shard, clusters);
    this.read.set(shard, { tip, key, report });
    return report;
  }

  /**
   * Commits a shard's report on top of its branch's tip when it changed (compare-and-swap); `fence`
   * runs right before the branch moves, so a holder whose Lease lapsed writes nothing.
   */
  async publish(input: {
    readonly shard: number;
    readonly text: string;
    readonly sourceCommit: string;
    readonly holder: string;
    readonly author: CommitAuthor;
    readonly message: string;
    readonly fence: () => void;
  }): Promise<"committed" | "unchanged" | "moved"> {
    const branch = shardBranch(this.statusBranch, input.shard);
    const parent = await this.repo.branchTip(branch);
    if (parent && (await this.textAt(parent)) === input.text) return "unchanged";
    const published = await publishStatusCommit(this.repo, {
      branch,
      parent,
      changes: new Map([[SHARD_REPORT_PATH, input.text]]),
      message: input.message,
      trailers: [
        [SOURCE_COMMIT_TRAILER, input.sourceCommit],
        [CONTROLLER_TRAILER, input.holder],
        [EVENT_TRAILER, "shard"],
      ],
      author: input.author,
      onWritten: () => input.fence(),
    });
    return published.status;
  }

  private async textAt(tip: string): Promise<string | undefined> {
    const files = await readTreeFiles(this.repo.gitdir, this.repo.cache, await this.repo.treeOf(tip), (p) =>
      p.endsWith("/") ? SHARD_REPORT_PATH.startsWith(p) : p === SHARD_REPORT_PATH,
    );
    const bytes = files.get(SHARD_REPORT_PATH);
    return bytes ? new TextDecoder().decode(bytes) : undefined;
  }
}
