import type { Command } from "commander";
import type { CodeownersOptions } from "../actions/codeowners.js";
import type { ExitCodeValue } from "../exit-codes.js";
import type { CommandOutput } from "../output.js";

/** `gitfleet codeowners [DIR]`: the CODEOWNERS file the fleet's teams give. */
export function registerCodeowners(
  program: Command,
  output: CommandOutput,
  setExit: (code: ExitCodeValue) => void,
): void {
  program
    .command("codeowners")
    .description(
      "write the CODEOWNERS file the fleet's teams give (teams/*.yaml, fleet.yaml platformOwners): each team reviews its files, the platform team the rest",
    )
    .argument("[dir]", "the fleet repo directory", ".")
    .option("--output <file>", "write it to this file (e.g. .github/CODEOWNERS) instead of printing it")
    .option("--check <file>", "exit 1 when this file differs from what the teams give (for CI)")
    .action(async (dir: string, options: CodeownersOptions) => {
      setExit(await (await import("../actions/codeowners.js")).runCodeowners(dir, options, output));
    });
}
