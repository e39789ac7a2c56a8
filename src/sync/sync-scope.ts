import type { DesiredObject } from "./desired-objects.js";
import type { ClusterSyncResult, ObjectResult } from "./sync-result.js";

/**
 * A one-app change syncs one app. After a cluster's sync that left every object as rendered, the
 * syncer remembers what it applied; a sync asked for by a new render alone then takes only the apps
 * whose objects changed since (added, removed or rendered differently), and carries the last results
 * of the others over. Anything that ties apps together in a cluster (dependencies, hooks) or that the
 * last sync did not finish (failures, conflicts, holds, a blocked prune, a wave still ahead) makes
 * the sync whole again, as does the periodic resync that looks for drift. Pure.
 */

/** What a cluster holds after a complete sync: each object's app and digest, by identity. */
export type SyncedSet = ReadonlyMap<string, { readonly app: string; readonly digest: string }>;

/** The set a sync leaves when it left every object as rendered; undefined when it did not. */
export function syncedSet(
  desired: readonly DesiredObject[],
  result: ClusterSyncResult,
): SyncedSet | undefined {
  const incomplete = (o: ObjectResult) =>
    o.action === "failed" || o.action === "conflict" || o.action === "held";
  if (!result.reachable || result.error || result.waiting || result.pruneBlocked) return undefined;
  if (result.objects.some(incomplete) || (result.hooks?.length ?? 0) > 0) return undefined;
  if (result.pruned.some((p) => p.outcome === "failed")) return undefined;
  const applied = new Set(result.objects.map((o) => o.identity));
  if (desired.some((d) => !applied.has(d.identity))) return undefined;
  return new Map(desired.map((d) => [d.identity, { app: d.app, digest: d.digest }]));
}

/**
 * The apps whose objects differ between what was synced and what is desired now; undefined when the
 * sync must be whole: one of them has hooks or is tied to another app by a dependency.
 */
export function changedApps(
  synced: SyncedSet,
  desired: readonly DesiredObject[],
  dependsOn: ReadonlyMap<string, readonly string[]>,
): Set<string> | undefined {
  const changed = differingApps(synced, desired);
  const hooked = desired.some((d) => changed.has(d.app) && d.role.kind === "hook");
  if (hooked || [...changed].some((app) => tiedApps(dependsOn).has(app))) return undefined;
  return changed;
}

// Apps with an object added, removed or rendered differently; an object that moved between apps
// changes the one it left too.
function differingApps(synced: SyncedSet, desired: readonly DesiredObject[]): Set<string> {
  const changed = new Set<string>();
  const wanted = new Set<string>();
  for (const d of desired) {
    wanted.add(d.identity);
    const was = synced.get(d.identity);
    if (was?.digest !== d.digest || was.app !== d.app) changed.add(d.app);
    if (was && was.app !== d.app) changed.add(was.app);
  }
  for (const [identity, { app }] of synced) if (!wanted.has(identity)) changed.add(app);
  return changed;
}

// Every app that depends on another or that another depends on.
function tiedApps(dependsOn: ReadonlyMap<string, readonly string[]>): Set<string> {
  const tied = new Set<string>();
  for (const [app, needs] of dependsOn)
    if (needs.length > 0) for (const other of [app, ...needs]) tied.add(other);
  return tied;
}

/**
 * A sync of some apps, completed with the last results of the others: their health and replicas as
 * last seen, and as action what this sync did to them — nothing (`unchanged`), or `drifted` when the
 * drift the last sync reported is still there to be found — so what a sync counts (its status
 * commit, the operation metrics) counts each apply once.
 */
export function withOtherApps(
  scoped: ClusterSyncResult,
  previous: ClusterSyncResult,
  apps: ReadonlySet<string>,
): ClusterSyncResult {
  if (!scoped.reachable) return scoped;
  const others = previous.objects.filter((o) => !apps.has(o.app)).map(carriedOver);
  return { ...scoped, objects: [...others, ...scoped.objects] };
}

function carriedOver(object: ObjectResult): ObjectResult {
  if (object.action === "unchanged" || object.action === "drifted") return object;
  const { drift: _, ...rest } = object;
  return { ...rest, action: "unchanged" };
}
