import { explainInvalidDns1123Label } from "../../apimachinery/names.js";
import { loadFleetWithBuilds } from "../../builds/load-with-builds.js";
import { formatValidationReport } from "../../load/summary.js";
import type { FileTree } from "../../model/file-tree.js";
import { planHostMove } from "../../plan/host-moves.js";
import { CliError, ExitCode, type ExitCodeValue } from "../exit-codes.js";
import { deliverFleetChange } from "../fleet-change.js";
import type { CommandOutput } from "../output.js";
import { loadValidFleet } from "../read-fleet.js";

export interface MoveHostOptions {
  readonly repo: string;
  readonly from: string;
  readonly to: string;
  readonly patch?: boolean;
}

/**
 * `gitfleet move-host --from HOST --to HOST`: one change that moves every control plane a host runs
 * to another host, each restored there from its newest off-host backup (the Cluster's
 * controlPlane.host edited, an EtcdRestore of backup: latest added), validated before it is committed
 * or printed as a patch. Nothing is written when any of them could not come back that way.
 */
export async function runMoveHost(options: MoveHostOptions, output: CommandOutput): Promise<ExitCodeValue> {
  for (const [flag, name] of [
    ["--from", options.from],
    ["--to", options.to],
  ] as const) {
    const why = explainInvalidDns1123Label(name);
    if (why) throw new CliError(`${flag} ${JSON.stringify(name)}: ${why}`, ExitCode.Usage);
  }
  const { tree, model } = await loadValidFleet(
    options.repo,
    output,
    `moving ${options.from}'s control planes`,
  );
  let move: ReturnType<typeof planHostMove>;
  try {
    move = planHostMove(model, tree, options.from, options.to);
  } catch (error) {
    throw new CliError(error instanceof Error ? error.message : String(error));
  }
  const moved = new Map<string, Uint8Array>(tree);
  for (const [path, text] of move.files) moved.set(path, new TextEncoder().encode(text));
  const check = await loadFleetWithBuilds(moved as FileTree);
  if (!check.model) {
    output.err(formatValidationReport(options.repo, check));
    throw new CliError(`the fleet repo with the move is invalid: nothing was changed`);
  }
  const clusters = move.moved.map((m) => m.cluster);
  await deliverFleetChange(
    options.repo,
    move.files,
    `Move the control planes of ${options.from} to ${options.to}: ${clusters.join(", ")}\n\nEach is restored on ${options.to} from its newest off-host backup, with its CAs and service-account key:\n${move.moved.map((m) => `- ${m.cluster}: EtcdRestore ${m.restore} (${m.file})`).join("\n")}`,
    options.patch ? "patch" : "commit",
    output,
  );
  return ExitCode.Ok;
}
