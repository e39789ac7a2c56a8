import {
  advanceRestore,
  isRunning,
  type RestoreReport,
  type RestoreStatus,
  restoreOverlays,
} from "../migrate/etcd-restore.js";
import { controlPlaneAppName } from "../model/controlplane/app-names.js";
import type { HostedCredentials } from "../model/controlplane/credential-record.js";
import { smallest } from "../model/extremes.js";
import { compareStrings } from "../model/file-tree.js";
import type { Health } from "../model/health.js";
import type { FleetModel, RestoreOverlay } from "../model/types.js";
import { recordedRestores, restoreStatusPath, restoreStatusText } from "../status/restore-file.js";
import type { ClusterSyncResult } from "../sync/sync-result.js";
import { type BatchRound, definePolicy, stepOutcome } from "./policy.js";
import { controlPlaneReport, FAILURE_GRACE_MS, lasting } from "./upgrades.js";

/** Every EtcdRestore advanced one step, and what the render and the status branch get from it. */
export interface RestoresRound extends BatchRound<RestoreStatus> {
  /** Per hosted cluster, where its restore stands for the render (restores whose file is gone included). */
  readonly overlays: ReadonlyMap<string, RestoreOverlay>;
  /** Per hosted cluster, since when a component of its control plane cannot run. */
  readonly failingSince: ReadonlyMap<string, number>;
}

export interface RestoresInput {
  readonly model: FleetModel;
  readonly renderedCommit: string;
  /** Every restore status recorded on the branch (the files), by name. */
  readonly recorded: ReadonlyMap<string, RestoreStatus>;
  readonly results: ReadonlyMap<string, ClusterSyncResult>;
  readonly failingSince: ReadonlyMap<string, number>;
  readonly now: number;
}

/** Advances every EtcdRestore of the fleet with what its host reports. Pure. */
export function advanceRestores(input: RestoresInput): RestoresRound {
  const { model, now } = input;
  const statuses = new Map<string, RestoreStatus>(input.recorded);
  const changes: string[] = [];
  const failingSince = new Map<string, number>();
  for (const restore of [...model.etcdRestores].sort((a, b) =>
    compareStrings(a.metadata.name, b.metadata.name),
  )) {
    const name = restore.metadata.name;
    const previous = statuses.get(name);
    const cluster = previous?.cluster ?? restore.spec.cluster;
    const host = model.clusters.find((c) => c.metadata.name === cluster)?.spec.controlPlane?.host;
    const report =
      previous && isRunning(previous.phase)
        ? restoreReport(
            { cluster, host, results: input.results, failingSince: input.failingSince, now },
            name,
            failingSince,
          )
        : undefined;
    const outcome = advanceRestore({ restore, previous, sourceCommit: input.renderedCommit, report, now });
    statuses.set(name, outcome.status);
    if (outcome.change) changes.push(outcome.change);
  }
  return {
    statuses,
    overlays: restoreOverlays([...statuses.values()]),
    changes,
    active: [...statuses.values()].some((s) => isRunning(s.phase)),
    failingSince,
    wakeAt: smallest([...failingSince.values()].map((t) => t + FAILURE_GRACE_MS).filter((t) => t > now)),
  };
}

/** The branch's restore statuses by name. */
export function recordedRestoreStatuses(files: ReadonlyMap<string, string>): Map<string, RestoreStatus> {
  return new Map(recordedRestores(files).map((s) => [s.restore, s]));
}

// What the host reports about a control plane under restore: its own workloads stopped, the restore
// Job's health, and whether it runs again (every object Healthy and applied, the hosted cluster
// answering).
function restoreReport(
  input: RestoreReportInput,
  restore: string,
  failingSince: Map<string, number>,
): RestoreReport | undefined {
  const seen = controlPlaneReport(input.cluster, input.host, input.results);
  const objects = input.results
    .get(input.host ?? "")
    ?.objects.filter((o) => o.app === controlPlaneAppName(input.cluster));
  if (!seen || !objects) return undefined;
  // The workloads only: a control plane exposed by a Service has a Service kube-apiserver too.
  const etcdAndApiServer = objects.filter(
    (o) =>
      o.identity.startsWith("apps/StatefulSet/") ||
      (o.identity.startsWith("apps/Deployment/") && o.identity.endsWith("/kube-apiserver")),
  );
  const stopped =
    etcdAndApiServer.length >= 2 &&
    etcdAndApiServer.every((o) => o.desiredReplicas === 0 && (o.readyReplicas ?? 0) === 0);
  const job = restoreJobs(objects, restore);
  const hosted = input.results.get(input.cluster);
  const failure = lasting(input.cluster, seen.failure, input, failingSince);
  const fetch = fetchReport(input.results.get(input.host ?? "")?.credentials?.[input.cluster], restore);
  return {
    stopped,
    ...(fetch ? { fetch } : {}),
    ...(job
      ? { job: { health: job.health.status, ...(job.health.reason ? { reason: job.health.reason } : {}) } }
      : {}),
    running:
      seen.settled && seen.health === "Healthy" && hosted?.reachable === true && hosted.version !== undefined,
    ...(failure ? { failure } : {}),
  };
}

// What the host's credentials step says of an off-host restore's fetch: the backup's key once its
// keys are back and its snapshot staged, or why the pass failed.
function fetchReport(
  entry: HostedCredentials[string] | undefined,
  restore: string,
): RestoreReport["fetch"] | undefined {
  if (!entry) return undefined;
  if ("error" in entry) return { error: entry.error };
  return entry.restoreFetch?.restore === restore ? { fetched: entry.restoreFetch.fetched } : undefined;
}

// The restore's Jobs (one, or one per member of a replicated etcd) as one health: Degraded when one
// failed, Healthy when all finished, else Progressing; undefined before any is there.
function restoreJobs(
  objects: readonly ClusterSyncResult["objects"][number][],
  restore: string,
): { health: Health } | undefined {
  const base = `/etcd-restore-${restore}`;
  const ours = (identity: string) =>
    identity.endsWith(base) || (/-\d+$/.test(identity) && identity.replace(/-\d+$/, "").endsWith(base));
  const jobs = objects.filter((o) => o.identity.startsWith("batch/Job/") && ours(o.identity));
  if (jobs.length === 0) return undefined;
  const pending =
    jobs.find((j) => j.health.status === "Degraded") ?? jobs.find((j) => j.health.status !== "Healthy");
  return { health: pending?.health ?? { status: "Healthy" } };
}

interface RestoreReportInput {
  readonly cluster: string;
  readonly host: string | undefined;
  readonly results: ReadonlyMap<string, ClusterSyncResult>;
  readonly failingSince: ReadonlyMap<string, number>;
  readonly now: number;
}

/**
 * What merging a change does to the restores, for `gitfleet plan`: a restore the change adds starts
 * (its control plane stops), the others stand as recorded. The overlays the head renders with, and a
 * line per phase change. Pure.
 */
export function plannedRestores(
  model: FleetModel,
  files: ReadonlyMap<string, string>,
  now: number,
): { readonly overlays: ReadonlyMap<string, RestoreOverlay>; readonly changes: readonly string[] } {
  const round = advanceRestores({
    model,
    renderedCommit: "the merge",
    recorded: recordedRestoreStatuses(files),
    results: new Map(),
    failingSince: new Map(),
    now,
  });
  return { overlays: round.overlays, changes: round.changes.map((c) => `etcd restore ${c}`) };
}

/** Etcd restores as a policy: status/restores/, where each hosted cluster's restore stands what it gives. */
export const restoresPolicy = definePolicy<RestoreStatus, ReadonlyMap<string, number>>({
  writer: "restores",
  kind: "restore",
  names: (model) => model.etcdRestores.map((r) => r.metadata.name),
  read: recordedRestoreStatuses,
  write: (name, status) => [restoreStatusPath(name), restoreStatusText(status)],
  // Of a branch gitfleet cannot vouch for, only restores the source asks for, as it asks for them.
  vouch: (model, name, recorded) =>
    model.etcdRestores.some(
      (r) =>
        r.metadata.name === name &&
        r.spec.cluster === recorded.cluster &&
        r.spec.snapshot === recorded.snapshot &&
        r.spec.backup === recorded.backup,
    )
      ? recorded
      : undefined,
  step(input) {
    const round = advanceRestores({
      model: input.model,
      renderedCommit: input.renderedCommit,
      recorded: input.previous,
      results: input.results,
      failingSince: input.memory ?? new Map(),
      now: input.now,
    });
    return stepOutcome(round, { controlPlaneRestores: round.overlays }, round.failingSince);
  },
  gives: (_, statuses) => ({ controlPlaneRestores: restoreOverlays([...statuses.values()]) }),
});
