import { compareStrings } from "../model/file-tree.js";
import type { HealthStatus } from "../model/health.js";
import type { EtcdRestore, RestoreOverlay } from "../model/types.js";

// A one-shot etcd restore as a state machine, advanced from what the host reports: the control plane
// stops, a Job restores the snapshot into a new data directory, the control plane starts from it.
// Pure: the status it returns is status/restores/<name>.yaml, read back after a restart; the render
// takes where each cluster's restore stands (restoreOverlays) as an observation, as it takes an
// upgrade's versions (ADR 0011).

/** Every phase a restore can be in; the status file's reader takes this list. */
export const RESTORE_PHASES = [
  "Stopping",
  "Fetching",
  "Restoring",
  "Starting",
  "Succeeded",
  "Failed",
] as const;
export type RestorePhase = (typeof RESTORE_PHASES)[number];

/** A restore as status/restores/<name>.yaml records it. */
export interface RestoreStatus {
  readonly restore: string;
  readonly cluster: string;
  /** From the host's backup volume: the snapshot's file. Exactly one of snapshot and backup. */
  readonly snapshot?: string;
  /** From an off-host backup: `latest` or the key the EtcdRestore asks for. */
  readonly backup?: string;
  /** The off-host backup's key once its keys are back and its snapshot staged. */
  readonly fetched?: string;
  readonly phase: RestorePhase;
  /** ISO time of the last phase change. */
  readonly since: string;
  /** The source commit the restore started at. */
  readonly startedIn: string;
  /** What it waits for, or why it failed. */
  readonly reason?: string;
}

/** What the host (and the hosted cluster) report about a control plane under restore. */
export interface RestoreReport {
  /** etcd and kube-apiserver run no replica and are asked for none. */
  readonly stopped: boolean;
  /** The restore Job's health, when the host has it. */
  readonly job?: { readonly health: HealthStatus; readonly reason?: string };
  /** Every object of the control plane applied and Healthy, and the hosted cluster answers. */
  readonly running: boolean;
  /** A component that keeps failing (crash-looping past the grace), with why. */
  readonly failure?: string;
  /** From an off-host backup: the key whose keys are back and snapshot staged, or why not yet. */
  readonly fetch?: { readonly fetched?: string; readonly error?: string };
}

export interface RestoreInput {
  readonly restore: EtcdRestore;
  readonly previous: RestoreStatus | undefined;
  readonly sourceCommit: string;
  readonly report: RestoreReport | undefined;
  readonly now: number;
}

/**
 * Advances a restore one step. It starts at once (the reviewed commit that adds it is its approval)
 * and runs once: Stopping until etcd and kube-apiserver run nothing; from an off-host backup,
 * Fetching until the host's credentials step wrote its keys back and staged its snapshot (a store
 * that fails keeps it there, saying why, and it tries again); Restoring until its Job completes (a
 * failed Job fails it), Starting until the control plane runs Healthy from the restored data (a
 * component that keeps failing fails it), then Succeeded. Succeeded and Failed are final, whatever
 * the spec says later. Pure.
 */
export function advanceRestore(input: RestoreInput): { status: RestoreStatus; change?: string } {
  const { restore, previous, report } = input;
  const at = new Date(input.now).toISOString();
  const source = previous ?? restore.spec;
  const enter = (phase: RestorePhase, reason?: string, fetched?: string): RestoreStatus => ({
    restore: restore.metadata.name,
    cluster: previous?.cluster ?? restore.spec.cluster,
    ...(source.backup !== undefined ? { backup: source.backup } : { snapshot: source.snapshot ?? "" }),
    ...(fetched ? { fetched } : {}),
    phase,
    since: at,
    startedIn: previous?.startedIn ?? input.sourceCommit,
    ...(reason ? { reason } : {}),
  });
  const next = nextPhase(previous, report);
  if (!next) return { status: previous as RestoreStatus };
  const fetched = next.fetched ?? previous?.fetched;
  if (previous && next.phase === previous.phase)
    // The same phase, waiting for another reason (a store that fails): the reason changes, not since.
    return { status: { ...enter(next.phase, next.reason, fetched), since: previous.since } };
  const status = enter(next.phase, next.reason, fetched);
  return {
    status,
    change: `${restore.metadata.name}: ${previous?.phase ?? "new"} → ${next.phase}${next.reason ? ` (${next.reason})` : ""}`,
  };
}

// The phase to move to (the same one with another reason while a fetch fails), or undefined to stay.
function nextPhase(
  previous: RestoreStatus | undefined,
  report: RestoreReport | undefined,
): { phase: RestorePhase; reason?: string; fetched?: string } | undefined {
  switch (previous?.phase) {
    case undefined:
      return { phase: "Stopping", reason: "stopping kube-apiserver, its controllers and etcd" };
    case "Stopping":
      if (!report?.stopped) return undefined;
      return previous.backup !== undefined
        ? { phase: "Fetching", reason: `fetching the off-host backup ${previous.backup}` }
        : { phase: "Restoring", reason: `restoring ${previous.snapshot}` };
    case "Fetching":
      return afterFetching(previous, report?.fetch);
    case "Restoring":
      if (report?.job?.health === "Healthy")
        return { phase: "Starting", reason: "starting from the restored data" };
      if (report?.job?.health === "Degraded")
        return { phase: "Failed", reason: `the restore Job failed: ${report.job.reason ?? "Degraded"}` };
      return undefined;
    case "Starting":
      if (report?.failure)
        return { phase: "Failed", reason: `${report.failure}; etcd runs on its data before the restore` };
      return report?.running ? { phase: "Succeeded" } : undefined;
    default:
      return undefined;
  }
}

// Fetching: Restoring once the backup's keys are back and its snapshot staged; while the fetch fails,
// Fetching again with why (only when why changed).
function afterFetching(
  previous: RestoreStatus,
  fetch: RestoreReport["fetch"],
): { phase: RestorePhase; reason?: string; fetched?: string } | undefined {
  if (fetch?.fetched)
    return { phase: "Restoring", reason: `restoring ${fetch.fetched}`, fetched: fetch.fetched };
  const reason = fetch?.error ? `the backup cannot be fetched yet: ${fetch.error}` : undefined;
  return reason && reason !== previous.reason ? { phase: "Fetching", reason } : undefined;
}

/** A restore that is under way: its control plane is stopped or starting. */
export function isRunning(phase: RestorePhase): boolean {
  return phase === "Stopping" || phase === "Fetching" || phase === "Restoring" || phase === "Starting";
}

/**
 * Where each hosted cluster's restore stands for the render, from every restore status recorded
 * (the restore's file may be gone from the repo: the data it restored stays in use): a restore under
 * way stops the control plane (and runs its Job while Restoring) or starts it from the restored data;
 * otherwise the latest that Succeeded names the data directory. A Failed restore gives nothing. Pure.
 */
export function restoreOverlays(statuses: readonly RestoreStatus[]): Map<string, RestoreOverlay> {
  const overlays = new Map<string, RestoreOverlay>();
  const ordered = [...statuses].sort(
    (a, b) => compareStrings(a.since, b.since) || compareStrings(a.restore, b.restore),
  );
  for (const status of ordered) {
    if (status.phase === "Failed") continue;
    const active = overlays.get(status.cluster);
    // A restore under way wins over any that finished.
    if (active && active.phase !== "Running" && !isRunning(status.phase)) continue;
    overlays.set(status.cluster, {
      name: status.restore,
      snapshot: status.snapshot ?? status.fetched ?? status.backup ?? "",
      phase:
        status.phase === "Stopping" || status.phase === "Fetching" || status.phase === "Restoring"
          ? status.phase
          : "Running",
      ...(status.backup !== undefined
        ? { backup: status.fetched ?? status.backup, startedIn: status.startedIn }
        : {}),
    });
  }
  return overlays;
}
