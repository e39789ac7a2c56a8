import { loadFleetWithBuilds } from "../../builds/load-with-builds.js";
import type { LoadResult } from "../../load/load-fleet.js";
import { formatValidationReport, validationReportJson } from "../../load/summary.js";
import type { FileTree } from "../../model/file-tree.js";
import { normalizeProblems } from "../../model/problem.js";
import { quotaProblems } from "../../plan/quota-check.js";
import { renderFleet } from "../../render/render-fleet.js";
import { readDirectoryTree } from "../../source/read-directory.js";
import { CliError, ExitCode, type ExitCodeValue } from "../exit-codes.js";
import { type CommandOutput, structured } from "../output.js";

// A fleet that loads is rendered once (no status: every cluster as its file says) to check its
// namespaces' quotas, as plan does.
function withQuotaProblems(result: LoadResult, tree: FileTree): LoadResult {
  if (!result.model || result.model.federatedResourceQuotas.length === 0) return result;
  const render = renderFleet(result.model);
  const over = quotaProblems(undefined, { model: result.model, render }, tree);
  if (over.length === 0) return result;
  return { ...result, model: undefined, problems: normalizeProblems([...result.problems, ...over]) };
}

export interface ValidateOptions {
  readonly format: "text" | "json" | "yaml";
  readonly strict: boolean;
}

export async function runValidate(
  dir: string,
  options: ValidateOptions,
  output: CommandOutput,
): Promise<ExitCodeValue> {
  const tree = await readDirectoryTree(dir).catch((error: unknown) => {
    const reason = error instanceof Error && "code" in error ? String(error.code) : String(error);
    throw new CliError(`cannot read fleet repo ${dir}: ${reason}`);
  });
  const result = withQuotaProblems(await loadFleetWithBuilds(tree), tree);
  output.out(
    options.format === "text"
      ? formatValidationReport(dir, result)
      : options.format === "json"
        ? validationReportJson(result)
        : structured(JSON.parse(validationReportJson(result)), "yaml"),
  );
  const failed = result.model === undefined || (options.strict && result.problems.length > 0);
  return failed ? ExitCode.Failed : ExitCode.Ok;
}
