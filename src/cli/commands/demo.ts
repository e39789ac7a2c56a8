import { Command } from "commander";
import { type BuildFlags, configureBuildsFrom, withBuildOptions } from "../build-flags.js";
import type { ExitCodeValue } from "../exit-codes.js";
import type { CommandOutput } from "../output.js";

/** `gitfleet demo`: the example fleet in a Git repository, simulated members, and the controller. */
export function registerDemo(
  program: Command,
  output: CommandOutput,
  setExit: (code: ExitCodeValue) => void,
): void {
  program.addCommand(
    withBuildOptions(new Command("demo"))
      .description(
        "run gitfleet end to end on this machine: the example fleet in a temporary Git repository, a simulated member per cluster, and the controller writing the status branch and syncing the members",
      )
      .option("--interval <seconds>", "how often the demo repository is reconciled", "5")
      .option(
        "--listen <host:port>",
        "where the dashboard, JSON API and /metrics listen (a busy port falls back to a free one)",
        "127.0.0.1:8080",
      )
      .action(async (options: { interval: string; listen: string } & BuildFlags) => {
        configureBuildsFrom(options);
        setExit(
          await (await import("../actions/demo.js")).runDemo(
            output,
            Number(options.interval) * 1000,
            options.listen,
          ),
        );
      }),
  );
}
