import { readFileSync, writeFileSync } from "node:fs";
import { loadFleetWithBuilds } from "../../builds/load-with-builds.js";
import { formatValidationReport } from "../../load/summary.js";
import { simulatedKubeconfig } from "../../sim/kubeconfig.js";
import { type SimulatedMember, startMember } from "../../sim/member-server.js";
import {
  DEFAULT_PROFILE,
  parseSimulationProfile,
  type SimulationProfile,
} from "../../sim/simulation-profile.js";
import { readDirectoryTree } from "../../source/read-directory.js";
import { CliError, ExitCode, type ExitCodeValue } from "../exit-codes.js";
import type { CommandOutput } from "../output.js";

export interface SimulateOptions {
  readonly fromRepo: string;
  readonly cluster: string[];
  readonly kubeconfigOut: string;
  readonly profile?: string;
}

function readProfile(file: string): SimulationProfile {
  try {
    return parseSimulationProfile(readFileSync(file, "utf8"), file);
  } catch (error) {
    throw new CliError(error instanceof Error ? error.message : String(error));
  }
}

export async function runSimulate(options: SimulateOptions, output: CommandOutput): Promise<ExitCodeValue> {
  const tree = await readDirectoryTree(options.fromRepo).catch((error: unknown) => {
    throw new CliError(
      `cannot read fleet repo ${options.fromRepo}: ${error instanceof Error ? error.message : String(error)}`,
    );
  });
  const loaded = await loadFleetWithBuilds(tree);
  if (!loaded.model) {
    output.err(formatValidationReport(options.fromRepo, loaded));
    return ExitCode.Failed;
  }
  const known = loaded.model.clusters.map((c) => c.metadata.name);
  const unknown = options.cluster.filter((name) => !known.includes(name));
  if (unknown.length > 0)
    throw new CliError(
      `unknown cluster ${unknown.join(", ")}: ${options.fromRepo} defines ${known.join(", ")}`,
      ExitCode.Usage,
    );
  const names = options.cluster.length > 0 ? options.cluster : known;
  const profile = options.profile ? readProfile(options.profile) : DEFAULT_PROFILE;
  const members: SimulatedMember[] = [];
  for (const name of names)
    members.push(
      await startMember({
        name,
        world: {
          nodePools: profile.poolsFor(name),
          readyDelayMs: profile.readyDelayMs,
          ...(profile.hpaPeriodMs ? { hpaPeriodMs: profile.hpaPeriodMs } : {}),
          workloads: profile.workloads,
        },
      }),
    );
  writeFileSync(options.kubeconfigOut, simulatedKubeconfig(members), { mode: 0o600 });
  for (const member of members) output.out(`${member.name.padEnd(24)} ${member.url}\n`);
  output.out(`kubeconfig: ${options.kubeconfigOut} (a context per cluster)\n`);
  await new Promise<void>((resolve) => {
    process.once("SIGTERM", resolve);
    process.once("SIGINT", resolve);
  });
  await Promise.all(members.map((member) => member.close()));
  return ExitCode.Ok;
}
