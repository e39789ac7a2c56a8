import { Command, Option } from "commander";
import type { StatusOptions } from "../actions/migrate.js";
import type { ExitCodeValue } from "../exit-codes.js";
import type { CommandOutput } from "../output.js";

/** `gitfleet migrate status [NAME]`: the batches of each Migration as the status branch records them. */
export function registerMigrate(
  program: Command,
  output: CommandOutput,
  setExit: (code: ExitCodeValue) => void,
): void {
  const migrate = new Command("migrate").description("review-gated migrations of running apps");
  migrate.addCommand(
    new Command("status")
      .description("print each batch's state, since when, why, and its apps' health per cluster")
      .argument("[name]", "one Migration (default: all)")
      .requiredOption("--repo <dir>", "the fleet repo (a work tree or a bare repository)")
      .option("--status-branch <branch>", "the branch gitfleet writes", "gitfleet/status")
      .addOption(
        new Option("-o, --format <format>", "output format")
          .choices(["text", "json", "yaml"])
          .default("text"),
      )
      .addHelpText("after", "\nExit codes: 0 printed, 1 no such migration or no status branch.")
      .action(async (name: string | undefined, options: StatusOptions) => {
        setExit(await (await import("../actions/migrate.js")).runStatus(name, options, output));
      }),
  );
  program.addCommand(migrate);
}
