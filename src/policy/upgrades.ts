import {
  advanceUpgrade,
  type ControlPlaneReport,
  nextUpgradeWindowEnd,
  type UpgradeStatus,
  upgradeVersions,
} from "../migrate/control-plane-upgrade.js";
import { approvedBatches } from "../migrate/migration-state.js";
import { controlPlaneAppName } from "../model/controlplane/app-names.js";
import { smallest } from "../model/extremes.js";
import { compareStrings } from "../model/file-tree.js";
import type { ControlPlaneUpgrade, FleetModel } from "../model/types.js";
import { UPGRADES_DIRECTORY } from "../status/layout.js";
import { readUpgradeStatus, upgradeStatusPath, upgradeStatusText } from "../status/upgrade-file.js";
import { worstHealth } from "../sync/health.js";
import type { ClusterSyncResult } from "../sync/sync-result.js";
import { type BatchRound, definePolicy, readNamed, stepOutcome } from "./policy.js";

/** Every ControlPlaneUpgrade advanced one step, and what the render and the status branch get from it. */
export interface UpgradesRound extends BatchRound<UpgradeStatus> {
  /** Per hosted cluster, the version its upgrade's started batch gives it. */
  readonly versions: ReadonlyMap<string, string>;
  /** Per hosted cluster, since when (ms) a component of its control plane cannot run. */
  readonly failingSince: ReadonlyMap<string, number>;
}

export interface UpgradesInput {
  readonly model: FleetModel;
  readonly renderedCommit: string;
  /** The last status of each upgrade (in memory, else from status/upgrades/ on the branch). */
  readonly previous: (name: string) => UpgradeStatus | undefined;
  /** The members' latest sync results, by cluster. */
  readonly results: ReadonlyMap<string, ClusterSyncResult>;
  /** From the last round: since when each control plane has had a component that cannot run. */
  readonly failingSince: ReadonlyMap<string, number>;
  readonly now: number;
}

/**
 * How long a component must keep failing (crash-looping, its image not pullable) before it fails an
 * upgrade batch: an old controller-manager that restarts once while its API server rolls is not a
 * failed upgrade; an API server that crash-loops on a flag for a minute is.
 */
export const FAILURE_GRACE_MS = 60_000;

/** Advances every ControlPlaneUpgrade of the fleet with what the hosts and hosted clusters report. Pure. */
export function advanceUpgrades(input: UpgradesInput): UpgradesRound {
  const { model, now } = input;
  const hosts = new Map(
    model.clusters.flatMap((c) => (c.spec.controlPlane ? [[c.metadata.name, c.spec.controlPlane.host]] : [])),
  );
  const failingSince = new Map<string, number>();
  const reports = new Map<string, ControlPlaneReport | undefined>();
  const report = (cluster: string): ControlPlaneReport | undefined => {
    if (!reports.has(cluster)) reports.set(cluster, graced(cluster, hosts.get(cluster), input, failingSince));
    return reports.get(cluster);
  };
  const statuses = new Map<string, UpgradeStatus>();
  const changes: string[] = [];
  for (const upgrade of [...model.controlPlaneUpgrades].sort((a, b) =>
    compareStrings(a.metadata.name, b.metadata.name),
  )) {
    const name = upgrade.metadata.name;
    const outcome = advanceUpgrade({
      upgrade,
      previous: input.previous(name),
      sourceCommit: input.renderedCommit,
      hostOf: (cluster) => hosts.get(cluster),
      report,
      now,
    });
    statuses.set(name, outcome.status);
    changes.push(...outcome.changes);
  }
  const batches = [...statuses.values()].flatMap((s) => s.batches);
  const graceEnds = [...failingSince.values()].map((t) => t + FAILURE_GRACE_MS).filter((t) => t > now);
  const windowEnd = nextUpgradeWindowEnd(model.controlPlaneUpgrades, (name) => statuses.get(name), now);
  const wakes = [...graceEnds, ...(windowEnd === undefined ? [] : [windowEnd])];
  return {
    statuses,
    versions: upgradeVersions(model.controlPlaneUpgrades, (name) => statuses.get(name)),
    changes,
    active: batches.some((b) => b.state === "Syncing" || b.state === "Observing"),
    wakeAt: smallest(wakes),
    failingSince,
  };
}

// A control plane's report, its failure kept back until it lasted the grace (Progressing until then).
function graced(
  cluster: string,
  host: string | undefined,
  input: UpgradesInput,
  failingSince: Map<string, number>,
): ControlPlaneReport | undefined {
  const seen = controlPlaneReport(cluster, host, input.results);
  if (!seen?.failure || lasting(cluster, seen.failure, input, failingSince)) return seen;
  const { failure: _, ...rest } = seen;
  return { ...rest, health: rest.health === "Degraded" ? "Degraded" : "Progressing" };
}

/**
 * A control plane's failure once it lasted FAILURE_GRACE_MS, else undefined; records in
 * `failingSince` since when it fails (one that recovers is left out of it). Pure but for that map.
 */
export function lasting(
  cluster: string,
  failure: string | undefined,
  input: { readonly failingSince: ReadonlyMap<string, number>; readonly now: number },
  failingSince: Map<string, number>,
): string | undefined {
  if (!failure) return undefined;
  const since = input.failingSince.get(cluster) ?? input.now;
  failingSince.set(cluster, since);
  return input.now - since >= FAILURE_GRACE_MS ? failure : undefined;
}

/**
 * One control plane as its host's sync and the hosted cluster's own report it: the worst health of
 * its objects in the host, whether any is held, the first component that cannot run, and the hosted
 * cluster's /version. Undefined while the host was not reached or has none of its objects. Pure.
 */
export function controlPlaneReport(
  cluster: string,
  host: string | undefined,
  results: ReadonlyMap<string, ClusterSyncResult>,
): ControlPlaneReport | undefined {
  const hostResult = host === undefined ? undefined : results.get(host);
  if (!hostResult?.reachable) return undefined;
  const app = controlPlaneAppName(cluster);
  const objects = hostResult.objects.filter((o) => o.app === app);
  if (objects.length === 0) return undefined;
  const stuck = objects.find((o) => (o.degradedReplicas ?? 0) > 0);
  const version = results.get(cluster)?.version;
  return {
    health: worstHealth(objects.map((o) => o.health)).status,
    settled: objects.every((o) => o.action !== "held"),
    ...(version === undefined ? {} : { version }),
    ...(stuck
      ? {
          failure: `${componentOf(stuck.identity)} ${stuck.degradedReplicas} ${stuck.degradedReason ?? "cannot run"}`,
        }
      : {}),
  };
}

// "apps/Deployment/<namespace>/kube-apiserver" → "Deployment kube-apiserver".
function componentOf(identity: string): string {
  const parts = identity.split("/");
  return `${parts[1] ?? ""} ${parts[3] ?? ""}`.trim();
}

/** An upgrade's status as the status branch holds it (status/upgrades/<name>.yaml). */
export function recordedUpgrade(files: ReadonlyMap<string, string>, name: string): UpgradeStatus | undefined {
  return readUpgradeStatus(files.get(upgradeStatusPath(name)));
}

/**
 * The part of a recorded upgrade status the source approves, for a branch gitfleet cannot vouch for:
 * a batch counts as started only when the upgrade approves it and every batch before it Succeeded;
 * other recorded progress is dropped, so the batch starts over from what the source says. Pure.
 */
export function approvedUpgradePart(
  upgrade: ControlPlaneUpgrade,
  recorded: UpgradeStatus | undefined,
): UpgradeStatus | undefined {
  if (!recorded) return undefined;
  return { ...recorded, batches: approvedBatches(upgrade.spec.batches, recorded.batches) };
}

/**
 * The versions the upgrades give hosted clusters as the status branch records them (a restarted
 * controller's first render, and `gitfleet plan`); `trusted` false keeps only what the source
 * approves. Pure.
 */
export function recordedUpgradeVersions(
  model: FleetModel,
  files: ReadonlyMap<string, string>,
  trusted: boolean,
): Map<string, string> {
  return upgradeVersions(model.controlPlaneUpgrades, (name) => {
    const recorded = recordedUpgrade(files, name);
    const upgrade = model.controlPlaneUpgrades.find((u) => u.metadata.name === name);
    return trusted || !upgrade ? recorded : approvedUpgradePart(upgrade, recorded);
  });
}

/**
 * What merging a change does to the upgrades, for `gitfleet plan`: each upgrade advanced once from
 * what the status branch records, with no new report (a batch the change approves, behind batches
 * that Succeeded, starts; one it rolls back returns). The versions the head renders with, and a line
 * per batch state change. Pure.
 */
export function plannedUpgrades(
  model: FleetModel,
  files: ReadonlyMap<string, string>,
  now: number,
): { readonly versions: ReadonlyMap<string, string>; readonly changes: readonly string[] } {
  if (model.controlPlaneUpgrades.length === 0) return { versions: new Map(), changes: [] };
  const round = advanceUpgrades({
    model,
    renderedCommit: "the merge",
    previous: (name) => recordedUpgrade(files, name),
    results: new Map(),
    failingSince: new Map(),
    now,
  });
  return { versions: round.versions, changes: round.changes };
}

/** Control-plane upgrades as a policy: status/upgrades/, the hosted clusters' versions what it gives. */
export const upgradesPolicy = definePolicy<UpgradeStatus, ReadonlyMap<string, number>>({
  writer: "upgrades",
  kind: "upgrade",
  names: (model) => model.controlPlaneUpgrades.map((u) => u.metadata.name),
  read: (files) => readNamed(files, UPGRADES_DIRECTORY, readUpgradeStatus),
  write: (name, status) => [upgradeStatusPath(name), upgradeStatusText(status)],
  vouch(model, name, recorded) {
    const upgrade = model.controlPlaneUpgrades.find((u) => u.metadata.name === name);
    return upgrade ? approvedUpgradePart(upgrade, recorded) : recorded;
  },
  step(input) {
    const round = advanceUpgrades({
      model: input.model,
      renderedCommit: input.renderedCommit,
      previous: (name) => input.previous.get(name),
      results: input.results,
      failingSince: input.memory ?? new Map(),
      now: input.now,
    });
    return stepOutcome(round, { controlPlaneVersions: round.versions }, round.failingSince);
  },
  gives: (model, statuses) => ({
    controlPlaneVersions: upgradeVersions(model.controlPlaneUpgrades, (name) => statuses.get(name)),
  }),
});
