import { compareVersions, parseGitVersion, parseKubeVersion } from "../apimachinery/kube-version.js";
import { controlPlaneAppName } from "../model/controlplane/app-names.js";
import { smallest } from "../model/extremes.js";
import { compareStrings } from "../model/file-tree.js";
import type { HealthStatus } from "../model/health.js";
import type { ControlPlaneUpgrade, Migration } from "../model/types.js";
import {
  advanceMigration,
  type BatchStatus,
  isStarted,
  type MigrationStatus,
  observeMs,
  type PairReport,
} from "./migration-state.js";

// A ControlPlaneUpgrade's batches run through the Migration state machine (ADR 0006, 0011): each
// batch's "pairs" are its hosted clusters' control-plane apps in their hosts; a pair is synced once
// the control plane runs the upgrade's version everywhere (the hosted cluster's /version reports it,
// nothing is held, every component Healthy). What the state decides is a version: a started batch's
// clusters render with the upgrade's, the others (and a rolled-back batch's) with their class's.
// Pure: the status it returns is status/upgrades/<name>.yaml, read back after a restart.

/** One batch as status/upgrades/<name>.yaml records it: a migration batch's state, by hosted cluster. */
export interface UpgradeBatchStatus extends Omit<BatchStatus, "apps"> {
  /** Per hosted cluster, its control plane's health as last seen. */
  readonly clusters: Readonly<Record<string, HealthStatus>>;
}

/** A ControlPlaneUpgrade's status: the version it moves to and its batches. */
export interface UpgradeStatus {
  readonly upgrade: string;
  readonly version: string;
  readonly batches: readonly UpgradeBatchStatus[];
}

/** What a host and a hosted cluster report about one control plane. */
export interface ControlPlaneReport {
  /** The worst health of the control plane's objects in the host. */
  readonly health: HealthStatus;
  /** Every object applied as rendered: none held for the upgrade order. */
  readonly settled: boolean;
  /** The hosted cluster's /version (gitVersion), when it answered. */
  readonly version?: string;
  /** Why a component cannot run (crash-looping, an image that cannot be pulled), if one cannot. */
  readonly failure?: string;
}

export interface UpgradeInput {
  readonly upgrade: ControlPlaneUpgrade;
  readonly previous: UpgradeStatus | undefined;
  /** The valid source commit rendered now (approvals are read from it). */
  readonly sourceCommit: string;
  /** The host of a hosted cluster (undefined: not a hosted cluster). */
  readonly hostOf: (cluster: string) => string | undefined;
  readonly report: (cluster: string) => ControlPlaneReport | undefined;
  /** Milliseconds since the epoch. */
  readonly now: number;
}

export interface UpgradeOutcome {
  readonly status: UpgradeStatus;
  /** A line per batch state change. */
  readonly changes: readonly string[];
}

const PREFIX = controlPlaneAppName("");

/**
 * Advances a ControlPlaneUpgrade one step, with a Migration's semantics: a batch starts when it is
 * approved and every batch before it Succeeded; it observes once each of its control planes runs the
 * version Healthy, and succeeds when they stayed so for `observe` (default 10m); a component that
 * cannot run fails it — onFailure Halt keeps the version and holds the later batches, Rollback returns
 * the batch to its class's version. `rollback: true` does that on purpose. A status recorded for
 * another version is not continued: the upgrade starts over. Pure.
 */
export function advanceUpgrade(input: UpgradeInput): UpgradeOutcome {
  const { upgrade } = input;
  const name = upgrade.metadata.name;
  const previous = input.previous?.version === upgrade.spec.version ? input.previous : undefined;
  const outcome = advanceMigration({
    migration: asMigration(upgrade),
    previous: previous ? toMigrationStatus(previous, input.hostOf) : undefined,
    sourceCommit: input.sourceCommit,
    clustersOf: (app) => {
      const host = input.hostOf(app.slice(PREFIX.length));
      return host ? [host] : [];
    },
    report: (app) =>
      pairReport(input.report(app.slice(PREFIX.length)), upgrade.spec.version, input.sourceCommit),
    now: input.now,
    doing: `upgrading to ${upgrade.spec.version}`,
  });
  const batches = outcome.status.batches.map((batch) => {
    const before = previous?.batches.find((b) => b.name === batch.name);
    return fromBatch(batch, before, input);
  });
  const changes = batches.flatMap((batch) => {
    const before = previous?.batches.find((b) => b.name === batch.name)?.state;
    if (before === batch.state) return [];
    return [
      `${name}/${batch.name}: ${before ?? "new"} → ${batch.state}${batch.reason ? ` (${batch.reason})` : ""}`,
    ];
  });
  return { status: { upgrade: name, version: upgrade.spec.version, batches }, changes };
}

// A batch's status with clusters for apps; a failure says which control plane and why.
function fromBatch(
  batch: BatchStatus,
  before: UpgradeBatchStatus | undefined,
  input: UpgradeInput,
): UpgradeBatchStatus {
  const clusters: Record<string, HealthStatus> = {};
  for (const [app, hosts] of Object.entries(batch.apps)) {
    const health = Object.values(hosts)[0];
    if (health) clusters[app.slice(PREFIX.length)] = health;
  }
  const failed = batch.state === "Failed" || batch.state === "RolledBack";
  const entered = before?.state !== batch.state;
  const why =
    failed && entered && !input.upgrade.spec.batches.find((b) => b.name === batch.name)?.rollback
      ? failureReason(clusters, input)
      : undefined;
  const { apps: _, ...rest } = batch;
  return { ...rest, ...(why ? { reason: why } : {}), clusters };
}

function failureReason(
  clusters: Readonly<Record<string, HealthStatus>>,
  input: UpgradeInput,
): string | undefined {
  for (const cluster of Object.keys(clusters).sort(compareStrings)) {
    const report = input.report(cluster);
    if (report?.failure || report?.health === "Degraded")
      return `${cluster}: ${report.failure ?? "Degraded"}; onFailure: ${input.upgrade.spec.onFailure ?? "Halt"}`;
  }
  return undefined;
}

// What the Migration state machine reads for one control plane: Healthy at the source commit once
// it runs the version everywhere, Degraded (with why) when a component cannot run.
function pairReport(
  report: ControlPlaneReport | undefined,
  version: string,
  sourceCommit: string,
): PairReport | undefined {
  if (!report) return undefined;
  if (report.failure) return { health: "Degraded", conflict: report.failure };
  const target = parseKubeVersion(version);
  const running = report.version === undefined ? undefined : parseGitVersion(report.version);
  const upgraded =
    report.settled &&
    report.health === "Healthy" &&
    target !== undefined &&
    running !== undefined &&
    compareVersions(running, target) === 0;
  if (upgraded) return { health: "Healthy", syncedCommit: sourceCommit };
  return { health: report.health === "Healthy" ? "Progressing" : report.health };
}

/** The upgrade as the Migration it runs like: each batch's apps are its clusters' control planes. */
export function asMigration(upgrade: ControlPlaneUpgrade): Migration {
  const { spec } = upgrade;
  return {
    ...upgrade,
    kind: "Migration",
    spec: {
      ...(spec.onFailure ? { onFailure: spec.onFailure } : {}),
      ...(spec.observe ? { observe: spec.observe } : {}),
      batches: spec.batches.map((batch) => ({
        name: batch.name,
        apps: batch.clusters.map(controlPlaneAppName),
        ...(batch.approved === undefined ? {} : { approved: batch.approved }),
        ...(batch.observe === undefined ? {} : { observe: batch.observe }),
        ...(batch.rollback === undefined ? {} : { rollback: batch.rollback }),
      })),
    },
  } as Migration;
}

/** An upgrade's status in the Migration state machine's terms (clusters whose host is unknown are left out). */
export function toMigrationStatus(
  status: UpgradeStatus,
  hostOf: (cluster: string) => string | undefined,
): MigrationStatus {
  return {
    migration: status.upgrade,
    detached: [],
    batches: status.batches.map(({ clusters, ...batch }) => {
      const apps: Record<string, Record<string, HealthStatus>> = {};
      for (const [cluster, health] of Object.entries(clusters)) {
        const host = hostOf(cluster);
        if (host) apps[controlPlaneAppName(cluster)] = { [host]: health };
      }
      return { ...batch, apps };
    }),
  };
}

/**
 * The version each hosted cluster renders with because of an upgrade: the upgrade's version for the
 * clusters of its started batches (not rolled back) whose status was recorded for that version. The
 * first upgrade by name that claims a cluster decides (validation refuses a cluster in two). Pure.
 */
export function upgradeVersions(
  upgrades: readonly ControlPlaneUpgrade[],
  status: (name: string) => UpgradeStatus | undefined,
): Map<string, string> {
  const versions = new Map<string, string>();
  for (const upgrade of [...upgrades].sort((a, b) => compareStrings(a.metadata.name, b.metadata.name))) {
    const recorded = status(upgrade.metadata.name);
    if (!recorded || recorded.version !== upgrade.spec.version) continue;
    for (const cluster of upgradedClusters(upgrade, recorded))
      if (!versions.has(cluster)) versions.set(cluster, upgrade.spec.version);
  }
  return versions;
}

// The clusters of an upgrade's batches that started and were not rolled back.
function upgradedClusters(upgrade: ControlPlaneUpgrade, recorded: UpgradeStatus): string[] {
  return upgrade.spec.batches.flatMap((batch) =>
    isStarted(recorded.batches.find((b) => b.name === batch.name)?.state) ? batch.clusters : [],
  );
}

/** When the next observation window of any upgrade ends (ms), if one is running. */
export function nextUpgradeWindowEnd(
  upgrades: readonly ControlPlaneUpgrade[],
  status: (name: string) => UpgradeStatus | undefined,
  now: number,
): number | undefined {
  const ends: number[] = [];
  for (const upgrade of upgrades) {
    const migration = asMigration(upgrade);
    for (const batch of status(upgrade.metadata.name)?.batches ?? []) {
      const spec = migration.spec.batches.find((b) => b.name === batch.name);
      if (batch.state !== "Observing" || !batch.observingSince || !spec) continue;
      ends.push(Date.parse(batch.observingSince) + observeMs(spec, migration));
    }
  }
  const future = ends.filter((t) => t > now);
  return smallest(future);
}
