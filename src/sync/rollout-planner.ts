import { asMap } from "../apimachinery/json.js";
import { parseDuration } from "../model/duration.js";
import type { FleetModel, RolloutSpec } from "../model/types.js";
import { PLACEMENT_ANNOTATION } from "../render/tracking.js";
import type { DesiredObject } from "./desired-objects.js";
import type { InventoryEntry } from "./inventory.js";
import { holdsAsRendered, shapeOf } from "./rendering-shape.js";
import { type ClusterRolloutState, rolloutGate, rolloutOrder } from "./rollout.js";
import type { ClusterSyncResult } from "./sync-result.js";

/** Per cluster, the apps whose current rendering waits there, and why. */
export type Holds = Map<string, Map<string, string>>;

/**
 * Decides, before each sync, which clusters may take each app's current rendering: the app's
 * rollout (its Placement's, else fleet.yaml's) applied to where every cluster stands — whether it
 * holds the rendering (its inventory digests match) and whether the app is Healthy there. Remembers
 * since when each cluster has been updating, for the timeout; a new rendering starts afresh.
 */
export class RolloutPlanner {
  private readonly updatingSince = new Map<string, number>();
  /** Per "app cluster": the objects of the last rendering the cluster took. */
  private readonly taken = new Map<string, readonly DesiredObject[]>();

  plan(
    desired: ReadonlyMap<string, readonly DesiredObject[]>,
    model: FleetModel,
    results: ReadonlyMap<string, ClusterSyncResult>,
    now: number,
    movingOff: ReadonlyMap<string, ReadonlySet<string>> = new Map(),
  ): { holds: Holds; halted: Map<string, string> } {
    const holds: Holds = new Map();
    const halted = new Map<string, string>();
    for (const [app, byCluster] of appsByCluster(desired)) {
      const spec = rolloutOf(app, byCluster, model);
      if (!spec) continue;
      const gate = this.gate(app, byCluster, spec, { model, results, now, movingOff: movingOff.get(app) });
      for (const [cluster, reason] of gate.held) {
        const apps = holds.get(cluster) ?? new Map<string, string>();
        apps.set(app, reason);
        holds.set(cluster, apps);
      }
      if (gate.halted) halted.set(app, gate.halted);
    }
    return { holds, halted };
  }

  // One app's gate; notes when each allowed cluster started updating.
  private gate(
    app: string,
    byCluster: ReadonlyMap<string, readonly DesiredObject[]>,
    spec: RolloutSpec,
    where: {
      model: FleetModel;
      results: ReadonlyMap<string, ClusterSyncResult>;
      now: number;
      movingOff: ReadonlySet<string> | undefined;
    },
  ): ReturnType<typeof rolloutGate> {
    const { model, results, now } = where;
    const order = rolloutOrder(model.clusters, [...byCluster.keys()], spec);
    // A pull-mode cluster's agent applies every rendering as it comes: the rollout can neither hold
    // it back nor wait for it here, so it is passed over, as docs/sync.md says.
    const pulled = new Set(
      model.clusters.filter((c) => c.spec.connection?.mode === "pull").map((c) => c.metadata.name),
    );
    const states = new Map<string, ClusterRolloutState>();
    for (const cluster of order) {
      const state = this.state(app, cluster, byCluster.get(cluster) ?? [], results.get(cluster), now);
      const passedOver = where.movingOff?.has(cluster) === true || pulled.has(cluster);
      states.set(cluster, passedOver ? { ...state, passedOver: true } : state);
    }
    const gate = rolloutGate(order, spec, states, spec.timeout ? parseDuration(spec.timeout) : undefined);
    for (const cluster of gate.allowed) {
      const key = `${app} ${cluster} ${digestOf(byCluster.get(cluster) ?? [])}`;
      const state = states.get(cluster);
      if (state?.updated && state.healthy) this.updatingSince.delete(key);
      else if (!this.updatingSince.has(key)) this.updatingSince.set(key, now);
    }
    return gate;
  }

  private state(
    app: string,
    cluster: string,
    objects: readonly DesiredObject[],
    result: ClusterSyncResult | undefined,
    now: number,
  ): ClusterRolloutState {
    if (!result) return { updated: false, healthy: false };
    if (!result.reachable) return { updated: false, healthy: false, passedOver: true };
    const entries = entriesByApp(result.inventory).get(app) ?? [];
    const wanted = new Map(objects.map((o) => [o.identity, o.digest]));
    // Hooks and skipped objects never enter the inventory.
    const applied =
      objects.every(
        (o) => o.role.kind !== "object" || holdsAsRendered(o, result.inventory.get(o.identity)?.digest),
      ) && entries.every((e) => wanted.has(e.identity));
    // A new rendering that differs from the one the cluster took only in replica counts (an
    // autoscaler's, a failover's) is a scale, not a rollout: it is not held behind other clusters.
    // Compared only for a cluster that holds another rendering: the common case hashes nothing.
    const key = `${app} ${cluster}`;
    if (applied) this.taken.set(key, objects);
    const taken = this.taken.get(key);
    const updated = applied || (taken !== undefined && shapeOf(taken) === shapeOf(objects));
    const mine = result.objects.filter((o) => o.app === app);
    const healthy =
      mine.length > 0 && mine.every((o) => o.action !== "held" && o.health.status === "Healthy");
    const since = this.updatingSince.get(`${app} ${cluster} ${digestOf(objects)}`);
    return { updated, healthy, ...(since === undefined ? {} : { updatingForMs: now - since }) };
  }
}

function appsByCluster(
  desired: ReadonlyMap<string, readonly DesiredObject[]>,
): Map<string, Map<string, DesiredObject[]>> {
  const apps = new Map<string, Map<string, DesiredObject[]>>();
  for (const [cluster, objects] of desired)
    for (const object of objects) {
      const byCluster = apps.get(object.app) ?? new Map<string, DesiredObject[]>();
      add(byCluster, cluster, object);
      apps.set(object.app, byCluster);
    }
  return apps;
}

// The rollout of the first Placement (by name) of the app's objects that has one, else the fleet's default.
function rolloutOf(
  app: string,
  byCluster: ReadonlyMap<string, readonly DesiredObject[]>,
  model: FleetModel,
): RolloutSpec | undefined {
  const names = new Set<string>();
  for (const objects of byCluster.values())
    for (const o of objects)
      for (const name of String(
        asMap(asMap(o.object.metadata).annotations)[PLACEMENT_ANNOTATION] ?? "",
      ).split(","))
        if (name) names.add(name);
  const { byName, byApp } = placementsWithRollout(model);
  const named = [...names].flatMap((name) => byName.get(name) ?? []);
  // The first by the model's order, as a filter over every Placement would find it.
  const placement = [...named, ...(byApp.get(app) ?? [])].sort((a, b) => a.index - b.index)[0];
  return placement?.rollout ?? model.fleet?.spec.rollout;
}

interface IndexedRollout {
  readonly index: number;
  readonly rollout: RolloutSpec;
}

// The Placements that have a rollout, by name and by each app they list: looked up per app, so a
// plan over a thousand apps does not scan a thousand Placements for each. Kept per model.
const rolloutIndexes = new WeakMap<
  FleetModel,
  { byName: Map<string, IndexedRollout[]>; byApp: Map<string, IndexedRollout[]> }
>();

function placementsWithRollout(model: FleetModel) {
  let index = rolloutIndexes.get(model);
  if (!index) {
    index = { byName: new Map(), byApp: new Map() };
    for (const [i, p] of model.placements.entries()) {
      if (!p.spec.rollout) continue;
      const entry = { index: i, rollout: p.spec.rollout };
      add(index.byName, p.metadata.name, entry);
      for (const app of p.spec.apps ?? []) add(index.byApp, app, entry);
    }
    rolloutIndexes.set(model, index);
  }
  return index;
}

// A sync result's inventory entries by app, kept per inventory.
const inventoryByApp = new WeakMap<ClusterSyncResult["inventory"], Map<string, InventoryEntry[]>>();

function entriesByApp(inventory: ClusterSyncResult["inventory"]): Map<string, InventoryEntry[]> {
  let byApp = inventoryByApp.get(inventory);
  if (!byApp) {
    byApp = new Map();
    for (const entry of inventory.values()) add(byApp, entry.app, entry);
    inventoryByApp.set(inventory, byApp);
  }
  return byApp;
}

function add<T>(map: Map<string, T[]>, key: string, value: T): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

function digestOf(objects: readonly DesiredObject[]): string {
  return objects
    .map((o) => o.digest)
    .sort()
    .join(",");
}
