import { type Plan, stillUnplaced, type UnplacedReplicas } from "./plan.js";

/** What a commit status says of a proposed change: it may merge, or it must not as it stands. */
export interface PlanVerdict {
  readonly ok: boolean;
  /** One line for the status (forges show about 140 characters). */
  readonly description: string;
}

/**
 * The verdict on a change: it fails when the head is invalid (`error`: the validation report) or
 * when a prune it makes is over the deletion budget and blocked; otherwise it says how many clusters
 * change. Pure.
 */
export function planVerdict(outcome: { readonly plan: Plan } | { readonly error: string }): PlanVerdict {
  if ("error" in outcome) {
    const first = outcome.error.split("\n").find((line) => line.trim() !== "") ?? "";
    return { ok: false, description: `invalid: ${first.trim()}` };
  }
  const { plan } = outcome;
  const blocked = plan.clusters.filter((c) => c.pruneBlocked).map((c) => c.cluster);
  if (blocked.length > 0)
    return {
      ok: false,
      description: `prune blocked in ${blocked.join(", ")}: over the deletion budget, allow it in fleet.yaml`,
    };
  const unplaced = stillUnplaced(plan);
  if (unplaced.length > 0 && plan.unplacedPolicy === "Fail")
    return { ok: false, description: oneStatusLine(unplacedSummary(unplaced)) };
  if (!plan.changed) return { ok: true, description: "no changes: every cluster gets what it gets now" };
  const touched = plan.clusters.filter(
    (c) => c.added.length + c.changed.length + c.removed.length > 0,
  ).length;
  const change = `${touched} cluster${touched === 1 ? "" : "s"} change`;
  const warning = unplaced.length > 0 ? `; ${unplacedSummary(unplaced)}` : "";
  return { ok: true, description: oneStatusLine(`${change}${warning}`) };
}

// "12 of 60 replicas of Deployment games/game fit nowhere…", or how many for several workloads.
function unplacedSummary(unplaced: readonly UnplacedReplicas[]): string {
  const [first] = unplaced;
  if (unplaced.length === 1 && first) return first.message;
  const replicas = unplaced.reduce((n, u) => n + u.unplaced, 0);
  return `${replicas} replicas of ${unplaced.length} workloads fit nowhere`;
}

// Forges show about 140 characters of a status.
function oneStatusLine(text: string): string {
  return text.length <= 140 ? text : `${text.slice(0, 139)}…`;
}

/** The plan comment's text when the head cannot be planned: why, as the validation report says. */
export function formatInvalidHeadMarkdown(head: string, error: string): string {
  // A fence longer than any run of backticks in the report, so nothing in it can close the block.
  const longest = Math.max(0, ...(error.match(/`+/g) ?? []).map((run) => run.length));
  const fence = "`".repeat(Math.max(3, longest + 1));
  return [
    "### gitfleet plan",
    "",
    `**${head.slice(0, 12)} is invalid**: gitfleet will not apply it. Fix these and push again:`,
    "",
    fence,
    error.trimEnd(),
    fence,
    "",
  ].join("\n");
}
