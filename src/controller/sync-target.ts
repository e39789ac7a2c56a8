import type { SyncTarget } from "../kube/syncer.js";
import type { PolicyGives } from "../policy/policy.js";
import type { ReconcileState } from "../reconcile/reconcile-step.js";
import { readEmittedYaml } from "../render/yaml-reader.js";
import { recordedVersions } from "../status/recorded-observations.js";
import { type Inventory, inventoryFromStatus } from "../sync/inventory.js";
import type { ClusterSyncResult } from "../sync/sync-result.js";

/** What the round adds to the render for the sync: the policies' gates and, sharded, the others' results. */
export interface SyncExtras {
  readonly gates?: PolicyGives["gates"];
  readonly elsewhere?: ReadonlyMap<string, ClusterSyncResult>;
  /** Only the render changed: members synced completely since need only the apps that changed. */
  readonly changesOnly?: boolean;
}

/** What the syncer gets: the last valid render, with what the status branch adds to it. */
export function syncTarget(
  state: ReconcileState,
  syncFiles: ReadonlyMap<string, string>,
  trusted: boolean,
  extras: SyncExtras,
): SyncTarget {
  const { model, renderedCommit } = state;
  if (!model || !renderedCommit) throw new Error("a sync needs a valid render");
  const hosted = model.clusters.filter((c) => c.spec.controlPlane).map((c) => c.metadata.name);
  return {
    sourceCommit: renderedCommit,
    model,
    ...(state.planes ? { planes: state.planes } : {}),
    objects: state.render.objects,
    decisions: state.render.decisions,
    // A branch gitfleet cannot vouch for gives no inventory: members' own are used.
    inventories: trusted ? inventoriesOf(syncFiles) : new Map(),
    ...(extras.gates ? { gates: extras.gates } : {}),
    ...(extras.elsewhere ? { elsewhere: extras.elsewhere } : {}),
    ...(extras.changesOnly ? { changesOnly: true } : {}),
    // The hosted clusters' /version as recorded: what the order of their components reads until synced.
    ...(model.controlPlaneClasses.length > 0
      ? { recordedVersions: recordedVersions(syncFiles, hosted) }
      : {}),
  };
}

/**
 * Some member did not answer, has objects not Healthy yet or held by a rollout, a dependency, a wave
 * or a hook, or hooks running. A migration waits for a reviewed commit, a suspend for a person and a
 * window for its time (a deadline), so those are not polled.
 */
export function stillProgressing(results: ReadonlyMap<string, ClusterSyncResult>): boolean {
  const waiting = (o: ClusterSyncResult["objects"][number]) =>
    o.action === "held" && (o.heldBy === "suspend" || o.heldBy === "window")
      ? false
      : (o.action === "held" && o.heldBy !== "migration") || o.health.status !== "Healthy";
  return [...results.values()].some((r) => !r.reachable || r.waiting === true || r.objects.some(waiting));
}

/** The first time a sync window holding an object lets changes through. */
export function windowOpens(results: ReadonlyMap<string, ClusterSyncResult>): number | undefined {
  let first: number | undefined;
  for (const result of results.values())
    for (const o of result.objects)
      if (o.heldUntil !== undefined && (first === undefined || o.heldUntil < first)) first = o.heldUntil;
  return first;
}

/** Whether two rounds' results are the same objects, member by member. */
export function sameResults(
  a: ReadonlyMap<string, ClusterSyncResult>,
  b: ReadonlyMap<string, ClusterSyncResult> | undefined,
): boolean {
  if (!b || a.size !== b.size) return false;
  for (const [cluster, result] of a) if (b.get(cluster) !== result) return false;
  return true;
}

function inventoriesOf(files: ReadonlyMap<string, string>): Map<string, Inventory> {
  const inventories = new Map<string, Inventory>();
  for (const [path, text] of files) {
    const cluster = /^status\/inventory\/(.+)\.yaml$/.exec(path)?.[1];
    if (!cluster) continue;
    const inventory = inventoryIn(cluster, text);
    if (inventory) inventories.set(cluster, inventory);
  }
  return inventories;
}

// Each cluster's inventory file as last read: a sync request reads it again only when it changed
// (a thousand-app inventory takes a while to parse, and most rounds leave it as it was).
const readInventories = new Map<
  string,
  { readonly text: string; readonly inventory: Inventory | undefined }
>();

function inventoryIn(cluster: string, text: string): Inventory | undefined {
  const known = readInventories.get(cluster);
  if (known?.text === text) return known.inventory;
  let inventory: Inventory | undefined;
  try {
    inventory = inventoryFromStatus(readEmittedYaml(text)).inventory;
  } catch {
    // Edited by hand beyond reading: the member's own inventory is used.
    inventory = undefined;
  }
  readInventories.set(cluster, { text, inventory });
  return inventory;
}

/** What the sync was last asked for with: the render, the key of what else it was given (gates, scope), and when. */
export interface SyncRequest {
  readonly render: unknown;
  readonly key: string;
  readonly at: number;
}

/** The key of what the sync is given besides the render: the migration gates and (sharded) this replica's members. */
export function syncRequestKey(gates: SyncExtras["gates"], scope: string | undefined): string {
  return JSON.stringify([[...(gates ?? [])].map(([cluster, apps]) => [cluster, [...apps]]), scope]);
}

/**
 * Whether the members are asked again: a new render (not a status commit of the sync's own), gates
 * or members that moved, a due resync, apps still progressing at their time, or a sync window that
 * held a change opening. Pure.
 */
export function syncDue(
  last: SyncRequest | undefined,
  next: SyncRequest,
  times: {
    readonly resyncIntervalMs: number;
    readonly progressAt: number | undefined;
    readonly windowOpens: number | undefined;
  },
): boolean {
  return (
    !last ||
    last.render !== next.render ||
    last.key !== next.key ||
    next.at - last.at >= times.resyncIntervalMs ||
    (times.progressAt !== undefined && next.at >= times.progressAt) ||
    (times.windowOpens ?? Number.POSITIVE_INFINITY) <= next.at
  );
}

/**
 * Whether a due sync is due for the new render alone: the gates and scope as before, no resync, no
 * progress check and no window opening due. Such a sync needs only the apps whose rendering changed
 * (the periodic resync still compares everything). Pure.
 */
export function onlyRenderChanged(
  last: SyncRequest | undefined,
  next: SyncRequest,
  times: Parameters<typeof syncDue>[2],
): boolean {
  if (!last || last.render === next.render || last.key !== next.key) return false;
  const unchanged = { ...next, render: last.render };
  return !syncDue(last, unchanged, times);
}
