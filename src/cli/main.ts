import { Command, CommanderError } from "commander";
import type { ReadInput } from "./actions/schedule.js";
import { registerAgent } from "./commands/agent.js";
import { registerBackup } from "./commands/backup.js";
import { registerCodeowners } from "./commands/codeowners.js";
import { registerCompletion } from "./commands/completion.js";
import { registerDemo } from "./commands/demo.js";
import { registerImport } from "./commands/import.js";
import { registerJoin } from "./commands/join.js";
import { registerMigrate } from "./commands/migrate.js";
import { registerMoveHost } from "./commands/move-host.js";
import { registerPlan } from "./commands/plan.js";
import { registerReconcile } from "./commands/reconcile.js";
import { registerRender } from "./commands/render.js";
import { registerSchedule } from "./commands/schedule.js";
import { registerSimulate } from "./commands/simulate.js";
import { registerStatus } from "./commands/status.js";
import { registerValidate } from "./commands/validate.js";
import { CliError, ExitCode, type ExitCodeValue } from "./exit-codes.js";
import { addHelpExamples } from "./help-examples.js";
import { type CommandOutput, processOutput } from "./output.js";

/** The CLI version, kept equal to package.json's by a test. */
export const VERSION = "0.1.0";

/** Builds the command tree. Each command lives in commands/<name>.ts and registers itself here. */
export function buildProgram(
  output: CommandOutput,
  setExit: (code: ExitCodeValue) => void,
  readInput: ReadInput = readStdin,
): Command {
  const program = new Command("gitfleet")
    .description("Multi-cluster Kubernetes federation driven by a Git repository")
    .version(VERSION)
    .showHelpAfterError()
    .exitOverride()
    .configureOutput({ writeOut: output.out, writeErr: output.err });
  registerValidate(program, output, setExit);
  registerSchedule(program, { output, readInput }, setExit);
  registerRender(program, output, setExit);
  registerPlan(program, output, setExit);
  registerReconcile(program, output, setExit);
  registerAgent(program, output, setExit);
  registerMigrate(program, output, setExit);
  registerJoin(program, output, setExit);
  registerImport(program, output, setExit);
  registerSimulate(program, output, setExit);
  registerStatus(program, output, setExit);
  registerDemo(program, output, setExit);
  registerCodeowners(program, output, setExit);
  registerBackup(program, output, setExit);
  registerMoveHost(program, output, setExit);
  registerCompletion(program, output);
  // Every command's usage errors reach the one error boundary (exit 64), not process.exit(1).
  const commands = descendants(program);
  for (const command of commands)
    command.exitOverride().configureOutput({ writeOut: output.out, writeErr: output.err });
  addHelpExamples(commands);
  return program;
}

/** Every command below the program, depth first. */
export function descendants(command: Command): Command[] {
  return command.commands.flatMap((sub) => [sub, ...descendants(sub)]);
}

/**
 * Runs the CLI and returns the exit code. This is the single error boundary: usage errors exit 64,
 * CliErrors their own code, anything else is a bug and exits 70 with its stack.
 */
export async function runCli(
  argv: readonly string[],
  output: CommandOutput = processOutput,
): Promise<ExitCodeValue> {
  let exitCode: ExitCodeValue = ExitCode.Ok;
  const program = buildProgram(output, (code) => {
    exitCode = code;
  });
  try {
    await program.parseAsync([...argv], { from: "user" });
    return exitCode;
  } catch (error) {
    return exitCodeFor(error, output);
  }
}

function exitCodeFor(error: unknown, output: CommandOutput): ExitCodeValue {
  if (error instanceof CommanderError) {
    const helpOrVersion = ["commander.helpDisplayed", "commander.version", "commander.help"].includes(
      error.code,
    );
    return helpOrVersion || error.exitCode === 0 ? ExitCode.Ok : ExitCode.Usage;
  }
  if (error instanceof CliError) {
    output.err(`gitfleet: ${error.message}\n`);
    return error.exitCode;
  }
  output.err(
    `gitfleet: internal error (please report): ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  return ExitCode.Internal;
}

async function readStdin(): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of process.stdin)
    chunks.push(typeof chunk === "string" ? new TextEncoder().encode(chunk) : chunk);
  return Buffer.concat(chunks);
}
