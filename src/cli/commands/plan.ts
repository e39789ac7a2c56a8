import { Command, Option } from "commander";
import { standingScaling } from "../../autoscale/autoscaling-round.js";
import { AUTOSCALING_DIRECTORY, readAutoscalingStatus } from "../../controller/autoscaling-files.js";
import { type FleetObservations, noObservations } from "../../failover/observations.js";
import { readTreeAtRevision } from "../../git/read-tree.js";
import type { FileTree } from "../../model/file-tree.js";
import { loadFleet } from "../../model/load-fleet.js";
import { formatValidationReport } from "../../model/summary.js";
import type { FleetModel } from "../../model/types.js";
import { formatPlanMarkdown, formatPlanText } from "../../plan/format-plan.js";
import { planChange } from "../../plan/plan.js";
import { replicasUnderAutoscalers } from "../../plan/replicas-under-autoscalers.js";
import { restoreState } from "../../reconcile/restore-state.js";
import { SOURCE_STATUS_PATH } from "../../reconcile/status-files.js";
import { formatRenderError } from "../../render/format-render.js";
import { type RenderResult, renderFleet } from "../../render/render-fleet.js";
import { pruneSettings } from "../../sync/desired-objects.js";
import { splitObserved } from "../../sync/observed-status.js";
import { CliError, ExitCode, type ExitCodeValue } from "../exit-codes.js";
import type { CommandOutput } from "../output.js";
import { planMigrations } from "../plan-migrations.js";

interface PlanOptions {
  readonly repo: string;
  readonly base: string;
  readonly head: string;
  readonly format: "text" | "markdown" | "json";
  readonly statusBranch: string;
  readonly kubeconfig?: string;
}

const EMPTY: RenderResult = { objects: [], decisions: [], errors: [] };

/** `gitfleet plan`: what every cluster gets from going from BASE to HEAD; exit 0 no changes, 2 changes, 1 error. */
export function registerPlan(
  program: Command,
  output: CommandOutput,
  setExit: (code: ExitCodeValue) => void,
): void {
  program.addCommand(
    new Command("plan")
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
      .addOption(
        new Option("--format <format>", "output format")
          .choices(["text", "markdown", "json"])
          .default("text"),
      )
      .addHelpText(
        "after",
        "\nExit codes: 0 no changes, 2 changes, 1 the head revision is invalid or cannot be read.",
      )
      .action(async (options: PlanOptions) => {
        setExit(await runPlan(options, output));
      }),
  );
}

async function runPlan(options: PlanOptions, output: CommandOutput): Promise<ExitCodeValue> {
  const read = (rev: string) =>
    readTreeAtRevision(options.repo, rev).catch((error: unknown) => {
      throw new CliError(
        `cannot read ${options.repo} at ${rev}: ${error instanceof Error ? error.message : String(error)}`,
      );
    });
  const [baseTree, headTree] = await Promise.all([read(options.base), read(options.head)]);
  // The head must be valid: a plan of an invalid change would promise what cannot be applied.
  const head = loadFleet(headTree);
  if (!head.model) {
    output.err(formatValidationReport(`${options.repo}@${options.head}`, head));
    return ExitCode.Failed;
  }
  // The base is what the clusters run now: the head is rendered on top of it, so cordoned and tainted
  // clusters keep what they have and dynamic division stays steady, as the controller will do.
  const base = loadFleet(baseTree);
  if (!base.model)
    output.err(`gitfleet: the base revision ${options.base} is invalid; planning against an empty fleet\n`);
  const statusTree = await readTreeAtRevision(options.repo, options.statusBranch).catch(() => undefined);
  const running = base.model && statusTree ? statusRender(statusTree, baseTree, base.model) : undefined;
  // Totals the autoscalers decided stand: a plan shows the change on top of what really runs.
  const scaled = (model: FleetModel, decisions: RenderResult["decisions"]) =>
    statusTree ? autoscaledObservations(statusTree, model, decisions) : undefined;
  const baseRender = base.model
    ? renderFleet(base.model, running, undefined, scaled(base.model, running?.decisions ?? []))
    : EMPTY;
  const headRender = renderFleet(head.model, baseRender, undefined, scaled(head.model, baseRender.decisions));
  if (headRender.errors.length > 0) {
    output.err(`${headRender.errors.map(formatRenderError).join("\n")}\n`);
    return ExitCode.Failed;
  }
  const objectsPlan = planChange(baseRender, headRender, pruneSettings(head.model, headRender.decisions));
  const migrations = await planMigrations({
    base: base.model,
    head: head.model,
    objects: headRender.objects,
    statusTree,
    ...(options.kubeconfig ? { kubeconfig: options.kubeconfig } : {}),
  }).catch((error: unknown) => {
    throw new CliError(
      `cannot compare the migration's objects with what runs: ${error instanceof Error ? error.message : String(error)}`,
    );
  });
  const warnings = replicasUnderAutoscalers(base.model, head.model, headTree);
  const planned = warnings.length > 0 ? { ...objectsPlan, warnings } : objectsPlan;
  const plan = migrations
    ? { ...planned, migrations, changed: planned.changed || migrations.batches.length > 0 }
    : planned;
  const text =
    options.format === "json"
      ? `${JSON.stringify(plan, null, 2)}\n`
      : options.format === "markdown"
        ? formatPlanMarkdown(plan)
        : formatPlanText(plan);
  output.out(text);
  return plan.changed ? ExitCode.Changes : ExitCode.Ok;
}

// The autoscalers' standing totals and distributions, from status/autoscaling/.
function autoscaledObservations(
  tree: FileTree,
  model: FleetModel,
  decisions: RenderResult["decisions"],
): FleetObservations {
  const files = new Map<string, string>();
  for (const [path, bytes] of tree)
    if (path.startsWith(AUTOSCALING_DIRECTORY)) files.set(path, new TextDecoder().decode(bytes));
  const now = Date.now();
  const standing = standingScaling(model, decisions, readAutoscalingStatus(model, files, now));
  return { ...noObservations(now), ...standing };
}

// What the status branch says the clusters run, when the repository has one: cordoned clusters keep
// their replicas, failover's moves and kept replicas hold — so the plan is exactly what will happen.
function statusRender(tree: FileTree, baseTree: FileTree, model: FleetModel): RenderResult | undefined {
  const files = new Map<string, string>();
  for (const [path, bytes] of tree)
    if (path.startsWith("rendered/") || path.startsWith("status/apps/") || path === SOURCE_STATUS_PATH)
      files.set(path, splitObserved(new TextDecoder().decode(bytes)).base);
  return restoreState(files, baseTree, model).render;
}
