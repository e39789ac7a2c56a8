import { mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname } from "node:path";
import { loadFleetWithBuilds } from "../../builds/load-with-builds.js";
import { formatValidationReport } from "../../load/summary.js";
import { codeowners } from "../../model/codeowners.js";
import { readDirectoryTree } from "../../source/read-directory.js";
import { CliError, ExitCode, type ExitCodeValue } from "../exit-codes.js";
import type { CommandOutput } from "../output.js";

export interface CodeownersOptions {
  readonly output?: string;
  readonly check?: string;
}

/** Prints, writes or checks the CODEOWNERS file of a valid fleet repo. */
export async function runCodeowners(
  dir: string,
  options: CodeownersOptions,
  output: CommandOutput,
): Promise<ExitCodeValue> {
  const tree = await readDirectoryTree(dir).catch((error: unknown) => {
    const reason = error instanceof Error && "code" in error ? String(error.code) : String(error);
    throw new CliError(`cannot read fleet repo ${dir}: ${reason}`);
  });
  const result = await loadFleetWithBuilds(tree);
  if (!result.model) {
    output.err(formatValidationReport(dir, result));
    return ExitCode.Failed;
  }
  const text = codeowners(result.model);
  if (options.check !== undefined) {
    const current = await readFile(options.check, "utf8").catch(() => undefined);
    if (current === text) return ExitCode.Ok;
    output.err(
      `${options.check} ${current === undefined ? "is missing" : "differs from what the teams give"}: run gitfleet codeowners --output ${options.check}\n`,
    );
    return ExitCode.Failed;
  }
  if (options.output !== undefined) await writeCodeowners(options.output, text);
  else output.out(text);
  return ExitCode.Ok;
}

// The file, its directory made when missing (.github/ in a fresh repository).
async function writeCodeowners(file: string, text: string): Promise<void> {
  try {
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, text);
  } catch (error) {
    const reason = error instanceof Error && "code" in error ? String(error.code) : "cannot write";
    throw new CliError(`cannot write ${file}: ${reason}`);
  }
}
