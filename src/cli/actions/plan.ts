import { formatPlanMarkdown, formatPlanText } from "../../plan/format-plan.js";
import { planRevisions, RevisionError } from "../../revisions/plan-revisions.js";
import { CliError, ExitCode, type ExitCodeValue } from "../exit-codes.js";
import type { CommandOutput } from "../output.js";
import { readSecretDigestKey } from "../secret-digest-key.js";

export interface PlanOptions {
  readonly repo: string;
  readonly base: string;
  readonly head: string;
  readonly format: "text" | "markdown" | "json";
  readonly statusBranch: string;
  readonly kubeconfig?: string;
  readonly kubeconfigDir?: string;
  readonly secretDigestKeyFile?: string;
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
  if ("error" in outcome) {
    output.err(outcome.error.endsWith("\n") ? outcome.error : `${outcome.error}\n`);
    return ExitCode.Failed;
  }
  const { plan } = outcome;
  const text =
    options.format === "json"
      ? `${JSON.stringify(plan, null, 2)}\n`
      : options.format === "markdown"
        ? formatPlanMarkdown(plan)
        : formatPlanText(plan);
  output.out(text);
  return plan.changed ? ExitCode.Changes : ExitCode.Ok;
}
