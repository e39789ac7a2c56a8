import { loadFleetWithBuilds } from "../../builds/load-with-builds.js";
import { formatValidationReport, validationReportJson } from "../../load/summary.js";
import { readDirectoryTree } from "../../source/read-directory.js";
import { CliError, ExitCode, type ExitCodeValue } from "../exit-codes.js";
import type { CommandOutput } from "../output.js";

export interface ValidateOptions {
  readonly format: "text" | "json";
  readonly strict: boolean;
}

export async function runValidate(
  dir: string,
  options: ValidateOptions,
  output: CommandOutput,
): Promise<ExitCodeValue> {
  const tree = await readDirectoryTree(dir).catch((error: unknown) => {
    const reason = error instanceof Error && "code" in error ? String(error.code) : String(error);
    throw new CliError(`cannot read fleet repo ${dir}: ${reason}`);
  });
  const result = await loadFleetWithBuilds(tree);
  output.out(options.format === "json" ? validationReportJson(result) : formatValidationReport(dir, result));
  const failed = result.model === undefined || (options.strict && result.problems.length > 0);
  return failed ? ExitCode.Failed : ExitCode.Ok;
}
