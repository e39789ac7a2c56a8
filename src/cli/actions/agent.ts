import { KubeConfig } from "@kubernetes/client-node";
import { Agent, type AgentRound } from "../../agent/agent.js";
import { readFleetSettings } from "../../controller/fleet-settings.js";
import type { SigningFormat } from "../../git/commit-signer.js";
import { commitVerifier } from "../../git/commit-verifier.js";
import { FleetRepo } from "../../git/fleet-repo.js";
import { MemberClient } from "../../kube/member-client.js";
import { createLogger } from "../../log/logger.js";
import { parseDuration } from "../../model/duration.js";
import { AGENT_HEARTBEAT_INTERVAL_MS } from "../../model/heartbeat.js";
import { CliError, ExitCode, type ExitCodeValue } from "../exit-codes.js";
import { type GitAuthFlags, withGitAccess } from "../git-auth.js";
import type { CommandOutput } from "../output.js";
import { readSopsKeyring } from "../sops-keys.js";
import { syncFailed, syncLine } from "../sync-line.js";

export interface AgentFlags extends GitAuthFlags {
  readonly cluster: string;
  readonly repo: string;
  readonly branch: string;
  readonly statusBranch?: string;
  readonly kubeconfig?: string;
  readonly context?: string;
  readonly interval: string;
  readonly once?: boolean;
  readonly push: boolean;
  readonly cacheDir?: string;
  readonly logLevel: string;
  readonly trustedKeys?: string;
  readonly trustedKeysFormat: SigningFormat;
  readonly sopsAgeKeyFile?: string;
}

export async function runAgent(flags: AgentFlags, output: CommandOutput): Promise<ExitCodeValue> {
  const intervalMs = parseDuration(flags.interval);
  if (!intervalMs)
    throw new CliError(`--interval ${flags.interval}: expected a duration such as 30s`, ExitCode.Usage);
  const logger = createLogger({ level: flags.logLevel });
  const client = new MemberClient(flags.cluster, clusterConfig(flags));
  if (!flags.trustedKeys)
    throw new CliError(
      "--trusted-keys is required: the agent applies only status commits signed by a key it trusts",
      ExitCode.Usage,
    );
  const repo = await FleetRepo.open({
    location: flags.repo,
    ...(flags.cacheDir ? { cacheDir: flags.cacheDir } : {}),
    ...withGitAccess(flags),
  }).catch((error: unknown) => {
    throw new CliError(error instanceof Error ? error.message : String(error));
  });
  const settings = await readFleetSettings(repo, flags.branch).catch(() => ({}) as { statusBranch?: string });
  const trustedKeys = flags.trustedKeys;
  const verify = await commitVerifier({
    trusted: { format: flags.trustedKeysFormat, file: trustedKeys },
  }).catch((error: unknown) => {
    throw new CliError(
      `--trusted-keys: ${error instanceof Error ? error.message : String(error)}`,
      ExitCode.Usage,
    );
  });
  if (!verify) throw new CliError("--trusted-keys is required", ExitCode.Usage);
  const keyring = await readSopsKeyring(flags.sopsAgeKeyFile);
  const agent = new Agent({
    ...(keyring ? { keyring } : {}),
    repo,
    cluster: flags.cluster,
    branch: flags.branch,
    statusBranch: flags.statusBranch ?? settings.statusBranch ?? "gitfleet/status",
    client,
    logger,
    author: { name: "gitfleet agent", email: `gitfleet-agent@${flags.cluster}` },
    push: flags.push,
    verify,
  });
  if (flags.once) {
    const round = await agent.round().catch((error: unknown) => {
      throw new CliError(error instanceof Error ? error.message : String(error));
    });
    output.out(`${describe(round)}\n`);
    return round.result && !syncFailed(round.result) ? ExitCode.Ok : ExitCode.Failed;
  }
  let stopped = false;
  const stop = new Promise<void>((resolve) => {
    const end = () => {
      stopped = true;
      resolve();
    };
    process.once("SIGTERM", end);
    process.once("SIGINT", end);
  });
  // Heartbeats run on their own timer: a long round does not look like a dead agent.
  const beating = setInterval(() => {
    agent.heartbeat().catch((error: unknown) => logger.warn({ err: error }, "heartbeat failed"));
  }, AGENT_HEARTBEAT_INTERVAL_MS);
  beating.unref();
  void agent.heartbeat().catch(() => undefined);
  while (!stopped) {
    try {
      const round = await agent.round();
      logger.info({ cluster: flags.cluster, report: round.report }, describe(round));
    } catch (error) {
      logger.error({ err: error }, "agent round failed; trying again on the next tick");
    }
    await Promise.race([stop, new Promise((resolve) => setTimeout(resolve, intervalMs).unref())]);
  }
  clearInterval(beating);
  return ExitCode.Ok;
}

// The member's API: the kubeconfig's context, or the in-cluster service account.
function clusterConfig(flags: AgentFlags): KubeConfig {
  const config = new KubeConfig();
  if (flags.kubeconfig) {
    try {
      config.loadFromFile(flags.kubeconfig);
    } catch (error) {
      throw new CliError(`cannot read kubeconfig ${flags.kubeconfig}: ${(error as Error).message}`);
    }
    const context = flags.context ?? flags.cluster;
    if (!config.getContextObject(context))
      throw new CliError(`context "${context}" is not in ${flags.kubeconfig}`, ExitCode.Usage);
    config.setCurrentContext(context);
    return config;
  }
  if (!process.env.KUBERNETES_SERVICE_HOST)
    throw new CliError(
      "not running inside a cluster (no KUBERNETES_SERVICE_HOST): pass --kubeconfig",
      ExitCode.Usage,
    );
  config.loadFromCluster();
  return config;
}

function describe(round: AgentRound): string {
  if (round.report === "refused") return `refused: ${round.reason ?? "the status branch is not trusted"}`;
  if (!round.result) return "nothing rendered yet on the status branch";
  return `${syncLine(round.result)}; report ${round.report}`;
}
