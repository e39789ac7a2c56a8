import { compareStrings } from "../model/file-tree.js";
import type { ObservedState } from "../model/observed-state.js";
import type { FleetModel } from "../model/types.js";
import type { RenderResult, WorkloadDecision } from "../render/render-result.js";
import { serviceViews, trafficMoves } from "../render/service-discovery/service-views.js";
import { type StatusMessage, statusMessage } from "../status/status-message.js";
import type { ChangeSummary } from "./commit-message.js";

// The message of a failover status commit: what moved and why, so that the status branch's history
// reads as the incident's timeline.

export interface FailoverMessageInput {
  readonly model: FleetModel;
  readonly summary: ChangeSummary;
  readonly before: RenderResult;
  readonly after: RenderResult;
  readonly observations: ObservedState;
}

const MAX_BODY_LINES = 40;

/** A failover commit's message, and whether it has anything to say beyond "status updated". */
export interface FailoverMessage {
  readonly message: StatusMessage;
  /** False when new observations moved no replica and changed no condition (the message says so). */
  readonly moved: boolean;
}

/**
 * `failover: cluster west Unreachable for 75s; web 10 → east +5, north +5` — the clusters replicas
 * left and why, then per workload how many moved and where; a body line per move, per old replica
 * set kept or removed, per capacity cap. Pure.
 */
export function failoverMessage(input: FailoverMessageInput): FailoverMessage {
  const { summary, observations } = input;
  const before = new Map(input.before.decisions.map((d) => [d.identity, d]));
  const now = new Date(observations.now).toISOString();
  const causes = new Set<string>();
  const moves: string[] = [];
  const body: string[] = [];
  for (const after of input.after.decisions) {
    const found = describeWorkload(after, before.get(after.identity), input, now);
    for (const c of found.causes) causes.add(c);
    if (found.move) moves.push(found.move);
    body.push(...found.body);
  }
  const transitions = conditionChanges(input).filter((t) => ![...causes].some((c) => c.startsWith(t.prefix)));
  // Traffic follows its own, faster clock: records and endpoints withdrawn before replicas move.
  const traffic = trafficMoves(serviceViews(input.before.objects), serviceViews(input.after.objects));
  const subjectParts = [
    ...[...causes].sort(compareStrings),
    ...moves,
    ...transitions.map((t) => t.text),
    ...traffic,
  ];
  const subject =
    subjectParts.length > 0
      ? `failover: ${subjectParts.join("; ")}`
      : body.length > 0
        ? `failover: ${body[0]}`
        : `failover: ${summary.apps.length > 0 ? `${listed(summary.apps)}: ` : ""}status updated after new observations (no replica moved)`;
  if (subject === `failover: ${body[0]}`) body.shift();
  const lines =
    body.length > MAX_BODY_LINES
      ? [...body.slice(0, MAX_BODY_LINES), `… and ${body.length - MAX_BODY_LINES} more`]
      : body;
  return {
    message: statusMessage("failover", subject, lines),
    moved: subjectParts.length > 0 || body.length > 0,
  };
}

// One workload's part of the message: why replicas left, where they went, what stays or goes.
function describeWorkload(
  after: WorkloadDecision,
  previous: WorkloadDecision | undefined,
  input: FailoverMessageInput,
  now: string,
): { causes: string[]; move: string | undefined; body: string[] } {
  const name = workloadName(after, input.after.decisions);
  const causes: string[] = [];
  const body: string[] = [];
  for (const moved of after.failover?.movedOff ?? []) {
    if (moved.at !== now) continue;
    causes.push(cause(moved.cluster, moved.reason, input));
    body.push(`${name}: ${moved.replicas} off ${moved.cluster} (${moved.reason})`);
  }
  const gains = gainsOf(previous, after);
  const lost = lostOf(previous, after);
  // A division made before the clusters' capacity was known, made again now that it is.
  const learned = (previous?.capacityUnknown ?? []).filter((c) => !after.capacityUnknown?.includes(c));
  if (learned.length > 0 && lost > 0)
    causes.push(`capacity of ${[...learned].sort(compareStrings).join(", ")} now known`);
  if (after.decision.unschedulable > 0 && lost > 0)
    body.push(
      `${name}: ${after.decision.unschedulable} replicas have no cluster to go to; nothing is removed`,
    );
  body.push(...keptLines(name, previous, after));
  const move = lost > 0 && gains.length > 0 ? `${name} ${lost} → ${gains.join(", ")}` : undefined;
  return { causes, move, body };
}

// "web" for an app with one workload, "web/Deployment shop/web" when it has several.
function workloadName(decision: WorkloadDecision, all: readonly WorkloadDecision[]): string {
  const several = all.filter((d) => d.app === decision.app).length > 1;
  return several ? `${decision.app}/${decision.resource}` : decision.app;
}

// Why replicas left a cluster: its condition and for how long, or the reason itself (drain, app failover).
function cause(cluster: string, reason: string, input: FailoverMessageInput): string {
  const condition = input.observations.clusters.get(cluster);
  if (condition && !condition.ready && reason.includes("gitfleet.io/")) {
    const seconds = Math.round((input.observations.now - condition.since) / 1000);
    return `cluster ${cluster} ${condition.reason ?? "NotReady"} for ${seconds}s`;
  }
  return `${cluster}: ${reason}`;
}

function gainsOf(before: WorkloadDecision | undefined, after: WorkloadDecision): string[] {
  const old = before?.decision.clusters ?? {};
  return Object.entries(after.decision.clusters)
    .filter(([cluster, count]) => count > (old[cluster] ?? 0))
    .sort(([a], [b]) => compareStrings(a, b))
    .map(([cluster, count]) => `${cluster} +${count - (old[cluster] ?? 0)}`);
}

function lostOf(before: WorkloadDecision | undefined, after: WorkloadDecision): number {
  let lost = 0;
  for (const [cluster, count] of Object.entries(before?.decision.clusters ?? {}))
    lost += Math.max(0, count - (after.decision.clusters[cluster] ?? 0));
  return lost;
}

// Old replicas newly kept, and those removed now that their replacements run (or their time is up).
function keptLines(name: string, before: WorkloadDecision | undefined, after: WorkloadDecision): string[] {
  const was = new Map((before?.failover?.keeping ?? []).map((k) => [k.cluster, k]));
  const now = new Map((after.failover?.keeping ?? []).map((k) => [k.cluster, k]));
  const lines: string[] = [];
  for (const [cluster, kept] of now)
    if (!was.has(cluster))
      lines.push(
        `${name}: ${kept.replicas} old replicas stay on ${cluster} (purgeMode ${kept.purgeMode}${kept.until ? ` until ${kept.until}` : ""})`,
      );
  for (const [cluster, kept] of was)
    if (!now.has(cluster)) lines.push(`${name}: the ${kept.replicas} old replicas on ${cluster} are removed`);
  return lines;
}

// A cluster whose probes' verdict reached the render: filtered by a health taint, or frozen as not ready.
function downIn(cluster: string, render: RenderResult): boolean {
  return render.decisions.some(
    (d) =>
      d.decision.diagnosis.filtered[cluster]?.includes("gitfleet.io/") ||
      d.decision.diagnosis.frozen[cluster]?.startsWith("cluster not ready"),
  );
}

// Clusters that went NotReady (their replicas stay, frozen) or came back (nothing moves back).
function conditionChanges(input: FailoverMessageInput): { prefix: string; text: string }[] {
  const changes: { prefix: string; text: string }[] = [];
  for (const [cluster, condition] of [...input.observations.clusters].sort(([a], [b]) =>
    compareStrings(a, b),
  )) {
    const before = downIn(cluster, input.before);
    const after = downIn(cluster, input.after);
    const prefix = `cluster ${cluster} `;
    if (!before && after && !condition.ready)
      changes.push({
        prefix,
        text: `${prefix}${condition.reason ?? "NotReady"}: its replicas stay, it takes no new ones`,
      });
    if (before && !after && condition.ready)
      changes.push({
        prefix,
        // The Placement may still ask for replicas there (clusterLimits minReplicas): then the move says so.
        text: gainsOn(cluster, input) ? `${prefix}Ready again` : `${prefix}Ready again; nothing moves back`,
      });
  }
  return changes;
}

function gainsOn(cluster: string, input: FailoverMessageInput): boolean {
  const before = new Map(input.before.decisions.map((d) => [d.identity, d]));
  return input.after.decisions.some(
    (d) => (d.decision.clusters[cluster] ?? 0) > (before.get(d.identity)?.decision.clusters[cluster] ?? 0),
  );
}

function listed(apps: readonly string[]): string {
  return apps.length <= 3
    ? apps.join(", ")
    : `${apps.slice(0, 3).join(", ")} and ${apps.length - 3} more apps`;
}
