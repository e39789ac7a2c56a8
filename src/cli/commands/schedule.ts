import type { Command } from "commander";
import type { ReadInput } from "../actions/schedule.js";
import type { ExitCodeValue } from "../exit-codes.js";
import type { CommandOutput } from "../output.js";

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
      setExit(await (await import("../actions/schedule.js")).runSchedule(io));
    });
}
