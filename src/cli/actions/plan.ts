import { upsertPlanComment } from "../../forge/plan-comment.js";
import { resolveRevision } from "../../git/read-tree.js";
import { remoteUrl } from "../../git/remote-url.js";
import { escapeHtml } from "../../model/one-line.js";
import { formatPlanMarkdown, formatPlanText } from "../../plan/format-plan.js";
import { stillUnplaced } from "../../plan/plan.js";
import { formatInvalidHeadMarkdown, planVerdict } from "../../plan/plan-verdict.js";
import { type PlanOutcome, planRevisions, RevisionError } from "../../revisions/plan-revisions.js";
import { CliError, ExitCode, type ExitCodeValue } from "../exit-codes.js";
import { ciPullRequest, type ForgeFlags, forgeFromFlags } from "../forge-flags.js";
import { type CommandOutput, structured } from "../output.js";
import { readSecretDigestKey } from "../secret-digest-key.js";

export interface PlanOptions extends ForgeFlags {
  readonly repo: string;
  readonly base: string;
  readonly head: string;
  readonly format: "text" | "markdown" | "json" | "yaml";
  readonly statusBranch: string;
  readonly kubeconfig?: string;
  readonly kubeconfigDir?: string;
  readonly secretDigestKeyFile?: string;
  readonly post?: boolean;
  readonly pullRequest?: string;
  readonly statusContext: string;
  readonly detailsUrl?: string;
}

export async function runPlan(options: PlanOptions, output: CommandOutput): Promise<ExitCodeValue> {
  const outcome = await planRevisions({
    repo: options.repo,
    base: options.base,
    head: options.head,
    statusBranch: options.statusBranch,
    ...(options.kubeconfig ? { kubeconfig: options.kubeconfig } : {}),
    ...(options.kubeconfigDir ? { kubeconfigDir: options.kubeconfigDir } : {}),
    secretDigestKey: (await readSecretDigestKey({ file: options.secretDigestKeyFile, env: process.env })).key,
  }).catch((error: unknown) => {
    if (error instanceof RevisionError) throw new CliError(error.message);
    throw error;
  });
  for (const note of outcome.notes) output.err(`gitfleet: ${note}\n`);
  if (options.post) await postPlan(options, outcome, output);
  if ("error" in outcome) {
    output.err(outcome.error.endsWith("\n") ? outcome.error : `${outcome.error}\n`);
    return ExitCode.InvalidHead;
  }
  const { plan } = outcome;
  const text =
    options.format === "json" || options.format === "yaml"
      ? structured(plan, options.format)
      : options.format === "markdown"
        ? formatPlanMarkdown(plan)
        : formatPlanText(plan);
  output.out(text);
  if (plan.clusters.some((cluster) => cluster.pruneBlocked)) return ExitCode.OverBudget;
  if (plan.unplacedPolicy === "Fail" && stillUnplaced(plan).length > 0) return ExitCode.Unschedulable;
  return plan.changed ? ExitCode.Changes : ExitCode.Ok;
}

// The plan on the pull request (one comment, edited in place) and the verdict as the head's status.
async function postPlan(options: PlanOptions, outcome: PlanOutcome, output: CommandOutput): Promise<void> {
  const pullRequest = options.pullRequest !== undefined ? Number(options.pullRequest) : ciPullRequest();
  if (pullRequest === undefined || !Number.isSafeInteger(pullRequest) || pullRequest < 1)
    throw new CliError(
      "--post needs the pull request: --pull-request N (or run in a pull request's CI job)",
      ExitCode.Usage,
    );
  if (options.detailsUrl !== undefined && !/^https?:\/\//.test(options.detailsUrl))
    throw new CliError("--details-url is an http(s) URL", ExitCode.Usage);
  const forge = forgeFromFlags(options, { ...optionalUrl(await remoteUrl(options.repo)) });
  const sha = await resolveRevision(options.repo, options.head).catch(() => {
    throw new CliError(`unknown revision ${JSON.stringify(options.head)}`);
  });
  const verdict = planVerdict(outcome);
  const markdown =
    "error" in outcome ? formatInvalidHeadMarkdown(sha, outcome.error) : formatPlanMarkdown(outcome.plan);
  try {
    const comment = await upsertPlanComment(
      forge,
      pullRequest,
      options.statusContext,
      `${markdown.trimEnd()}\n\n<sub>${escapeHtml(`${options.base} → ${sha.slice(0, 12)} · ${verdict.description}`)}</sub>\n`,
    );
    await forge.setStatus({
      sha,
      state: verdict.ok ? "success" : "failure",
      context: options.statusContext,
      description: verdict.description,
      ...(options.detailsUrl ? { targetUrl: options.detailsUrl } : {}),
    });
    output.err(
      `gitfleet: ${comment.created ? "commented" : "updated the comment"} on ${forge.repo}#${pullRequest}; status ${options.statusContext} ${verdict.ok ? "success" : "failure"} on ${sha.slice(0, 12)}\n`,
    );
  } catch (error) {
    throw new CliError(`cannot post the plan to ${forge.kind} ${forge.repo}: ${(error as Error).message}`);
  }
}

function optionalUrl(url: string | undefined): { repoUrl?: string } {
  return url === undefined ? {} : { repoUrl: url };
}
