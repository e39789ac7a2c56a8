import type { FleetModel } from "../model/types.js";
import { readEmittedYaml } from "../render/yaml-reader.js";
import {
  type AgentReport,
  agentReportPath,
  readAgentReport,
  sanitizeAgentReport,
} from "../status/observed-status.js";
import type { FleetRepo } from "./fleet-repo.js";
import { readTreeFiles } from "./read-tree.js";

/** The branch a pull-mode cluster's agent writes its reports to: its own, next to the status branch. */
export function agentBranch(statusBranch: string, cluster: string): string {
  return `${statusBranch}-agents/${cluster}`;
}

/** The largest report the controller reads from an agent's branch. */
const MAX_REPORT_BYTES = 2 ** 20;

/**
 * The reports pull-mode agents commit to branches of their own (`<status branch>-agents/<cluster>`),
 * which the controller reads and validates: only `status/agents/<cluster>.yaml` of the cluster's own
 * branch is read, at most 1 MiB, and a report is taken only when it speaks of that cluster and of
 * apps the fleet has, its text one bounded line per value. An agent cannot write the status branch,
 * nor speak for another cluster. A branch is read again only when its tip moved.
 */
export class AgentBranches {
  private readonly read = new Map<string, { tip: string; report: AgentReport | undefined }>();

  constructor(
    private readonly repo: FleetRepo,
    private readonly statusBranch: string,
  ) {}

  /** Every pull-mode cluster's latest valid report. */
  async reports(model: FleetModel): Promise<Map<string, AgentReport>> {
    const pull = model.clusters.filter((c) => c.spec.connection?.mode === "pull").map((c) => c.metadata.name);
    if (pull.length === 0) return new Map();
    await this.repo
      .fetch(pull.map((cluster) => agentBranch(this.statusBranch, cluster)))
      .catch(() => undefined);
    const reports = new Map<string, AgentReport>();
    for (const cluster of pull) {
      const report = await this.reportOf(cluster, model).catch(() => undefined);
      if (report) reports.set(cluster, report);
    }
    return reports;
  }

  private async reportOf(cluster: string, model: FleetModel): Promise<AgentReport | undefined> {
    const tip = await this.repo.branchTip(agentBranch(this.statusBranch, cluster));
    if (!tip) return undefined;
    const known = this.read.get(cluster);
    if (known?.tip === tip) return known.report;
    const path = agentReportPath(cluster);
    const files = await readTreeFiles(this.repo.gitdir, this.repo.cache, await this.repo.treeOf(tip), (p) =>
      p.endsWith("/") ? path.startsWith(p) : p === path,
    );
    const bytes = files.get(path);
    const parsed =
      bytes && bytes.length <= MAX_REPORT_BYTES
        ? readAgentReport(readEmittedYaml(new TextDecoder().decode(bytes)))
        : undefined;
    const report = parsed?.cluster === cluster ? sanitizeAgentReport(parsed, model) : undefined;
    this.read.set(cluster, { tip, report });
    return report;
  }
}
