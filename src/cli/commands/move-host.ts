import type { Command } from "commander";
import type { MoveHostOptions } from "../actions/move-host.js";
import type { ExitCodeValue } from "../exit-codes.js";
import type { CommandOutput } from "../output.js";

/** `gitfleet move-host --from HOST --to HOST`: every control plane of a host moved, each restored from its off-host backup. */
export function registerMoveHost(
  program: Command,
  output: CommandOutput,
  setExit: (code: ExitCodeValue) => void,
): void {
  program
    .command("move-host")
    .description(
      "move every hosted control plane a host runs to another host in one change (a lost host, or a planned move): each Cluster's controlPlane.host edited and an EtcdRestore of backup: latest added, so each comes back from its newest off-host backup with its data, CAs and service-account key; committed, or printed as a patch",
    )
    .requiredOption("--from <host>", "the host whose control planes move")
    .requiredOption("--to <host>", "the host they move to (a Cluster of the fleet)")
    .option("--repo <dir>", "the fleet repo's work tree", ".")
    .option("--patch", "print the change as a patch (git apply) instead of committing it")
    .addHelpText(
      "after",
      "\nExit codes: 0 committed or printed, 1 nothing changed (why is printed: a cluster that cannot come back from an off-host backup, an invalid repo), 64 a usage error.",
    )
    .action(async (options: MoveHostOptions) => {
      setExit(await (await import("../actions/move-host.js")).runMoveHost(options, output));
    });
}
