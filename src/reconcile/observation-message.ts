import { resolveControlPlanes } from "../model/controlplane/hosted-control-plane.js";
import { sameEntries } from "../model/same-entries.js";
import type { FleetModel, HostedPlaneStates } from "../model/types.js";
import { carrying, type StatusEvent, type StatusMessage, statusMessage } from "../status/status-message.js";
import type { FailoverMessage } from "./failover-message.js";

// The message of an observation step (reconcile-step.ts observationStep): failover speaks first, then
// the autoscalers' totals, then the hosted control planes an upgrade or a restore moved; a step that
// moved none of these is quiet.

export interface ObservationMessageInput {
  readonly failover: FailoverMessage;
  /** The autoscalers' lines ("web: hpa 8 → 12 (cpu 90% > 65%)"). */
  readonly scaled: readonly string[];
  /** The control planes that moved (controlPlaneEvents). */
  readonly planes: readonly StatusEvent[];
}

/** The step's message, and whether it has anything to say beyond "status updated". Pure. */
export function observationMessage(input: ObservationMessageInput): {
  readonly message: StatusMessage;
  readonly moved: boolean;
} {
  const { failover, scaled, planes } = input;
  if (failover.moved || scaled.length > 0) {
    const lead = scaled.length === 0 ? failover.message : autoscaleMessage(scaled, failover);
    return { message: carrying(lead, planes), moved: true };
  }
  const alone = planeMessage(planes);
  return alone ? { message: alone, moved: true } : { message: failover.message, moved: false };
}

/** A model and the hosted control planes' states it was generated with (absent: none). */
export interface PlanedModel {
  readonly model: FleetModel;
  readonly planes: HostedPlaneStates | undefined;
}

/**
 * A line per hosted control plane an upgrade batch moved ("upgrade: pc-1: v1.36.1 → v1.36.3") or
 * whose etcd restore moved on ("restore: pc-1: r1 Stopping"). Pure.
 */
export function controlPlaneEvents(before: PlanedModel | undefined, after: PlanedModel): StatusEvent[] {
  return [
    ...versionLines(before, after).map((line) => ({ kind: "upgrade" as const, line: `upgrade: ${line}` })),
    ...restoreLines(before, after).map((line) => ({ kind: "restore" as const, line: `restore: ${line}` })),
  ];
}

// "pc-1: v1.36.1 → v1.36.3" for each hosted control plane whose version an upgrade batch moved.
function versionLines(before: PlanedModel | undefined, after: PlanedModel): string[] {
  const was = before?.planes?.versions ?? new Map<string, string>();
  if (!before || sameEntries(was, after.planes?.versions ?? new Map())) return [];
  const versions = new Map(
    resolveControlPlanes(before.model, undefined, before.planes).map(({ plane }) => [
      plane.cluster,
      plane.apiServer.version,
    ]),
  );
  return resolveControlPlanes(after.model, undefined, after.planes).flatMap(({ plane }) => {
    const from = versions.get(plane.cluster);
    return from !== undefined && from !== plane.apiServer.version
      ? [`${plane.cluster}: ${from} → ${plane.apiServer.version}`]
      : [];
  });
}

// "pc-1: r1 Stopping" for each hosted control plane whose restore moved on.
function restoreLines(before: PlanedModel | undefined, after: PlanedModel): string[] {
  const was = before?.planes?.restores ?? new Map();
  return [...(after.planes?.restores ?? new Map())]
    .filter(([cluster, restore]) => JSON.stringify(was.get(cluster)) !== JSON.stringify(restore))
    .map(([cluster, restore]) => `${cluster}: ${restore.name} ${restore.phase}`);
}

// When control planes alone moved, they are the commit: the first kind's lines its subject
// ("upgrade: pc-1: v1.36.1 → v1.36.3; pc-2: …"), the other kind's carried after it.
function planeMessage(events: readonly StatusEvent[]): StatusMessage | undefined {
  const first = events[0];
  if (!first) return undefined;
  const lead = events.filter((e) => e.kind === first.kind);
  const prefix = `${first.kind}: `;
  const subject = `${prefix}${lead.map((e) => e.line.slice(prefix.length)).join("; ")}`;
  return carrying(
    statusMessage(first.kind, subject),
    events.filter((e) => e.kind !== first.kind),
  );
}

// A step that autoscalers' totals explain is an autoscale commit; when failover moved replicas too,
// it speaks first and the scaling follows it.
function autoscaleMessage(scaled: readonly string[], failover: FailoverMessage): StatusMessage {
  if (failover.moved)
    return carrying(
      failover.message,
      scaled.map((line) => ({ kind: "scale", line: `autoscale: ${line}` })),
    );
  return statusMessage("scale", `autoscale: ${scaled.join("; ")}`, scaled.length > 1 ? scaled : []);
}
