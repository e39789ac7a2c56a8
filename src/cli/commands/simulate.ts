import { Command } from "commander";
import type { SimulateOptions } from "../actions/simulate.js";
import { type BuildFlags, configureBuildsFrom, withBuildOptions } from "../build-flags.js";
import type { ExitCodeValue } from "../exit-codes.js";
import type { CommandOutput } from "../output.js";

/** `gitfleet simulate`: one simulated member per Cluster of a fleet repo, until interrupted. */
export function registerSimulate(
  program: Command,
  output: CommandOutput,
  setExit: (code: ExitCodeValue) => void,
): void {
  program.addCommand(
    withBuildOptions(new Command("simulate"))
      .description(
        "start a simulated member cluster (the Kubernetes API on 127.0.0.1) for each Cluster of a fleet repo, and write a kubeconfig with a context per cluster",
      )
      .requiredOption("--from-repo <dir>", "the fleet repo whose clusters/ to simulate")
      .option(
        "--cluster <name>",
        "simulate only this cluster (repeatable)",
        (value: string, all: string[]) => [...all, value],
        [],
      )
      .requiredOption("--kubeconfig-out <file>", "where to write the kubeconfig")
      .option(
        "--profile <file>",
        "a simulation profile: node pools per cluster (default: 3 nodes of 4 CPUs and 16Gi each)",
      )
      .addHelpText(
        "after",
        "\nRuns until interrupted (Ctrl-C or SIGTERM). Several processes may each run a subset of the clusters.",
      )
      .action(async (options: SimulateOptions & BuildFlags) => {
        configureBuildsFrom(options);
        setExit(await (await import("../actions/simulate.js")).runSimulate(options, output));
      }),
  );
}
