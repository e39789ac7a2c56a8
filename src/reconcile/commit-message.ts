import { compareStrings } from "../model/file-tree.js";
import type { WorkloadDecision } from "../render/render-result.js";
import { type StatusMessage, statusMessage } from "../status/status-message.js";

/** How the objects one cluster gets changed. */
export interface ClusterCounts {
  added: number;
  changed: number;
  removed: number;
}

/** What a reconcile changed, for the commit message and the logs. */
export interface ChangeSummary {
  readonly sourceCommit: string;
  /** Apps whose rendered output changed, sorted. */
  readonly apps: readonly string[];
  /** Object changes per cluster. */
  readonly clusters: ReadonlyMap<string, ClusterCounts>;
  /** Workloads whose replica distribution changed: before (absent when new) and after (absent when gone). */
  readonly distributions: readonly {
    readonly before?: WorkloadDecision;
    readonly after?: WorkloadDecision;
  }[];
}

const MAX_BODY_LINES = 40;

/**
 * The status commit's message (trailers are added by the writer): a subject that says what changed —
 * `web: Deployment shop/web 30 replicas a=15 b=15 → a=10 b=10 c=10` when one workload moved — and a
 * body with every distribution change and the object counts per cluster.
 */
export function changeMessage(summary: ChangeSummary): StatusMessage {
  const short = summary.sourceCommit.slice(0, 7);
  const moves = summary.distributions.map(describeMove);
  const counts = [...summary.clusters]
    .sort(([a], [b]) => compareStrings(a, b))
    .map(([cluster, c]) => `${cluster} ${formatCounts(c)}`);
  let subject: string;
  if (summary.apps.length === 0) subject = `Reconcile ${short}: no rendered change`;
  else if (moves.length === 1 && summary.apps.length === 1) subject = moves[0] as string;
  else
    subject = `Reconcile ${short}: ${summary.apps.length} ${plural(summary.apps.length, "app")} changed (${listed(summary.apps)})`;
  const body = [...(moves.length === 1 && subject === moves[0] ? [] : moves)];
  if (counts.length > 0) body.push(`objects: ${counts.join(", ")}`);
  const clipped =
    body.length > MAX_BODY_LINES
      ? [...body.slice(0, MAX_BODY_LINES), `… and ${body.length - MAX_BODY_LINES} more`]
      : body;
  return statusMessage("reconcile", subject, clipped);
}

/** The message of a reconcile whose source commit failed validation. */
export function invalidMessage(
  sourceCommit: string,
  errors: number,
  renderedCommit: string | undefined,
): StatusMessage {
  const kept = renderedCommit ? `rendered/ stays at ${renderedCommit.slice(0, 7)}` : "nothing rendered yet";
  return statusMessage(
    "invalid",
    `Source ${sourceCommit.slice(0, 7)} is invalid: ${errors} ${plural(errors, "error")}; ${kept}`,
    ["The problems are in status/source.yaml."],
  );
}

function describeMove(move: ChangeSummary["distributions"][number]): string {
  const workload = (move.after ?? move.before) as WorkloadDecision;
  const total = workload.replicas;
  const before = move.before ? distribution(move.before) : "(new)";
  const after = move.after ? distribution(move.after) : "(removed)";
  return `${workload.app}: ${workload.resource} ${total} ${plural(total, "replica")} ${before} → ${after}`;
}

function distribution(workload: WorkloadDecision): string {
  const entries = Object.entries(workload.decision.clusters).sort(([a], [b]) => compareStrings(a, b));
  const text = entries.map(([cluster, replicas]) => `${cluster}=${replicas}`).join(" ");
  const unschedulable =
    workload.decision.unschedulable > 0 ? ` (${workload.decision.unschedulable} unschedulable)` : "";
  return (text || "nowhere") + unschedulable;
}

function formatCounts(counts: ClusterCounts): string {
  const parts = [
    counts.added > 0 ? `+${counts.added}` : "",
    counts.changed > 0 ? `~${counts.changed}` : "",
    counts.removed > 0 ? `-${counts.removed}` : "",
  ];
  return parts.filter(Boolean).join(" ");
}

function listed(names: readonly string[]): string {
  return names.length <= 5 ? names.join(", ") : `${names.slice(0, 5).join(", ")}, …`;
}

function plural(count: number, word: string): string {
  return count === 1 ? word : `${word}s`;
}
