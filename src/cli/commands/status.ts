import { Command, Option } from "commander";
import type { StatusOptions } from "../actions/status.js";
import type { ExitCodeValue } from "../exit-codes.js";
import { withGitAuthOptions } from "../git-auth.js";
import type { CommandOutput } from "../output.js";

/** `gitfleet status`: the dashboard's overview in the terminal, read from the status branch. */
export function registerStatus(
  program: Command,
  output: CommandOutput,
  setExit: (code: ExitCodeValue) => void,
): void {
  program.addCommand(
    withGitAuthOptions(new Command("status"))
      .description(
        "print the fleet from the status branch: clusters (health, capacity), apps (ready/desired replicas per cluster), worst first, and why anything is not Healthy",
      )
      .requiredOption(
        "--repo <path-or-url>",
        "the fleet repo: a local path (work tree or bare) or an http(s) URL",
      )
      .option("--branch <name>", "the source branch (its Cluster files name regions and providers)", "main")
      .option("--status-branch <name>", "the branch gitfleet writes", "gitfleet/status")
      .addOption(
        new Option("-o, --format <format>", "output format")
          .choices(["text", "json", "yaml"])
          .default("text"),
      )
      .option("--cache-dir <dir>", "for a URL: where the local cache repository lives")
      .option(
        "--below <version>",
        "list only the clusters whose members report a Kubernetes version older than this (e.g. v1.34.2, a CVE's fixed release); exit 2 when there are any",
      )
      .addHelpText(
        "after",
        "\nExit codes: 0 every cluster and app Healthy, 2 something is not Healthy (or still Progressing), 1 no status branch or an error.",
      )
      .action(async (options: StatusOptions) => {
        setExit(await (await import("../actions/status.js")).runStatus(options, output));
      }),
  );
}
