import { asMap, type JsonMap } from "../apimachinery/json.js";
import { groupOf } from "../apimachinery/kinds.js";
import type { Health } from "../model/health.js";
import { identityOf } from "../model/identity.js";
import { syncWaveOf } from "../model/sync-annotations.js";
import { IMPLICIT_NAMESPACE_ANNOTATION, MANAGED_BY } from "../render/tracking.js";
import type { HookRecord } from "../sync/app-pass.js";
import { admissionReady, applyPlan } from "../sync/apply-order.js";
import { type CountedWorkload, countedWorkloads } from "../sync/cluster-capacity.js";
import { type ClusterPass, planClusterPass } from "../sync/cluster-pass.js";
import type { DesiredObject } from "../sync/desired-objects.js";
import { assessHealth } from "../sync/health.js";
import { hpaTargets } from "../sync/hpa-owned-replicas.js";
import type { Inventory, InventoryEntry, InventoryOwner } from "../sync/inventory.js";
import { planPrune } from "../sync/prune-plan.js";
import type { ClusterSyncResult, Hold, HookReport, ObjectResult, PruneResult } from "../sync/sync-result.js";
import { mapConcurrently } from "../util/map-concurrently.js";
import type { Applied } from "./apply-object.js";
import { applyOne, intentEntry } from "./apply-object.js";
import type { ClusterSyncInput } from "./cluster-sync-input.js";
import { deleteFinishedHooks, readHookRecords, startHooks, writeHookRecords } from "./hook-runs.js";
import { readInventory, writeInventory } from "./inventory-store.js";
import type { MemberClient } from "./member-client.js";
import { addressOf, message } from "./member-client.js";
import { CAPACITY_PAGE, readCapacity } from "./read-capacity.js";
import { withUnschedulable } from "./unschedulable-pods.js";

/** The annotation that keeps an object when it leaves the rendered tree. */
export const PRUNE_ANNOTATION = "gitfleet.io/prune";
export const MANAGED_SELECTOR = `${MANAGED_BY.key}=${MANAGED_BY.value}`;

/**
 * Syncs one member cluster to the rendered objects: reads the inventory, records the intent to apply
 * new objects in it before applying them (so a crash never leaves an object gitfleet created outside
 * the inventory), applies in order with server-side apply (CRDs first and waited for, then Namespaces,
 * cluster-scoped, namespaced objects), skips objects that are unchanged and have not drifted, prunes
 * within the deletion budget, and writes the inventory back. A member that cannot be reached gives a
 * result saying so; nothing is deleted then.
 */
export async function syncCluster(whole: ClusterSyncInput): Promise<ClusterSyncResult> {
  const { cluster, client, sourceCommit } = whole;
  const seen = await observe(whole);
  if ("error" in seen) return notSynced(whole, seen.error, seen.inventory);
  const inventory = new Map(seen.inventory);
  const held = whole.held ?? new Map<string, Hold>();
  // What this pass does app by app: dependencies, hooks and sync waves decide what waits.
  const pass = planClusterPass({
    cluster,
    desired: whole.desired,
    heldApps: new Set(held.keys()),
    dependsOn: whole.dependsOn ?? new Map(),
    view: { inventory, live: seen.live, health: healthIn(whole), commit: sourceCommit },
    records: seen.hooks.records,
  });
  const input: ClusterSyncInput = {
    ...whole,
    desired: pass.objects,
    heldObjects: new Map([...(whole.heldObjects ?? []), ...pass.heldObjects]),
  };
  let text = seen.text;
  const record = { cluster, sourceCommit, pruneBase: seen.pruneBase };
  try {
    text = await recordIntent(input, record, inventory, text, held);
  } catch (error) {
    return notSynced(input, message(error), seen.inventory);
  }
  const namespaceErrors = await ensureNamespaces(client, input.desired, held);
  const applied = (await applyAll(input, inventory, seen.live, seen.targets)).map((o) => {
    const namespaceError = o.action === "failed" ? namespaceErrors.get(o.identity) : undefined;
    const scaled =
      seen.targets.has(o.identity) && o.desiredReplicas !== undefined ? { scaledByHpa: true } : {};
    return namespaceError ? { ...o, ...scaled, error: namespaceError } : { ...o, ...scaled };
  });
  const objects = await withUnschedulable(client, input.desired, applied);
  const hooks = await runHooks(input, pass, seen);
  // What a held app ran before stays until its rollout reaches this cluster; what an app with a
  // wave or hook still ahead left behind stays until its last wave.
  const keep = new Set(input.desired.map((d) => d.identity));
  for (const entry of inventory.values())
    if (held.has(entry.app) || pass.keepLeftovers.has(entry.app) || outOf(input.scope, entry.app))
      keep.add(entry.identity);
  const prune = planPrune(cluster, inventory, keep, input.prune, seen.pruneBase);
  const pruned = await pruneByWave(input, prune.delete, seen.live);
  for (const result of pruned) if (result.outcome !== "failed") inventory.delete(result.identity);
  // Tokens stay bound to the commit before a blocked deletion, so the token it reports keeps working.
  const pruneBase = prune.blocked ? seen.pruneBase : sourceCommit;
  const error = await writeInventory(client, { ...record, pruneBase }, inventory, text).then(
    () => undefined,
    (failure: unknown) => `the inventory could not be written: ${message(failure)}`,
  );
  // Capacity counts the pods of every workload the member should run, not only this pass's.
  const workloads = countedWorkloads(whole.desired);
  const done = await finished(input, workloads, { objects, pruned, prune, inventory, pruneBase, error });
  return { ...done, ...(hooks.length > 0 ? { hooks } : {}), ...(pass.waiting ? { waiting: true } : {}) };
}

// An object's health as the sync judges it: its kind's rules, its ResourceInterpreter, kstatus.
function healthIn(input: ClusterSyncInput): (object: DesiredObject, live: JsonMap | undefined) => Health {
  return (object, live) =>
    assessHealth(live, input.interpreterFor?.(String(object.object.apiVersion), String(object.object.kind)));
}

// Starts the hooks this pass reached, keeps their outcomes in the member, then deletes those their
// delete policy removes (their outcome kept first, so a crash in between never runs one twice).
async function runHooks(input: ClusterSyncInput, pass: ClusterPass, seen: Observed): Promise<HookReport[]> {
  const revisionOf = (app: string) => pass.revisions.get(app) ?? "";
  const errors = await startHooks(input.client, pass.start, revisionOf, seen.live);
  await writeHookRecords(input.client, pass.records, seen.hooks.text);
  const runs = [...pass.hooks.values()].flat();
  await deleteFinishedHooks(input.client, runs, revisionOf, seen.live);
  return runs.map((run) => {
    const started = pass.start.includes(run) && !errors.has(run);
    const error = errors.get(run);
    return {
      app: run.object.app,
      phase: run.phase,
      identity: run.object.identity,
      outcome: started ? "Running" : run.outcome,
      commit: pass.records.get(run.object.app)?.commit ?? input.sourceCommit,
      ...(error
        ? { message: `could not be started: ${error}` }
        : run.message
          ? { message: run.message }
          : {}),
    };
  });
}

// Prunes in reverse sync-wave order: the highest wave first, each wave once the one above is gone.
async function pruneByWave(
  input: ClusterSyncInput,
  entries: readonly InventoryEntry[],
  live: ReadonlyMap<string, JsonMap>,
): Promise<PruneResult[]> {
  const waveOf = (entry: InventoryEntry) =>
    syncWaveOf(asMap(asMap(live.get(entry.identity)?.metadata).annotations));
  const waves = [...new Set(entries.map(waveOf))].sort((a, b) => b - a);
  const results: PruneResult[] = [];
  for (const wave of waves)
    results.push(
      ...(await mapConcurrently(
        entries.filter((e) => waveOf(e) === wave),
        input.concurrency ?? 8,
        (entry) => pruneOne(input.client, entry),
      )),
    );
  return results;
}

// The result of a sync that reached its member: what it did, read its capacity with.
async function finished(
  input: ClusterSyncInput,
  workloads: readonly CountedWorkload[],
  done: {
    objects: ObjectResult[];
    pruned: PruneResult[];
    prune: ReturnType<typeof planPrune>;
    inventory: Inventory;
    pruneBase: string | undefined;
    error: string | undefined;
  },
): Promise<ClusterSyncResult> {
  const { cluster, client, sourceCommit } = input;
  const { objects, pruned, prune, inventory, pruneBase, error } = done;
  const blocked = prune.blocked;
  const crdsApplied = objects.some(
    (o) =>
      o.identity.startsWith("apiextensions.k8s.io/CustomResourceDefinition/") &&
      !["unchanged", "drifted", "held", "failed", "conflict"].includes(o.action),
  );
  const served = await input.served?.(client, crdsApplied);
  const version = await client.version().catch(() => undefined);
  const capacity = input.capacity
    ? await input.capacity(client, workloads)
    : await readCapacity(client, undefined, CAPACITY_PAGE, workloads).then((r) => r?.capacity);
  return {
    cluster,
    sourceCommit,
    reachable: true,
    ...(error ? { error } : {}),
    ...(capacity ? { capacity } : {}),
    ...(served ? { served } : {}),
    ...(version ? { version } : {}),
    objects,
    pruned,
    ...(blocked
      ? { pruneBlocked: { token: blocked.token, reasons: blocked.reasons, count: blocked.entries.length } }
      : {}),
    retained: prune.retained.map((e) => e.identity),
    inventory,
    ...(pruneBase ? { pruneBase } : {}),
  };
}

interface Observed {
  readonly inventory: Inventory;
  readonly pruneBase: string | undefined;
  /** The inventory's lines as the member holds them; undefined when it has none yet. */
  readonly text: string | undefined;
  readonly live: Map<string, JsonMap>;
  /** Workloads HorizontalPodAutoscalers scale. */
  readonly targets: Set<string>;
  /** The member's hook records (read only when some app has hooks or records are kept). */
  readonly hooks: { records: Map<string, HookRecord>; text: string | undefined };
}

// What the member holds: its inventory, the objects gitfleet manages, the HPAs' targets.
async function observe(input: ClusterSyncInput): Promise<Observed | { error: string; inventory: Inventory }> {
  const { client } = input;
  let inventory = input.knownInventory;
  try {
    const stored = await readInventory(client, input.knownInventory);
    if (stored.owner !== undefined && stored.owner !== input.cluster)
      return {
        error: `the member's inventory belongs to fleet cluster ${stored.owner}: each member is synced by one Cluster, so this one is not synced (fix spec.connection)`,
        inventory,
      };
    inventory = stored.inventory;
    const live = input.scope
      ? await readEach(client, input.desired, input.concurrency ?? 8)
      : await listManaged(client, input.desired, stored.inventory);
    const targets = hpaTargets([
      ...((await client.list("autoscaling/v2", "HorizontalPodAutoscaler", "")) ?? []),
      ...input.desired.map((d) => d.object).filter((o) => o.kind === "HorizontalPodAutoscaler"),
    ]);
    const hooked = input.desired.some((d) => d.role.kind === "hook");
    const hooks = hooked ? await readHookRecords(client) : { records: new Map(), text: undefined };
    return { ...stored, live, targets, hooks };
  } catch (error) {
    return { error: message(error), inventory };
  }
}

// Records the objects about to be created in the inventory before creating them: a crash in between
// leaves them known, never orphaned. Returns the inventory lines the member now holds.
async function recordIntent(
  input: ClusterSyncInput,
  record: InventoryOwner,
  inventory: Map<string, InventoryEntry>,
  text: string | undefined,
  held: ReadonlyMap<string, Hold>,
): Promise<string | undefined> {
  const fresh = input.desired.filter(
    (d) => !inventory.has(d.identity) && !held.has(d.app) && !input.heldObjects?.has(d.identity),
  );
  if (fresh.length === 0) return text;
  for (const desired of fresh) inventory.set(desired.identity, intentEntry(desired));
  return writeInventory(input.client, record, inventory, text);
}

/** The result for a cluster that was not synced at all (unreachable, no connection, a failure), and why. */
export function notSynced(
  input: Pick<ClusterSyncInput, "cluster" | "sourceCommit">,
  error: string,
  inventory: Inventory,
): ClusterSyncResult {
  return {
    cluster: input.cluster,
    sourceCommit: input.sourceCommit,
    reachable: false,
    error,
    objects: [],
    pruned: [],
    retained: [],
    inventory,
  };
}

/**
 * Creates the namespaces rendered objects live in that the rendered tree does not hold itself, as
 * Karmada propagates namespaces: created bare, never labelled, never in the inventory, so never
 * pruned. Returns, per object whose namespace could not be made, why.
 */
async function ensureNamespaces(
  client: MemberClient,
  desired: readonly DesiredObject[],
  held: ReadonlyMap<string, Hold>,
): Promise<Map<string, string>> {
  const errors = new Map<string, string>();
  for (const [namespace, identities] of implicitNamespaces(desired, held)) {
    try {
      const address = { apiVersion: "v1", kind: "Namespace", namespace: undefined, name: namespace };
      if (!(await client.get(address)))
        await client.apply(
          {
            apiVersion: "v1",
            kind: "Namespace",
            metadata: { name: namespace, annotations: { [IMPLICIT_NAMESPACE_ANNOTATION]: "true" } },
          },
          false,
        );
    } catch (error) {
      for (const identity of identities)
        errors.set(identity, `namespace ${namespace} could not be created: ${message(error)}`);
    }
  }
  return errors;
}

// The namespaces objects live in that the rendered tree has no Namespace for, each with its objects.
function implicitNamespaces(
  desired: readonly DesiredObject[],
  held: ReadonlyMap<string, Hold>,
): Map<string, string[]> {
  // A rendered Namespace whose app's rollout has not reached the cluster is not applied in this sync:
  // the objects of other apps in it still need it.
  const rendered = new Set(
    desired
      .filter((d) => d.object.kind === "Namespace" && d.object.apiVersion === "v1" && !held.has(d.app))
      .map((d) => String(asMap(d.object.metadata).name)),
  );
  const needed = new Map<string, string[]>();
  for (const d of desired) {
    const namespace = asMap(d.object.metadata).namespace;
    if (typeof namespace !== "string" || rendered.has(namespace)) continue;
    needed.set(namespace, [...(needed.get(namespace) ?? []), d.identity]);
  }
  return needed;
}

// Applies phase by phase; updates the inventory entry of every object as it goes.
async function applyAll(
  input: ClusterSyncInput,
  inventory: Map<string, InventoryEntry>,
  live: ReadonlyMap<string, JsonMap>,
  scaledByHpa: ReadonlySet<string>,
): Promise<ObjectResult[]> {
  const results: ObjectResult[] = [];
  let handled = 0;
  for (const { phase, items } of applyPlan(input.desired, (d) => d.object)) {
    const done = await mapConcurrently(items, input.concurrency ?? 8, async (desired) => {
      const applied = await applyOne(
        input,
        desired,
        inventory.get(desired.identity),
        live.get(desired.identity),
        scaledByHpa,
      );
      input.onObject?.(++handled, input.desired.length);
      return applied;
    });
    if (phase === "crds") {
      await waitEstablished(input, done);
      input.client.forgetDiscovery();
    }
    if (phase === "admission") await waitCounted(input, done);
    for (const [index, { result, entry }] of done.entries()) {
      const desired = items[index] as DesiredObject;
      if (entry) inventory.set(desired.identity, entry);
      else inventory.delete(desired.identity);
      results.push(result);
    }
  }
  return results;
}

// CRDs must be Established before objects of their kinds can be applied.
async function waitEstablished(input: ClusterSyncInput, applied: readonly Applied[]): Promise<void> {
  const deadline = Date.now() + (input.crdTimeoutMs ?? 30_000);
  for (const { live } of applied) {
    if (!live) continue;
    let current: JsonMap | undefined = live;
    while (current && assessHealth(current).status !== "Healthy" && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      current = await input.client.get(addressOf(live)).catch(() => current);
    }
  }
}

// ResourceQuotas are counted by their controller before anything makes pods (bounded: a quota whose
// controller is slow or absent only delays the rest of the sync by QUOTA_COUNT_TIMEOUT_MS).
async function waitCounted(input: ClusterSyncInput, applied: readonly Applied[]): Promise<void> {
  const deadline = Date.now() + QUOTA_COUNT_TIMEOUT_MS;
  for (const { live } of applied) {
    let current: JsonMap | undefined = live;
    while (current && !admissionReady(current) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      current = await input.client.get(addressOf(current)).catch(() => current);
    }
  }
}

const QUOTA_COUNT_TIMEOUT_MS = 10_000;

export async function pruneOne(client: MemberClient, entry: InventoryEntry): Promise<PruneResult> {
  const base = { identity: entry.identity, app: entry.app };
  try {
    const live = await client.get(entry);
    if (!live) return { ...base, outcome: "gone" };
    const metadata = asMap(live.metadata);
    if (entry.uid !== "" && metadata.uid !== entry.uid) return { ...base, outcome: "replaced" };
    if (asMap(metadata.labels)[MANAGED_BY.key] !== MANAGED_BY.value) return { ...base, outcome: "detached" };
    if (asMap(metadata.annotations)[PRUNE_ANNOTATION] === "disabled")
      return { ...base, outcome: "prune-disabled" };
    return { ...base, outcome: await client.delete(entry, String(metadata.uid ?? "")) };
  } catch (error) {
    return { ...base, outcome: "failed", error: message(error) };
  }
}

// An app outside the apps a scoped sync takes (none is, in a whole sync).
function outOf(scope: ReadonlySet<string> | undefined, app: string): boolean {
  return scope !== undefined && !scope.has(app);
}

// The live objects of a few apps, each read by itself: cheaper than listing every object of their
// kinds. Like a list, it holds only what gitfleet manages (its label on the object).
async function readEach(
  client: MemberClient,
  desired: readonly DesiredObject[],
  concurrency: number,
): Promise<Map<string, JsonMap>> {
  const live = new Map<string, JsonMap>();
  const found = await mapConcurrently(desired, concurrency, (d) => client.get(addressOf(d.object)));
  for (const object of found)
    if (object && asMap(asMap(object.metadata).labels)[MANAGED_BY.key] === MANAGED_BY.value)
      live.set(identityOfLive(object), object);
  return live;
}

// The live objects gitfleet manages, of every kind it renders or has applied, by identity.
export async function listManaged(
  client: MemberClient,
  desired: readonly DesiredObject[],
  inventory: Inventory,
): Promise<Map<string, JsonMap>> {
  const kinds = new Map<string, { apiVersion: string; kind: string }>();
  for (const d of desired)
    kinds.set(`${String(d.object.apiVersion)} ${String(d.object.kind)}`, {
      apiVersion: String(d.object.apiVersion),
      kind: String(d.object.kind),
    });
  for (const e of inventory.values())
    kinds.set(`${e.apiVersion} ${e.kind}`, { apiVersion: e.apiVersion, kind: e.kind });
  const live = new Map<string, JsonMap>();
  const lists = await mapConcurrently([...kinds.values()], 4, ({ apiVersion, kind }) =>
    client.list(apiVersion, kind, MANAGED_SELECTOR),
  );
  for (const items of lists) for (const object of items ?? []) live.set(identityOfLive(object), object);
  return live;
}

export function identityOfLive(object: JsonMap): string {
  const metadata = asMap(object.metadata);
  const namespace = typeof metadata.namespace === "string" ? metadata.namespace : undefined;
  return identityOf(
    groupOf(String(object.apiVersion)),
    String(object.kind),
    namespace,
    String(metadata.name),
  );
}
