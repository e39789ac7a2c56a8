import { readSchedulingProblem } from "../../schedule/read-problem.js";
import { scheduleWorkload } from "../../schedule/schedule.js";
import { CliError, ExitCode, type ExitCodeValue } from "../exit-codes.js";
import type { CommandOutput } from "../output.js";

/** Reads all of stdin as bytes. */
export type ReadInput = () => Promise<Uint8Array>;

/** Schedules the problem on stdin and prints the decision: 0 when every replica is placed, 3 when some are not. */
export async function runSchedule(io: {
  readonly output: CommandOutput;
  readonly readInput: ReadInput;
}): Promise<ExitCodeValue> {
  const parsed = readSchedulingProblem("<stdin>", await io.readInput());
  if (!parsed.ok) throw new CliError(`invalid scheduling problem:\n${parsed.errors.join("\n")}`);
  const result = scheduleWorkload(parsed.problem);
  if (!result.ok) throw new CliError(`scheduling failed: ${result.error}`);
  io.output.out(`${JSON.stringify(result.decision, null, 2)}\n`);
  return result.decision.unschedulable > 0 ? ExitCode.Unschedulable : ExitCode.Ok;
}
