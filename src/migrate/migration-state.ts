import { parseDuration } from "../model/duration.js";
import { compareStrings } from "../model/file-tree.js";
import type { HealthStatus } from "../model/health.js";
import type { Migration, MigrationBatch } from "../model/types.js";

// A Migration's batches as a state machine, advanced from the source (approvals, rollbacks, batch
// contents), what the members report, and the time. Pure: the status it returns is written to
// status/migrations/<name>.yaml and read back, so a restarted controller continues in every state.

/** Every state a migration batch can be in: the type, the status file's reader and its tests take this list. */
export const BATCH_STATES = [
  "Pending",
  "WaitingApproval",
  "Syncing",
  "Observing",
  "Succeeded",
  "Failed",
  "RolledBack",
] as const;
export type BatchState = (typeof BATCH_STATES)[number];

/** One batch as status/migrations/<name>.yaml records it. */
export interface BatchStatus {
  readonly name: string;
  readonly state: BatchState;
  /** ISO time of the last state change. */
  readonly since: string;
  /** The source commit in which the batch was approved when it started. */
  readonly approvedIn?: string;
  /** ISO time the batch's apps were all synced and Healthy: the observation window starts here. */
  readonly observingSince?: string;
  /** Why it is in this state (what it waits for, which app failed where). */
  readonly reason?: string;
  /** The app/cluster pairs the batch covers, with the health last seen there. */
  readonly apps: Readonly<Record<string, Readonly<Record<string, HealthStatus>>>>;
}

/** A Migration's status: its batches, and pairs detached because they left the migration. */
export interface MigrationStatus {
  readonly migration: string;
  readonly batches: readonly BatchStatus[];
  /** "app/cluster" pairs gitfleet adopted and then detached (rolled back or removed): left alone since. */
  readonly detached: readonly string[];
}

/** What the members report for one app in one cluster. */
export interface PairReport {
  readonly health: HealthStatus;
  /** The source commit the cluster runs for the app. */
  readonly syncedCommit?: string;
  /** An object of the app gitfleet may not take over (another field manager's, or Abort), with why. */
  readonly conflict?: string;
}

/** Everything one step reads. */
export interface MigrationInput {
  readonly migration: Migration;
  readonly previous: MigrationStatus | undefined;
  /** The valid source commit rendered now (approvals are read from it). */
  readonly sourceCommit: string;
  /** The clusters the render places an app on. */
  readonly clustersOf: (app: string) => readonly string[];
  /** The members' report for an app in a cluster, if any. */
  readonly report: (app: string, cluster: string) => PairReport | undefined;
  /** Milliseconds since the epoch. */
  readonly now: number;
  /** What a started batch is doing until its pairs report the rendered commit Healthy. Default "adopting". */
  readonly doing?: string;
}

/** What the sync does with an app in a cluster: apply (adopting), leave alone, or detach. */
export type Gate =
  | { readonly action: "sync"; readonly adopt: boolean }
  | { readonly action: "hold"; readonly reason: string }
  | { readonly action: "detach"; readonly reason: string };

/** The next status, the gate of every pair the migration covers, and a line per state change. */
export interface MigrationOutcome {
  readonly status: MigrationStatus;
  readonly gates: ReadonlyMap<string, Gate>;
  readonly changes: readonly string[];
}

/** How long a synced batch is watched when neither it nor its Migration says: 10 minutes. */
const DEFAULT_OBSERVE_MS = 10 * 60_000;

/** "app/cluster", the key of a pair. */
export function pairKey(app: string, cluster: string): string {
  return `${app}/${cluster}`;
}

/**
 * Advances a Migration one step. A batch starts (Syncing) only when it is approved in the source and
 * every batch before it has Succeeded; it observes once all its pairs run the rendered commit and are
 * Healthy, and succeeds when they stayed so for `observe`. A Degraded pair fails it: with onFailure
 * Halt the later batches wait; with Rollback its pairs are detached (RolledBack). `rollback: true`
 * detaches a started batch on purpose, and a pair removed from the migration is detached. Pure.
 */
export function advanceMigration(input: MigrationInput): MigrationOutcome {
  const { migration, previous } = input;
  const changes: string[] = [];
  const gates = new Map<string, Gate>();
  const batches = advanceBatches(input, changes);
  for (const batch of batches) for (const key of keysOf(batch)) gates.set(key, gateOf(batch, migration));
  const detached = detachedPairs(previous, batches, gates);
  detachRemoved(input, gates, detached, changes);
  for (const key of detached)
    if (!gates.has(key))
      gates.set(key, { action: "hold", reason: `migration ${migration.metadata.name}: detached` });
  return {
    status: { migration: migration.metadata.name, batches, detached: [...detached].sort() },
    gates,
    changes,
  };
}

// Pairs detached before, and those of rolled-back batches; a detached pair that a started batch
// covers again is managed again, until it leaves once more.
function detachedPairs(
  previous: MigrationStatus | undefined,
  batches: readonly BatchStatus[],
  gates: ReadonlyMap<string, Gate>,
): Set<string> {
  const detached = new Set(previous?.detached ?? []);
  for (const [key, gate] of gates) if (gate.action === "sync") detached.delete(key);
  for (const batch of batches)
    if (batch.state === "RolledBack") for (const key of keysOf(batch)) detached.add(key);
  return detached;
}

// Each batch in order; a batch that has not Succeeded holds back every batch after it.
function advanceBatches(input: MigrationInput, changes: string[]): BatchStatus[] {
  const { migration, previous } = input;
  const at = new Date(input.now).toISOString();
  const batches: BatchStatus[] = [];
  let blockedBy: string | undefined;
  for (const batch of migration.spec.batches) {
    const before = previous?.batches.find((b) => b.name === batch.name);
    const next = advanceBatch({ batch, before, pairs: pairsOf(batch, input), blockedBy, input, at });
    if (next.state !== before?.state)
      changes.push(
        `${migration.metadata.name}/${batch.name}: ${before?.state ?? "new"} → ${next.state}${next.reason ? ` (${next.reason})` : ""}`,
      );
    batches.push(next);
    if (next.state !== "Succeeded" && blockedBy === undefined) blockedBy = batch.name;
  }
  return batches;
}

// Pairs a started batch covered that no batch covers now were removed from the migration: detach them.
function detachRemoved(
  input: MigrationInput,
  gates: Map<string, Gate>,
  detached: Set<string>,
  changes: string[],
): void {
  const name = input.migration.metadata.name;
  for (const old of input.previous?.batches ?? []) {
    if (!isStarted(old.state)) continue;
    for (const key of keysOf(old)) {
      if (gates.has(key) || detached.has(key)) continue;
      gates.set(key, { action: "detach", reason: `migration ${name}: removed from the migration` });
      detached.add(key);
      changes.push(`${name}: ${key} removed from the migration: detached`);
    }
  }
}

interface BatchStep {
  readonly batch: MigrationBatch;
  readonly before: BatchStatus | undefined;
  readonly pairs: Record<string, Record<string, HealthStatus>>;
  readonly blockedBy: string | undefined;
  readonly input: MigrationInput;
  readonly at: string;
}

function advanceBatch(step: BatchStep): BatchStatus {
  const { batch, before, pairs, input, at } = step;
  const state = before?.state;
  const keep = (reason?: string): BatchStatus => ({
    ...(before as BatchStatus),
    apps: pairs,
    ...(reason === undefined ? {} : { reason }),
  });
  const enter = (next: BatchState, extra: Partial<BatchStatus> = {}): BatchStatus => ({
    name: batch.name,
    state: next,
    since: at,
    ...(before?.approvedIn ? { approvedIn: before.approvedIn } : {}),
    apps: pairs,
    ...extra,
  });
  if (state === "RolledBack") return keep();
  if (batch.rollback && isStarted(state))
    return enter("RolledBack", { reason: "rollback: true in the source" });
  if (state === "Succeeded" || state === "Failed") return keep();
  if (state === "Syncing" || state === "Observing") return progress(step, enter, keep);
  // Not started yet.
  if (step.blockedBy !== undefined)
    return state === "Pending" ? keep() : enter("Pending", { reason: `waits for batch ${step.blockedBy}` });
  if (!batch.approved)
    return state === "WaitingApproval"
      ? keep()
      : enter("WaitingApproval", { reason: "approved: true in a reviewed commit starts it" });
  return enter("Syncing", { approvedIn: input.sourceCommit, reason: input.doing ?? "adopting" });
}

// A started batch: fails on a Degraded pair, observes once all pairs run the commit Healthy, and
// succeeds when they stayed so for the observation window.
function progress(
  step: BatchStep,
  enter: (next: BatchState, extra?: Partial<BatchStatus>) => BatchStatus,
  keep: (reason?: string) => BatchStatus,
): BatchStatus {
  const { batch, before, pairs, input, at } = step;
  const failure = failureOf(pairs, input);
  if (failure)
    return input.migration.spec.onFailure === "Rollback"
      ? enter("RolledBack", { reason: `${failure}; onFailure: Rollback` })
      : enter("Failed", { reason: `${failure}; onFailure: Halt` });
  const window = observeMs(batch, input.migration);
  if (before?.state === "Syncing") {
    if (!allSynced(pairs, batch, input)) return keep(input.doing ?? "adopting");
    // Without an observation window there is nothing to observe.
    return window === 0 ? enter("Succeeded") : enter("Observing", { observingSince: at });
  }
  // Observing: every app must stay Healthy for the whole window; one reported otherwise starts it
  // again. No report yet (a restarted controller before its first sync) is no news: it waits.
  const reported = (app: string, cluster: string) => input.report(app, cluster) !== undefined;
  const unhealthy = firstWith(pairs, (h, app, cluster) => h !== "Healthy" && reported(app, cluster));
  if (firstWith(pairs, (_, app, cluster) => !reported(app, cluster)) !== undefined && !unhealthy)
    return keep("waits for the members' report");
  if (unhealthy) {
    const { observingSince: _, ...rest } = before as BatchStatus;
    return { ...rest, apps: pairs, reason: `${unhealthy}: the window starts again once it is Healthy` };
  }
  if (before?.observingSince === undefined)
    return { ...(before as BatchStatus), apps: pairs, observingSince: at, reason: "observing again" };
  return input.now - Date.parse(before.observingSince) >= window ? enter("Succeeded") : keep();
}

// A Degraded app, or an object gitfleet may not take over, fails a started batch.
function failureOf(
  pairs: Record<string, Record<string, HealthStatus>>,
  input: MigrationInput,
): string | undefined {
  const degraded = firstWith(pairs, (h) => h === "Degraded");
  if (degraded) return degraded;
  for (const [app, clusters] of Object.entries(pairs))
    for (const cluster of Object.keys(clusters)) {
      const conflict = input.report(app, cluster)?.conflict;
      if (conflict) return `${app} in ${cluster}: ${conflict}`;
    }
  return undefined;
}

function allSynced(
  pairs: Record<string, Record<string, HealthStatus>>,
  batch: MigrationBatch,
  input: MigrationInput,
): boolean {
  const keys = Object.entries(pairs).flatMap(([app, clusters]) => Object.keys(clusters).map((c) => [app, c]));
  return (
    keys.length > 0 &&
    batch.apps.length > 0 &&
    keys.every(([app = "", cluster = ""]) => {
      const report = input.report(app, cluster);
      return report?.health === "Healthy" && report.syncedCommit === input.sourceCommit;
    })
  );
}

/** A batch's observation window (its own, else its Migration's, else 10 minutes), in ms. */
export function observeMs(batch: MigrationBatch, migration: Migration): number {
  const text = batch.observe ?? migration.spec.observe;
  return text === undefined ? DEFAULT_OBSERVE_MS : (parseDuration(text) ?? DEFAULT_OBSERVE_MS);
}

/** Where the render places each app: its clusters, sorted. */
export function placedClusters(objects: readonly { readonly app: string; readonly cluster: string }[]) {
  const byApp = new Map<string, Set<string>>();
  for (const o of objects) byApp.set(o.app, (byApp.get(o.app) ?? new Set<string>()).add(o.cluster));
  return (app: string): string[] => [...(byApp.get(app) ?? [])].sort(compareStrings);
}

/** The app/cluster pairs a batch covers: its clusters, or everywhere the app is placed. */
export function batchPairs(
  batch: MigrationBatch,
  clustersOf: (app: string) => readonly string[],
): { app: string; cluster: string }[] {
  return batch.apps.flatMap((app) =>
    [...clustersOf(app)]
      .sort(compareStrings)
      .filter((cluster) => !batch.clusters || batch.clusters.includes(cluster))
      .map((cluster) => ({ app, cluster })),
  );
}

// The pairs a batch covers, with their health.
function pairsOf(batch: MigrationBatch, input: MigrationInput): Record<string, Record<string, HealthStatus>> {
  const pairs: Record<string, Record<string, HealthStatus>> = {};
  for (const app of batch.apps) pairs[app] = {};
  for (const { app, cluster } of batchPairs(batch, input.clustersOf))
    (pairs[app] as Record<string, HealthStatus>)[cluster] = input.report(app, cluster)?.health ?? "Unknown";
  return pairs;
}

/**
 * What a pull-mode agent may do with each app in its cluster, from the Migrations of the rendered
 * source and their status as the controller recorded it (status/migrations/): the same gates the
 * controller gives its own sync. A batch with no recorded status yet holds its apps; pairs detached
 * before are detached again (a no-op once their objects left the inventory). Pure.
 */
export function gatesForCluster(
  cluster: string,
  migrations: readonly Migration[],
  status: (name: string) => MigrationStatus | undefined,
): Map<string, Gate> {
  const gates = new Map<string, Gate>();
  const byName = [...migrations].sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : 1));
  // The first migration (by name) that claims an app decides it, as in advanceMigrations.
  for (const migration of byName)
    for (const [app, gate] of migrationGates(cluster, migration, status(migration.metadata.name)))
      if (!gates.has(app)) gates.set(app, gate);
  return gates;
}

// One migration's gates in one cluster; within a migration a later batch decides, as in advanceMigration.
function migrationGates(
  cluster: string,
  migration: Migration,
  recorded: MigrationStatus | undefined,
): Map<string, Gate> {
  const name = migration.metadata.name;
  const own = new Map<string, Gate>();
  for (const batch of migration.spec.batches) {
    if (batch.clusters && !batch.clusters.includes(cluster)) continue;
    const state = recorded?.batches.find((b) => b.name === batch.name);
    const gate: Gate = state
      ? gateOf(state, migration)
      : { action: "hold", reason: `migration ${name}/${batch.name} has not started` };
    for (const app of batch.apps) own.set(app, gate);
  }
  for (const key of recorded?.detached ?? []) {
    const slash = key.lastIndexOf("/");
    const app = key.slice(0, slash);
    if (key.slice(slash + 1) === cluster && !own.has(app))
      own.set(app, { action: "detach", reason: `migration ${name}: detached` });
  }
  return own;
}

function gateOf(batch: BatchStatus, migration: Migration): Gate {
  const name = `${migration.metadata.name}/${batch.name}`;
  switch (batch.state) {
    case "Syncing":
    case "Observing":
    case "Succeeded":
    case "Failed":
      return { action: "sync", adopt: migration.spec.conflictResolution !== "Abort" };
    case "RolledBack":
      return { action: "detach", reason: `migration ${name} rolled back` };
    case "WaitingApproval":
      return { action: "hold", reason: `migration ${name} waits for approval` };
    default:
      return { action: "hold", reason: `migration ${name} ${batch.reason ?? "has not started"}` };
  }
}

/** A batch that has started: its apps were adopted (and are managed unless rolled back). */
export function isStarted(state: BatchState | undefined): boolean {
  return state === "Syncing" || state === "Observing" || state === "Succeeded" || state === "Failed";
}

/** The app/cluster pairs a batch's status records. */
export function statusPairs(batch: BatchStatus): { app: string; cluster: string }[] {
  return Object.entries(batch.apps).flatMap(([app, clusters]) =>
    Object.keys(clusters).map((cluster) => ({ app, cluster })),
  );
}

function keysOf(batch: BatchStatus): string[] {
  return statusPairs(batch).map((p) => pairKey(p.app, p.cluster));
}

function firstWith(
  pairs: Record<string, Record<string, HealthStatus>>,
  test: (health: HealthStatus, app: string, cluster: string) => boolean,
): string | undefined {
  for (const [app, clusters] of Object.entries(pairs))
    for (const [cluster, health] of Object.entries(clusters))
      if (test(health, app, cluster)) return `${app} in ${cluster} ${health}`;
  return undefined;
}

/**
 * The part of recorded batches the source approves, for a status read from a branch gitfleet cannot
 * vouch for: a batch counts as started only when its spec approves it and every batch before it
 * Succeeded; other recorded progress is dropped, so the batch starts over from what the source
 * says. `stands` names started states kept regardless (a migration's RolledBack). Pure.
 */
export function approvedBatches<B extends { readonly name: string; readonly state: BatchState }>(
  spec: readonly { readonly name: string; readonly approved?: boolean | undefined }[],
  recorded: readonly B[],
  stands: (state: BatchState) => boolean = () => false,
): B[] {
  const batches: B[] = [];
  let earlierSucceeded = true;
  for (const batch of spec) {
    const status = recorded.find((b) => b.name === batch.name);
    const started = status !== undefined && isStarted(status.state) && !stands(status.state);
    if (status && (!started || (batch.approved === true && earlierSucceeded))) batches.push(status);
    earlierSucceeded &&= status?.state === "Succeeded" && batch.approved === true;
  }
  return batches;
}
