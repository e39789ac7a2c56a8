import type { Command } from "commander";
import { Option } from "commander";
import { loadFleet } from "../../model/load-fleet.js";
import { formatValidationReport, validationReportJson } from "../../model/summary.js";
import { readDirectoryTree } from "../../source/read-directory.js";
import { CliError, ExitCode, type ExitCodeValue } from "../exit-codes.js";
import type { CommandOutput } from "../output.js";

interface ValidateOptions {
  readonly format: "text" | "json";
  readonly strict: boolean;
}

/** `gitfleet validate [DIR]`: load and check a fleet repo checkout; exit 0 when valid, 1 when not. */
export function registerValidate(
  program: Command,
  output: CommandOutput,
  setExit: (code: ExitCodeValue) => void,
): void {
  program
    .command("validate")
    .description(
      "check a fleet repo: schemas, manifests and cross-file rules, with file:line:column for every problem",
    )
    .argument("[dir]", "the fleet repo directory", ".")
    .addOption(new Option("--format <format>", "output format").choices(["text", "json"]).default("text"))
    .option("--strict", "treat warnings as errors", false)
    .action(async (dir: string, options: ValidateOptions) => {
      setExit(await runValidate(dir, options, output));
    });
}

async function runValidate(
  dir: string,
  options: ValidateOptions,
  output: CommandOutput,
): Promise<ExitCodeValue> {
  const tree = await readDirectoryTree(dir).catch((error: unknown) => {
    const reason = error instanceof Error && "code" in error ? String(error.code) : String(error);
    throw new CliError(`cannot read fleet repo ${dir}: ${reason}`);
  });
  const result = loadFleet(tree);
  output.out(options.format === "json" ? validationReportJson(result) : formatValidationReport(dir, result));
  const failed = result.model === undefined || (options.strict && result.problems.length > 0);
  return failed ? ExitCode.Failed : ExitCode.Ok;
}
