import {
  advanceMigration,
  approvedBatches,
  type Gate,
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
import { MIGRATIONS_DIRECTORY } from "../status/layout.js";
import { migrationStatusPath, migrationStatusText, readMigrationStatus } from "../status/migration-file.js";
import type { AgentReport } from "../status/observed-status.js";
import { worstHealth } from "../sync/health.js";
import type { ClusterSyncResult } from "../sync/sync-result.js";
import { type BatchRound, definePolicy, readNamed, stepOutcome } from "./policy.js";

/** Every Migration of the fleet advanced one step, and what the sync and the status branch get from it. */
export interface MigrationsRound extends BatchRound<MigrationStatus> {
  /** Per cluster, per app: what the sync may do. */
  readonly gates: ReadonlyMap<string, ReadonlyMap<string, Gate>>;
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
  const batches = approvedBatches(
    migration.spec.batches,
    recorded.batches,
    (state) => state === "RolledBack",
  );
  return { ...recorded, batches };
}

/** Migrations as a policy: status/migrations/, one step a round, the sync's gates what it gives. */
export const migrationsPolicy = definePolicy<MigrationStatus, undefined>({
  writer: "migrations",
  kind: "migration",
  names: (model) => model.migrations.map((m) => m.metadata.name),
  read: (files) => readNamed(files, MIGRATIONS_DIRECTORY, statusFromFile),
  write: (name, status) => [migrationStatusPath(name), migrationStatusText(status)],
  vouch(model, name, recorded) {
    const migration = model.migrations.find((m) => m.metadata.name === name);
    return migration ? approvedPart(migration, recorded) : recorded;
  },
  step(input) {
    const round = advanceMigrations({
      model: input.model,
      objects: input.render.objects,
      renderedCommit: input.renderedCommit,
      previous: (name) => input.previous.get(name),
      report: (app, cluster) => pairReport(app, input.results.get(cluster), input.reports.get(cluster)),
      now: input.now,
    });
    return stepOutcome(round, { gates: round.gates }, undefined);
  },
  // Gates come from a round only: before it, the sync holds nothing back for a migration.
  gives: () => ({}),
});

/**
 * One app in one cluster for a migration: its least healthy object and the commit the cluster runs
 * for it — none while the app is held back there (it has not taken the rendered commit). Pure.
 */
export function pairReport(
  app: string,
  result: ClusterSyncResult | undefined,
  report: AgentReport | undefined,
): PairReport | undefined {
  if (result?.reachable) {
    const objects = result.objects.filter((o) => o.app === app);
    if (objects.length === 0) return undefined;
    const health = worstHealth(objects.map((o) => o.health)).status;
    const conflict = objects.find((o) => o.action === "conflict");
    return {
      health,
      ...(objects.some((o) => o.action === "held") ? {} : { syncedCommit: result.sourceCommit }),
      ...(conflict ? { conflict: `${conflict.identity}: ${conflict.error ?? "conflict"}` } : {}),
    };
  }
  const entry = report?.apps[app];
  if (!entry || typeof entry.health !== "string") return undefined;
  const held = entry.rollout !== undefined || entry.migration !== undefined;
  return {
    health: entry.health as PairReport["health"],
    ...(typeof entry.syncedCommit === "string" && !held ? { syncedCommit: entry.syncedCommit } : {}),
  };
}
