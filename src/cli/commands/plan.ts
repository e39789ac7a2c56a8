import { Command, Option } from "commander";
import type { PlanOptions } from "../actions/plan.js";
import { type BuildFlags, configureBuildsFrom, withBuildOptions } from "../build-flags.js";
import type { ExitCodeValue } from "../exit-codes.js";
import { withForgeOptions } from "../forge-flags.js";
import type { CommandOutput } from "../output.js";
import { SECRET_DIGEST_KEY_ENV } from "../secret-digest-key.js";

/** `gitfleet plan`: what every cluster gets from going from BASE to HEAD; exit 0 no changes, 2 changes, 3 unplaced replicas under a Fail policy, 4 invalid head, 5 over budget, 1 error. */
export function registerPlan(
  program: Command,
  output: CommandOutput,
  setExit: (code: ExitCodeValue) => void,
): void {
  program.addCommand(
    withBuildOptions(withForgeOptions(new Command("plan")))
      .description(
        "show exactly what each cluster gets from a change: replicas, objects added, changed and removed, with diffs",
      )
      .requiredOption("--repo <dir>", "the fleet repo (a work tree or a bare repository)")
      .requiredOption("--base <rev>", "the revision the clusters run now (branch, tag or commit)")
      .requiredOption("--head <rev>", "the proposed revision")
      .option(
        "--status-branch <branch>",
        "where gitfleet records what the clusters run (failover moves, cordoned clusters' replicas): the base is planned on top of it when it exists",
        "gitfleet/status",
      )
      .option(
        "--kubeconfig <file>",
        "compare the objects of migration batches the change starts with what runs in the clusters (read only; a context per member, as for reconcile)",
      )
      .option(
        "--kubeconfig-dir <dir>",
        "with --kubeconfig: the directory whose files Clusters may name in spec.connection.kubeconfigFile",
      )
      .option(
        "--secret-digest-key-file <file>",
        `the fleet's key for Secrets' value digests (default: ${SECRET_DIGEST_KEY_ENV}, else a key for this run only; a plan shows only which keys of a Secret changed either way)`,
      )
      .option(
        "--post",
        "also put the plan on the pull request as one comment (edited in place on every push) and a commit status on the head: failure when the head is invalid or a prune is blocked",
      )
      .option(
        "--pull-request <number>",
        "with --post: the pull (merge) request (default: from CI's environment: GITHUB_REF refs/pull/N/…, CI_MERGE_REQUEST_IID)",
      )
      .option("--status-context <name>", "with --post: the commit status's name", "gitfleet/plan")
      .option("--details-url <url>", "with --post: where the commit status links (the CI job, the dashboard)")
      .addOption(
        new Option("-o, --format <format>", "output format")
          .choices(["text", "markdown", "json", "yaml"])
          .default("text"),
      )
      .addHelpText(
        "after",
        "\nExit codes: 0 no changes, 2 changes, 3 replicas fit nowhere and fleet.yaml spec.plan.unplacedReplicas is Fail, 4 the head revision is invalid, 5 a prune is over the deletion budget, 1 a revision cannot be read, 64 a usage error.",
      )
      .action(async (options: PlanOptions & BuildFlags) => {
        configureBuildsFrom(options);
        setExit(await (await import("../actions/plan.js")).runPlan(options, output));
      }),
  );
}
