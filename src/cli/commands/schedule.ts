import type { Command } from "commander";
import { readSchedulingProblem } from "../../schedule/read-problem.js";
import { scheduleWorkload } from "../../schedule/schedule.js";
import { CliError, ExitCode, type ExitCodeValue } from "../exit-codes.js";
import type { CommandOutput } from "../output.js";

/** Reads all of stdin as bytes. */
export type ReadInput = () => Promise<Uint8Array>;

/**
 * `gitfleet schedule`: one JSON scheduling problem on stdin, the decision as JSON on stdout. Exit 0
 * when every replica is placed, 3 when some are unschedulable, 1 on invalid input.
 */
export function registerSchedule(
  program: Command,
  io: { readonly output: CommandOutput; readonly readInput: ReadInput },
  setExit: (code: ExitCodeValue) => void,
): void {
  program
    .command("schedule")
    .description(
      "schedule one workload: read a scheduling problem (JSON) on stdin, print the decision (JSON)",
    )
    .addHelpText(
      "after",
      `
Input: {"workload": {...}, "replicas": 12, "placement": {...Placement spec...},
        "clusters": [{"name": "a", "labels": {}, "region": "", "taints": [], "ready": true,
                      "availableReplicas": 10, "currentReplicas": 2, "nodes": [...]}]}
Output: {"clusters": {"a": 7, "b": 5}, "unschedulable": 0, "diagnosis": {...}}
Exit codes: 0 all placed, 3 some replicas unschedulable, 1 invalid input.`,
    )
    .action(async () => {
      const parsed = readSchedulingProblem("<stdin>", await io.readInput());
      if (!parsed.ok) throw new CliError(`invalid scheduling problem:\n${parsed.errors.join("\n")}`);
      const result = scheduleWorkload(parsed.problem);
      if (!result.ok) throw new CliError(`scheduling failed: ${result.error}`);
      io.output.out(`${JSON.stringify(result.decision, null, 2)}\n`);
      setExit(result.decision.unschedulable > 0 ? ExitCode.Unschedulable : ExitCode.Ok);
    });
}
