import { describeIdentity } from "../model/identity.js";
import {
  type AppInCluster,
  type AppPass,
  type HookRecord,
  type HookRun,
  hookKey,
  type PassView,
  planAppPass,
} from "./app-pass.js";
import type { DesiredObject } from "./desired-objects.js";
import { worstHealth } from "./health.js";
import { holdsAsRendered, shapeOf } from "./rendering-shape.js";
import type { Hold } from "./sync-result.js";

/**
 * One pass of a cluster's sync, app by app (app-pass.ts), with the order between apps: an app waits
 * until every app it depends on stands Healthy in this cluster at its rendered commit (its objects
 * applied as rendered and Healthy, its hooks done). Apps the rollout, a migration, a suspend or a
 * window holds are left out: they keep what they run. Pure.
 */
export interface ClusterPass {
  /** Objects left as they run this pass, by identity, and why (dependencies, hooks, waves). */
  readonly heldObjects: Map<string, Hold>;
  /** Objects to apply or compare this pass (hooks and skipped objects are not among them). */
  readonly objects: DesiredObject[];
  readonly start: HookRun[];
  /** Every hook run with its outcome, per app. */
  readonly hooks: Map<string, readonly HookRun[]>;
  /** Each app's rendering in the cluster (what its hooks run for). */
  readonly revisions: Map<string, string>;
  /** Records to keep, per app with hooks. */
  readonly records: Map<string, HookRecord>;
  /** Apps whose leftovers may not be pruned this pass (a wave or hook still ahead). */
  readonly keepLeftovers: Set<string>;
  waiting: boolean;
}

export interface ClusterPassInput {
  readonly cluster: string;
  readonly desired: readonly DesiredObject[];
  /** Apps left as they run this pass (rollout, migration, suspend, window). */
  readonly heldApps: ReadonlySet<string>;
  readonly dependsOn: ReadonlyMap<string, readonly string[]>;
  readonly view: Omit<PassView, "record">;
  readonly records: ReadonlyMap<string, HookRecord>;
}

/** The app's objects in the cluster, by role, and its rendering (replicas aside). */
export function appsInCluster(desired: readonly DesiredObject[]): Map<string, AppInCluster> {
  const byApp = new Map<string, DesiredObject[]>();
  for (const d of desired) {
    const list = byApp.get(d.app);
    if (list) list.push(d);
    else byApp.set(d.app, [d]);
  }
  const apps = new Map<string, AppInCluster>();
  for (const [app, all] of byApp) {
    const rendered = all.filter((d) => d.role.kind !== "skip");
    apps.set(app, {
      app,
      objects: rendered.filter((d) => d.role.kind === "object"),
      hooks: rendered.filter((d) => d.role.kind === "hook"),
      // What hooks run for: only an app with hooks needs it (a digest of every object costs).
      revision: rendered.some((d) => d.role.kind === "hook") ? shapeOf(rendered) : "",
    });
  }
  return apps;
}

export function planClusterPass(input: ClusterPassInput): ClusterPass {
  const apps = appsInCluster(input.desired);
  const viewOf = (app: string): PassView => ({ ...input.view, record: input.records.get(app) });
  const pass: ClusterPass = {
    heldObjects: new Map(),
    objects: input.desired.filter((d) => d.role.kind === "object"),
    start: [],
    hooks: new Map(),
    revisions: new Map([...apps].map(([name, app]) => [name, app.revision])),
    records: new Map(),
    keepLeftovers: new Set(),
    waiting: false,
  };
  for (const [name, app] of apps) {
    const record = input.records.get(name);
    if (input.heldApps.has(name)) {
      pass.keepLeftovers.add(name);
      if (record) pass.records.set(name, record);
      continue;
    }
    const waitingFor = dependencyHold(input, apps, name, viewOf);
    if (waitingFor) {
      for (const o of app.objects) pass.heldObjects.set(o.identity, { reason: waitingFor, by: "dependency" });
      pass.keepLeftovers.add(name);
      if (record) pass.records.set(name, record);
      pass.waiting = true;
      continue;
    }
    add(pass, name, planAppPass(app, viewOf(name)));
  }
  return pass;
}

function add(pass: ClusterPass, app: string, step: AppPass): void {
  for (const [identity, hold] of step.held) pass.heldObjects.set(identity, hold);
  pass.start.push(...step.start);
  if (step.hooks.length > 0) pass.hooks.set(app, step.hooks);
  if (step.record) pass.records.set(app, step.record);
  if (!step.prune) pass.keepLeftovers.add(app);
  if (step.waiting) pass.waiting = true;
}

// "waiting for mysql in idc-east-1 (…)" when a dependency does not stand Healthy at its rendering.
function dependencyHold(
  input: ClusterPassInput,
  apps: ReadonlyMap<string, AppInCluster>,
  app: string,
  viewOf: (app: string) => PassView,
): string | undefined {
  for (const dependency of input.dependsOn.get(app) ?? []) {
    const waiting = `waiting for ${dependency} in ${input.cluster}`;
    const placed = apps.get(dependency);
    if (!placed) return `${waiting} (${dependency} is not placed in ${input.cluster})`;
    const short = shortOf(placed, viewOf(dependency));
    if (short) return `${waiting} (${short})`;
  }
  return undefined;
}

/** Why an app does not stand Healthy at its rendering in the cluster, or undefined when it does. */
export function shortOf(app: AppInCluster, view: PassView): string | undefined {
  const behind = app.objects.filter((o) => !holdsAsRendered(o, view.inventory.get(o.identity)?.digest));
  if (behind.length > 0)
    return `${behind.length} of ${app.objects.length} objects not at the rendered commit yet`;
  const health = worstHealth(
    app.objects.map((o) => {
      const h = view.health(o, view.live.get(o.identity));
      return h.reason ? { status: h.status, reason: `${describeIdentity(o.identity)}: ${h.reason}` } : h;
    }),
  );
  if (health.status !== "Healthy") return `${health.status}${health.reason ? `: ${health.reason}` : ""}`;
  return hooksShort(app, view.record?.revision === app.revision ? view.record : undefined);
}

// Why the app's hooks have not all succeeded for its rendering, or undefined when they have.
function hooksShort(app: AppInCluster, record: HookRecord | undefined): string | undefined {
  if (record?.failed) return record.failed;
  const open = app.hooks.flatMap((hook) =>
    hook.role.kind === "hook"
      ? hook.role.hook.phases
          .filter((phase) => phase !== "SyncFail")
          .filter((phase) => record?.outcomes[hookKey(phase, hook.identity)] !== "Succeeded")
          .map((phase) => `${phase} hook ${describeIdentity(hook.identity)} not done`)
      : [],
  );
  return open[0];
}
