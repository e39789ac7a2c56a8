import { asMap } from "../apimachinery/json.js";
import type { FleetModel } from "../model/types.js";
import type { WorkloadDecision } from "../render/render-result.js";
import { PLACEMENT_ANNOTATION } from "../render/tracking.js";
import type { DesiredObject } from "./desired-objects.js";
import type { Inventory } from "./inventory.js";
import type { Hold } from "./sync-result.js";
import { windowVerdict } from "./sync-windows.js";

/**
 * What people hold back in one cluster before a sync: a suspended Cluster, App or Placement (left as
 * it runs, drift reported), and the sync windows closed at `now`. A change that only moves replicas
 * for failover passes the windows that do not say blockFailover. Pure.
 */
export function controlHolds(
  model: FleetModel,
  cluster: string,
  desired: readonly DesiredObject[],
  now: number,
  failover: (app: string) => FailoverHere,
): { apps: Map<string, Hold>; objects: Map<string, Hold> } {
  const apps = new Map<string, Hold>();
  const facts = factsOf(model);
  const clusterSuspended = facts.suspendedClusters.has(cluster);
  const windows = model.fleet?.spec.syncWindows ?? [];
  for (const app of new Set(desired.map((d) => d.app))) {
    const hold = clusterSuspended
      ? { reason: `cluster ${cluster} is suspended (Cluster spec.suspend)`, by: "suspend" as const }
      : facts.suspendedApps.has(app)
        ? { reason: "suspended (App spec.suspend)", by: "suspend" as const }
        : windows.length > 0
          ? windowHold(model, app, cluster, now, failover(app))
          : undefined;
    if (hold) apps.set(app, hold);
  }
  return { apps, objects: placementHolds(facts.suspendedPlacements, desired, apps) };
}

interface ControlFacts {
  readonly suspendedApps: ReadonlySet<string>;
  readonly suspendedPlacements: ReadonlySet<string>;
  readonly suspendedClusters: ReadonlySet<string>;
}

// What a model suspends, read once per model (a sync asks for every cluster of the fleet).
const known = new WeakMap<FleetModel, ControlFacts>();

function factsOf(model: FleetModel): ControlFacts {
  const cached = known.get(model);
  if (cached) return cached;
  const facts = {
    suspendedApps: new Set(model.apps.filter((a) => a.definition?.spec.suspend === true).map((a) => a.name)),
    suspendedPlacements: new Set(
      model.placements.filter((p) => p.spec.suspend === true).map((p) => p.metadata.name),
    ),
    suspendedClusters: new Set(
      model.clusters.filter((c) => c.spec.suspend === true).map((c) => c.metadata.name),
    ),
  };
  known.set(model, facts);
  return facts;
}

// Objects a suspended Placement places (in apps not held as a whole).
function placementHolds(
  suspended: ReadonlySet<string>,
  desired: readonly DesiredObject[],
  apps: ReadonlyMap<string, Hold>,
): Map<string, Hold> {
  const objects = new Map<string, Hold>();
  if (suspended.size === 0) return objects;
  for (const d of desired) {
    const placement = String(asMap(asMap(d.object.metadata).annotations)[PLACEMENT_ANNOTATION] ?? "")
      .split(",")
      .find((p) => suspended.has(p));
    if (placement && !apps.has(d.app))
      objects.set(d.identity, { reason: `suspended (Placement ${placement} spec.suspend)`, by: "suspend" });
  }
  return objects;
}

/**
 * What failover does to an app in a cluster: nothing, moves its replicas (the cluster already runs
 * it: only replica counts may change in a window), or brings it to a cluster that runs none of it.
 */
export type FailoverHere = "none" | "moves" | "destination";

// A closed window's hold: failover passes the windows that do not say blockFailover — a cluster
// failover brings the app to takes it whole; elsewhere only replica counts change (exceptScale).
function windowHold(
  model: FleetModel,
  app: string,
  cluster: string,
  now: number,
  failover: FailoverHere,
): Hold | undefined {
  const windows = model.fleet?.spec.syncWindows;
  const strict = windowVerdict(windows, app, cluster, now);
  if (strict.open) return undefined;
  const hold = (verdict: Exclude<typeof strict, { open: true }>, exceptScale: boolean): Hold => ({
    reason: `sync window: ${verdict.reason}`,
    by: "window",
    ...(verdict.opensAt === undefined ? {} : { until: verdict.opensAt }),
    ...(exceptScale ? { exceptScale } : {}),
  });
  if (failover === "none") return hold(strict, false);
  const forFailover = windowVerdict(windows, app, cluster, now, true);
  if (!forFailover.open) return hold(forFailover, false);
  return failover === "destination" ? undefined : hold(strict, true);
}

/** What failover does to the app in a cluster, from the render's decisions and what the cluster runs. */
export function failoverHere(
  decisions: readonly WorkloadDecision[],
  inventory: Inventory | undefined,
  app: string,
): FailoverHere {
  const moved = decisions.some((d) => d.app === app && (d.failover?.movedOff.length ?? 0) > 0);
  if (!moved) return "none";
  return [...(inventory?.values() ?? [])].some((e) => e.app === app) ? "moves" : "destination";
}

/** Adds suspends' and windows' holds to a cluster's: a migration's hold stays (it may detach the app). */
export function addControlHolds(held: Map<string, Hold>, controls: ReadonlyMap<string, Hold>): void {
  for (const [app, hold] of controls) if (held.get(app)?.by !== "migration") held.set(app, hold);
}

/** Per app, the apps it depends on (App spec.dependsOn). */
export function dependenciesOf(model: FleetModel): Map<string, readonly string[]> {
  const dependencies = new Map<string, readonly string[]>();
  for (const app of model.apps) {
    const dependsOn = app.definition?.spec.dependsOn;
    if (dependsOn && dependsOn.length > 0) dependencies.set(app.name, dependsOn);
  }
  return dependencies;
}

/** True when the app is suspended by its App, by a Placement that places it, or in the cluster. */
export function suspendedApps(model: FleetModel): Set<string> {
  const placements = model.placements.filter((p) => p.spec.suspend === true);
  return new Set(
    model.apps
      .filter(
        (a) => a.definition?.spec.suspend === true || placements.some((p) => p.spec.apps?.includes(a.name)),
      )
      .map((a) => a.name),
  );
}
