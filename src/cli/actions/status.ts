import { parseKubeVersion } from "../../apimachinery/kube-version.js";
import { FleetRepo } from "../../git/fleet-repo.js";
import { StatusReader } from "../../git/status-reader.js";
import { clustersBelowJson, formatClustersBelow, formatStatus } from "../../observe/format-status.js";
import { CliError, ExitCode, type ExitCodeValue } from "../exit-codes.js";
import { type GitAuthFlags, withGitAccess } from "../git-auth.js";
import { type CommandOutput, structured } from "../output.js";

export interface StatusOptions extends GitAuthFlags {
  readonly repo: string;
  readonly branch: string;
  readonly statusBranch: string;
  readonly format: "text" | "json" | "yaml";
  readonly cacheDir?: string;
  /** List the clusters below this Kubernetes version instead of the overview. */
  readonly below?: string;
}

export async function runStatus(options: StatusOptions, output: CommandOutput): Promise<ExitCodeValue> {
  const below = options.below === undefined ? undefined : parseKubeVersion(options.below);
  if (options.below !== undefined && !below)
    throw new CliError(
      `--below ${JSON.stringify(options.below)} is not a Kubernetes version; write it like v1.34.2`,
    );
  const fail = (error: unknown): never => {
    throw new CliError(error instanceof Error ? error.message : String(error));
  };
  const repo = await FleetRepo.open({
    location: options.repo,
    ...(options.cacheDir ? { cacheDir: options.cacheDir } : {}),
    ...withGitAccess(options),
  }).catch(fail);
  await repo.fetch([options.branch, options.statusBranch]).catch(fail);
  const reader = new StatusReader(repo, { source: options.branch, status: options.statusBranch });
  if (!(await reader.tip())) {
    output.err(`gitfleet: no ${options.statusBranch} branch in ${repo.describe()}: nothing reconciled yet\n`);
    return ExitCode.Failed;
  }
  const view = await reader.view().catch(fail);
  if (below) {
    const listed = formatClustersBelow(view, below);
    output.out(
      options.format === "text" ? listed.text : structured(clustersBelowJson(view, below), options.format),
    );
    return listed.below > 0 ? ExitCode.Changes : ExitCode.Ok;
  }
  output.out(options.format === "text" ? formatStatus(view) : structured(view, options.format));
  const healthy =
    view.source.valid &&
    view.clusters.every((c) => c.state === "Healthy") &&
    view.apps.every((a) => a.health === "Healthy");
  return healthy ? ExitCode.Ok : ExitCode.Changes;
}
