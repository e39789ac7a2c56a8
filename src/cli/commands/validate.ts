import type { Command } from "commander";
import { Option } from "commander";
import type { ValidateOptions } from "../actions/validate.js";
import { type BuildFlags, configureBuildsFrom, withBuildOptions } from "../build-flags.js";
import type { ExitCodeValue } from "../exit-codes.js";
import type { CommandOutput } from "../output.js";

/** `gitfleet validate [DIR]`: load and check a fleet repo checkout; exit 0 when valid, 1 when not. */
export function registerValidate(
  program: Command,
  output: CommandOutput,
  setExit: (code: ExitCodeValue) => void,
): void {
  const command = program.command("validate");
  withBuildOptions(command)
    .description(
      "check a fleet repo: schemas, manifests and cross-file rules, with file:line:column for every problem",
    )
    .argument("[dir]", "the fleet repo directory", ".")
    .addOption(
      new Option("-o, --format <format>", "output format").choices(["text", "json", "yaml"]).default("text"),
    )
    .option("--strict", "treat warnings as errors", false)
    .action(async (dir: string, options: ValidateOptions & BuildFlags) => {
      configureBuildsFrom(options);
      setExit(await (await import("../actions/validate.js")).runValidate(dir, options, output));
    });
}
