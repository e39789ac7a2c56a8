import { compareStrings } from "../model/file-tree.js";
import { controlPlaneLines } from "./control-plane-changes.js";
import { migrationLines } from "./format-migration-plan.js";
import type { ClusterPlan, DistributionChange, HookConflict, ObjectChange, Plan } from "./plan.js";

/** What a plan says of a hook a live object stands in the way of. */
export function hookConflictLine(conflict: HookConflict): string {
  return `${conflict.hook} hook ${conflict.object} (app ${conflict.app}) would replace a live object gitfleet did not make: the hook will not run and the app waits there (rename the hook, or remove that object)`;
}

const conflictsIn = (plan: Plan, cluster: string) =>
  (plan.hookConflicts ?? []).filter((c) => c.cluster === cluster);

/** "web: aws-use1 3 → 2, gcp-euw1 3 → 2" — one workload's replicas per cluster, before → after. */
export function formatDistribution(change: DistributionChange): string {
  const clusters = [...new Set([...Object.keys(change.before), ...Object.keys(change.after)])].sort(
    compareStrings,
  );
  const moves = clusters
    .filter((c) => (change.before[c] ?? 0) !== (change.after[c] ?? 0))
    .map((c) => `${c} ${change.before[c] ?? 0} → ${change.after[c] ?? 0}`);
  const tiers = change.tiers?.map((t) =>
    t.before === t.after ? `${t.name} ${t.after}` : `${t.name} ${t.before} → ${t.after}`,
  );
  return `${change.workload} (app ${change.app}): ${moves.join(", ")}${tiers ? `; tiers ${tiers.join(", ")}` : ""}`;
}

/** "fits a 8 (cpu, 0 left), b 24 (cpu, 0 left)": each bounded cluster's room after the change. */
export function formatRoom(change: DistributionChange): string | undefined {
  const room = change.room;
  if (!room || Object.keys(room).length === 0) return undefined;
  const clusters = Object.keys(room).sort(compareStrings);
  const parts = clusters.map((c) => {
    const { holds, by } = room[c] as { holds: number; by: string };
    const left = holds - (change.after[c] ?? 0);
    return `${c} ${holds} (${by}, ${left} left)`;
  });
  return `fits ${parts.join(", ")}`;
}

// The lines no reviewer may miss: replicas the change leaves with nowhere to run.
function unplacedLines(plan: Plan): { mark: "!" | "✓"; line: string }[] {
  const fails = plan.unplacedPolicy === "Fail";
  return (plan.unplaced ?? []).map((u) => {
    if (u.unplaced === 0) return { mark: "✓", line: u.message };
    const was = u.before > 0 && u.before !== u.unplaced ? ` (was ${u.before})` : "";
    const verdict = fails ? " — fails this plan (spec.plan.unplacedReplicas: Fail)" : "";
    return { mark: "!", line: `${u.message}${was}${verdict}` };
  });
}

function totals(plan: Plan): string {
  const count = (pick: (c: ClusterPlan) => readonly unknown[]) =>
    plan.clusters.reduce((n, c) => n + pick(c).length, 0);
  const n = plan.clusters.length;
  const frozen = count((c) => c.frozen);
  const changes = `${count((c) => c.added)} added, ${count((c) => c.changed)} changed, ${count((c) => c.removed)} removed`;
  const batches = plan.migrations?.batches.length ?? 0;
  const migrations = `${batches} migration batch${batches === 1 ? "" : "es"} change${batches === 1 ? "s" : ""}`;
  if (n === 0 && plan.distributions.length === 0 && batches > 0)
    return `no rendered object changes; ${migrations}`;
  return `${n} cluster${n === 1 ? "" : "s"} change: ${changes}${frozen > 0 ? `, ${frozen} workloads frozen` : ""}${batches > 0 ? `; ${migrations}` : ""}`;
}

/** The plan for a terminal: a summary line, distributions, then each cluster's changes with diffs. */
export function formatPlanText(plan: Plan): string {
  const warnings = (plan.warnings ?? []).map((w) => `  ${w.file}:${w.line}:${w.column}: ${w.message}`);
  const warned = warnings.length > 0 ? ["", "Warnings:", ...warnings] : [];
  if (!plan.changed)
    return `${["No changes: every cluster gets exactly what it gets now.", ...warned].join("\n")}\n`;
  const unplaced = unplacedLines(plan).map((u) => `${u.mark} ${u.line}`);
  const lines = [`Plan: ${totals(plan)}`, ...unplaced, ...warned];
  if (plan.services?.length) lines.push("", "Services:", ...plan.services.map((l) => `  ${l}`));
  if (plan.timing?.length) lines.push("", "When it applies:", ...plan.timing.map((l) => `  ${l}`));
  if (plan.distributions.length > 0)
    lines.push(
      "",
      "Replicas:",
      ...plan.distributions.flatMap((d) => {
        const room = formatRoom(d);
        return [`  ${formatDistribution(d)}`, ...(room ? [`    ${room}`] : [])];
      }),
    );
  if (plan.controlPlanes)
    lines.push("", "Control planes:", ...controlPlaneLines(plan.controlPlanes).map((l) => `  ${l}`));
  if (plan.migrations && plan.migrations.batches.length > 0)
    lines.push("", "Migrations:", ...migrationLines(plan.migrations).map((l) => `  ${l}`));
  if (plan.upgrades && plan.upgrades.length > 0)
    lines.push("", "Upgrades (when merged):", ...plan.upgrades.map((l) => `  ${l}`));
  for (const cluster of plan.clusters)
    lines.push(
      "",
      `cluster ${cluster.cluster}:`,
      ...clusterLines(cluster, conflictsIn(plan, cluster.cluster)),
    );
  return `${lines.join("\n")}\n`;
}

function clusterLines(cluster: ClusterPlan, conflicts: readonly HookConflict[]): string[] {
  const secretNote = (change: ObjectChange) =>
    `${change.secret ? ` (Secret: values not shown${keysNote(change)})` : ""}${change.hook ? ` (${change.hook} hook)` : ""}${change.source ? ` (from ${change.source})` : ""}`;
  return [
    ...conflicts.map((c) => `  ! ${hookConflictLine(c)}`),
    ...(cluster.pruneBlocked
      ? [
          `  ! prune blocked: ${cluster.pruneBlocked.reasons.join("; ")}; nothing is deleted here until a commit adds ${cluster.pruneBlocked.token} to spec.pruning.allowPrune in fleet.yaml`,
        ]
      : []),
    ...(cluster.pruneAllowedBy ? [`  ! prune over the budget, allowed by ${cluster.pruneAllowedBy}`] : []),
    ...cluster.filteredOut.map((f) => `  ! ${f.workload} no longer placed here: ${f.reason}`),
    ...cluster.frozen.map((f) => `  = ${f.workload} frozen here: ${f.reason}`),
    ...cluster.added.map((change) => `  + ${change.object}${secretNote(change)}`),
    ...cluster.removed.map((change) => `  - ${change.object}`),
    ...cluster.changed.flatMap((change) => [
      `  ~ ${change.object}${secretNote(change)}`,
      ...(change.diff ? indent(change.diff, "    ") : []),
    ]),
  ];
}

/**
 * The plan as a pull-request comment: a summary table first, then the replica moves, then each
 * cluster's details collapsed, so a change touching fifty clusters stays readable.
 */
export function formatPlanMarkdown(plan: Plan): string {
  const warnings = (plan.warnings ?? []).map(
    (w) => `- ⚠ \`${w.file}:${w.line}:${w.column}\` ${escapeMarkdown(w.message)}`,
  );
  const warned = warnings.length > 0 ? ["**Warnings**", "", ...warnings, ""] : [];
  if (!plan.changed)
    return `${["### gitfleet plan", "", ...warned, "No changes: every cluster gets exactly what it gets now."].join("\n")}\n`;
  const lines = [
    "### gitfleet plan",
    "",
    totals(plan),
    "",
    "| cluster | added | changed | removed | no longer placed | frozen |",
    "| --- | ---: | ---: | ---: | ---: | ---: |",
  ];
  const unplaced = unplacedLines(plan).map((u) =>
    u.mark === "!" ? `> ⚠ **${escapeMarkdown(u.line)}**` : `> ✓ ${escapeMarkdown(u.line)}`,
  );
  lines.splice(3, 0, ...(unplaced.length > 0 ? ["", ...unplaced] : []), ...warned);
  for (const c of plan.clusters) {
    lines.push(
      `| ${c.cluster} | ${c.added.length} | ${c.changed.length} | ${c.removed.length} | ${c.filteredOut.length} | ${c.frozen.length} |`,
    );
  }
  if (plan.distributions.length > 0)
    lines.push(
      "",
      "**Replicas**",
      "",
      ...plan.distributions.flatMap((d) => {
        const room = formatRoom(d);
        return [
          `- ${escapeMarkdown(formatDistribution(d))}`,
          ...(room ? [`  - ${escapeMarkdown(room)}`] : []),
        ];
      }),
    );
  if (plan.controlPlanes)
    lines.push("", "**Control planes**", "", "```", ...controlPlaneLines(plan.controlPlanes), "```");
  if (plan.migrations && plan.migrations.batches.length > 0)
    lines.push("", "**Migrations**", "", "```", ...migrationLines(plan.migrations), "```");
  if (plan.upgrades && plan.upgrades.length > 0)
    lines.push("", "**Upgrades (when merged)**", "", "```", ...plan.upgrades, "```");
  if (plan.services?.length)
    lines.push("", "**Services**", "", ...plan.services.map((l) => `- ${escapeMarkdown(l)}`));
  if (plan.timing?.length)
    lines.push("", "**When it applies**", "", ...plan.timing.map((l) => `- ${escapeMarkdown(l)}`));
  for (const c of plan.clusters) lines.push("", ...clusterDetails(c, conflictsIn(plan, c.cluster)));
  return `${lines.join("\n")}\n`;
}

function clusterDetails(c: ClusterPlan, conflicts: readonly HookConflict[]): string[] {
  return [
    `<details><summary><b>${c.cluster}</b>: ${c.added.length} added, ${c.changed.length} changed, ${c.removed.length} removed</summary>`,
    "",
    ...conflicts.map((conflict) => `- ⛔ ${escapeMarkdown(hookConflictLine(conflict))}`),
    ...(c.pruneBlocked
      ? [
          `- ⛔ prune blocked: ${escapeMarkdown(c.pruneBlocked.reasons.join("; "))}; nothing is deleted here until a commit adds \`${c.pruneBlocked.token}\` to \`spec.pruning.allowPrune\` in fleet.yaml`,
        ]
      : []),
    ...(c.pruneAllowedBy ? [`- ⚠ prune over the budget, allowed by \`${c.pruneAllowedBy}\``] : []),
    ...c.filteredOut.map(
      (f) => `- ⚠ ${escapeMarkdown(f.workload)} no longer placed here: ${escapeMarkdown(f.reason)}`,
    ),
    ...c.frozen.map((f) => `- ❄ ${escapeMarkdown(f.workload)} frozen here: ${escapeMarkdown(f.reason)}`),
    ...objectLines(c.added, "added"),
    ...objectLines(c.removed, "removed"),
    ...c.changed.flatMap((change) => [
      `- changed: \`${change.object}\`${change.secret ? ` (Secret: values not shown${keysNote(change)})` : ""}${from(change)}`,
      ...(change.diff ? ["", "```diff", change.diff.trimEnd(), "```", ""] : []),
    ]),
    "",
    "</details>",
  ];
}

function objectLines(changes: readonly ObjectChange[], verb: string): string[] {
  return changes.map((change) => `- ${verb}: \`${change.object}\`${from(change)}`);
}

// Where an object built by kustomize or Helm came from.
function from(change: ObjectChange): string {
  const hook = change.hook ? ` (${change.hook} hook)` : "";
  return `${hook}${change.source ? `, from ${escapeMarkdown(change.source)}` : ""}`;
}

function indent(text: string, prefix: string): string[] {
  return text
    .trimEnd()
    .split("\n")
    .map((line) => prefix + line);
}

function escapeMarkdown(text: string): string {
  return text.replace(/([|*_`<>[\]])/g, "\\$1");
}

// Which keys of a changed Secret a change touched: "; changed stringData.password; added data.token".
function keysNote(change: ObjectChange): string {
  const keys = change.secretKeys;
  if (!keys) return "";
  const parts: [string, readonly string[]][] = [
    ["changed", keys.changed],
    ["added", keys.added],
    ["removed", keys.removed],
  ];
  return parts
    .filter(([, list]) => list.length > 0)
    .map(([what, list]) => `; ${what} ${list.join(", ")}`)
    .join("");
}
