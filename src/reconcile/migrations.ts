import {
  advanceMigration,
  type BatchStatus,
  type Gate,
  isStarted,
  type MigrationStatus,
  observeMs,
  type PairReport,
  placedClusters,
} from "../migrate/migration-state.js";
import { smallest } from "../model/extremes.js";
import { compareStrings } from "../model/file-tree.js";
import type { FleetModel, Migration } from "../model/types.js";
import type { RenderedObject } from "../render/render-result.js";
import { readEmittedYaml } from "../render/yaml-reader.js";
import { migrationStatusPath, migrationStatusText, readMigrationStatus } from "../status/migration-file.js";

/** Every Migration of the fleet advanced one step, and what the sync and the status branch get from it. */
export interface MigrationsRound {
  readonly statuses: ReadonlyMap<string, MigrationStatus>;
  /** Per cluster, per app: what the sync may do. */
  readonly gates: ReadonlyMap<string, ReadonlyMap<string, Gate>>;
  /** status/migrations/<name>.yaml, by path. */
  readonly files: ReadonlyMap<string, string>;
  /** A line per batch state change, for the commit message. */
  readonly changes: readonly string[];
  /** Some batch is adopting or observing: its members should be looked at again soon. */
  readonly active: boolean;
  /** The next time (ms) a batch's observation window ends. */
  readonly wakeAt: number | undefined;
}

export interface MigrationsInput {
  readonly model: FleetModel;
  readonly objects: readonly RenderedObject[];
  readonly renderedCommit: string;
  /** The last status of each migration (in memory, else from status/migrations/ on the branch). */
  readonly previous: (name: string) => MigrationStatus | undefined;
  readonly report: (app: string, cluster: string) => PairReport | undefined;
  readonly now: number;
}

/** Advances every Migration in the rendered fleet. Pure. */
export function advanceMigrations(input: MigrationsInput): MigrationsRound {
  const clustersOf = placedClusters(input.objects);
  const statuses = new Map<string, MigrationStatus>();
  const gates = new Map<string, Map<string, Gate>>();
  const files = new Map<string, string>();
  const changes: string[] = [];
  for (const migration of [...input.model.migrations].sort((a, b) =>
    compareStrings(a.metadata.name, b.metadata.name),
  )) {
    const outcome = advanceMigration({
      migration,
      previous: input.previous(migration.metadata.name),
      sourceCommit: input.renderedCommit,
      clustersOf,
      report: input.report,
      now: input.now,
    });
    statuses.set(migration.metadata.name, outcome.status);
    files.set(migrationStatusPath(migration.metadata.name), migrationStatusText(outcome.status));
    changes.push(...outcome.changes);
    for (const [key, gate] of outcome.gates) {
      const slash = key.lastIndexOf("/");
      const app = key.slice(0, slash);
      const cluster = key.slice(slash + 1);
      const byApp = gates.get(cluster) ?? new Map<string, Gate>();
      // The first migration (by name) that claims a pair decides it.
      if (!byApp.has(app)) byApp.set(app, gate);
      gates.set(cluster, byApp);
    }
  }
  const batches = [...statuses.values()].flatMap((s) => s.batches);
  return {
    statuses,
    gates,
    files,
    changes,
    active: batches.some((b) => b.state === "Syncing" || b.state === "Observing"),
    wakeAt: nextWindowEnd(input.model, statuses, input.now),
  };
}

function nextWindowEnd(
  model: FleetModel,
  statuses: ReadonlyMap<string, MigrationStatus>,
  now: number,
): number | undefined {
  const ends: number[] = [];
  for (const migration of model.migrations)
    for (const batch of statuses.get(migration.metadata.name)?.batches ?? []) {
      const spec = migration.spec.batches.find((b) => b.name === batch.name);
      if (batch.state !== "Observing" || !batch.observingSince || !spec) continue;
      ends.push(Date.parse(batch.observingSince) + observeMs(spec, migration));
    }
  const future = ends.filter((t) => t > now);
  return smallest(future);
}

/** A migration's status as the status branch holds it (status/migrations/<name>.yaml), if readable. */
export function statusFromFile(text: string | undefined): MigrationStatus | undefined {
  if (text === undefined) return undefined;
  try {
    return readMigrationStatus(readEmittedYaml(text));
  } catch {
    return undefined;
  }
}

/**
 * The part of a recorded status the source approves, for a status read from a branch gitfleet
 * cannot vouch for: a batch counts as started (Syncing, Observing, Succeeded, Failed) only when the
 * Migration approves it and every batch before it Succeeded; any other recorded progress is
 * dropped, so the batch starts over from what the source says. Rolled-back batches and detached
 * pairs stand: they only ever leave objects alone. Pure.
 */
export function approvedPart(
  migration: Migration,
  recorded: MigrationStatus | undefined,
): MigrationStatus | undefined {
  if (!recorded) return undefined;
  const batches: BatchStatus[] = [];
  let earlierSucceeded = true;
  for (const batch of migration.spec.batches) {
    const status = recorded.batches.find((b) => b.name === batch.name);
    const started = status !== undefined && isStarted(status.state) && status.state !== "RolledBack";
    if (status && (!started || (batch.approved === true && earlierSucceeded))) batches.push(status);
    earlierSucceeded &&= status?.state === "Succeeded" && batch.approved === true;
  }
  return { ...recorded, batches };
}
