import type { Problem } from "../model/problem.js";
import { formatProblem } from "../model/problem.js";
import type { LoadResult } from "./load-fleet.js";

/** Counts of what a fleet repo holds, for summaries. */
export function describeModelContents(result: LoadResult): string {
  const model = result.model;
  if (!model) return `${result.fileCount} files`;
  // Counts what the repo's files hold; what gitfleet generates for hosted clusters is counted apart.
  const apps = model.apps.filter((app) => !app.generated);
  const generated = new Set(model.apps.filter((app) => app.generated).map((app) => app.name));
  const resources = apps.reduce((sum, app) => sum + app.resources.length, 0);
  const hosted = model.clusters.filter((cluster) => cluster.spec.controlPlane).length;
  const sealed = apps.reduce((sum, app) => sum + app.resources.filter((r) => r.sealed).length, 0);
  const parts = [
    plural(model.clusters.length, "cluster"),
    ...(hosted > 0 ? [`${hosted} hosted`] : []),
    `${plural(apps.length, "app")} (${plural(resources, "resource")})`,
    plural(model.placements.filter((p) => !generated.has(p.metadata.name)).length, "placement"),
    plural(model.overrides.length, "override"),
    plural(model.interpreters.length, "interpreter"),
    plural(model.federatedHPAs.length + model.cronScales.length, "autoscaler"),
    plural(model.migrations.length, "migration"),
    ...(model.federatedResourceQuotas.length > 0
      ? [plural(model.federatedResourceQuotas.length, "quota")]
      : []),
    ...(model.teams.length > 0 ? [plural(model.teams.length, "team")] : []),
    ...(sealed > 0 ? [plural(sealed, "encrypted Secret")] : []),
  ];
  return `${parts.join(", ")} in ${plural(result.fileCount, "file")}`;
}

/** The compiler-style report of a load: one line per problem, then a summary line naming the repo. */
export function formatValidationReport(label: string, result: LoadResult): string {
  const lines = result.problems.map(formatProblem);
  const errors = count(result.problems, "error");
  const warnings = count(result.problems, "warning");
  if (errors > 0) {
    lines.push(
      `${label}: invalid: ${plural(errors, "error")}, ${plural(warnings, "warning")} in ${plural(result.fileCount, "file")}`,
    );
  } else {
    const withWarnings = warnings > 0 ? ` with ${plural(warnings, "warning")}` : "";
    lines.push(`${label}: valid${withWarnings}: ${describeModelContents(result)}`);
  }
  return `${lines.join("\n")}\n`;
}

/** The machine-readable report of a load (`--format json`). */
export function validationReportJson(result: LoadResult): string {
  const report = {
    valid: result.model !== undefined,
    errors: count(result.problems, "error"),
    warnings: count(result.problems, "warning"),
    files: result.fileCount,
    problems: result.problems.map((p) => ({ ...p })),
  };
  return `${JSON.stringify(report, null, 2)}\n`;
}

function count(problems: readonly Problem[], severity: Problem["severity"]): number {
  return problems.filter((p) => p.severity === severity).length;
}

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}
