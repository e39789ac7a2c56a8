import { readTreeAtRevision } from "../../git/read-tree.js";
import type { MigrationStatus } from "../../migrate/migration-state.js";
import { textTable } from "../../observe/text-table.js";
import { statusFromFile } from "../../policy/migrations.js";
import { CliError, ExitCode, type ExitCodeValue } from "../exit-codes.js";
import { type CommandOutput, structured } from "../output.js";

export interface StatusOptions {
  readonly repo: string;
  readonly statusBranch: string;
  readonly format?: "text" | "json" | "yaml";
}

export async function runStatus(
  name: string | undefined,
  options: StatusOptions,
  output: CommandOutput,
): Promise<ExitCodeValue> {
  const tree = await readTreeAtRevision(options.repo, options.statusBranch).catch((error: unknown) => {
    throw new CliError(
      `cannot read ${options.statusBranch} in ${options.repo}: ${error instanceof Error ? error.message : String(error)}`,
    );
  });
  const statuses: MigrationStatus[] = [];
  for (const [path, bytes] of tree) {
    if (!path.startsWith("status/migrations/")) continue;
    const status = statusFromFile(new TextDecoder().decode(bytes));
    if (status && (name === undefined || status.migration === name)) statuses.push(status);
  }
  if (statuses.length === 0) {
    output.err(
      name === undefined
        ? `gitfleet: no migration status on ${options.statusBranch} yet\n`
        : `gitfleet: no migration "${name}" on ${options.statusBranch}\n`,
    );
    return ExitCode.Failed;
  }
  const format = options.format ?? "text";
  output.out(
    format === "text" ? statuses.map(formatStatus).join("\n") : structured({ migrations: statuses }, format),
  );
  return ExitCode.Ok;
}

/** A Migration's batches as a table: batch, state, since, apps per cluster, reason. */
export function formatStatus(status: MigrationStatus): string {
  const rows = status.batches.map((b) => [
    b.name,
    b.state,
    b.since.replace(/\.\d+Z$/, "Z"),
    Object.entries(b.apps)
      .map(([app, clusters]) =>
        `${app} ${Object.entries(clusters)
          .map(([cluster, health]) => `${cluster}=${health}`)
          .join(" ")}`.trim(),
      )
      .join(", "),
    b.reason ?? "",
  ]);
  const header = ["BATCH", "STATE", "SINCE", "APPS", "REASON"];
  const detached = status.detached.length > 0 ? `detached (left alone): ${status.detached.join(", ")}\n` : "";
  return `migration ${status.migration}\n${textTable(header, rows).join("\n")}\n${detached}`;
}
