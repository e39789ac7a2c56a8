import { identityOf } from "../model/identity.js";
import type { ObjectInterpreterLookup } from "../model/interpreter-index.js";
import { asList, asMap, type JsonMap, valueAt } from "../model/json.js";
import { groupOf } from "../model/kinds.js";
import { oneLine } from "../model/one-line.js";
import type { ResourceInterpreterSpec } from "../model/types.js";
import { IMPLICIT_NAMESPACE_ANNOTATION, MANAGED_BY } from "../render/tracking.js";
import { applyPlan } from "../sync/apply-order.js";
import type { ClusterCapacity } from "../sync/cluster-capacity.js";
import type { DesiredObject } from "../sync/desired-objects.js";
import { driftedPaths } from "../sync/drift.js";
import { FIELD_MANAGER } from "../sync/field-manager.js";
import { assessHealth } from "../sync/health.js";
import { hpaTargets, leaveReplicasToHpa } from "../sync/hpa-owned-replicas.js";
import {
  INVENTORY_CONFIGMAP,
  INVENTORY_NAMESPACE,
  type Inventory,
  type InventoryEntry,
  type InventoryOwner,
  inventoryData,
  inventoryFromData,
} from "../sync/inventory.js";
import { type PruneSettings, planPrune } from "../sync/prune-plan.js";
import type {
  ClusterSyncResult,
  Hold,
  ObjectAction,
  ObjectResult,
  PruneResult,
} from "../sync/sync-result.js";
import { mapConcurrently } from "../util/map-concurrently.js";
import { type DetachOutcome, detachObject } from "./detach.js";
import { MemberApiError, type MemberClient, type ObjectAddress } from "./member-client.js";
import { readCapacity } from "./read-capacity.js";
import { takeOverFields } from "./take-over.js";

export interface ClusterSyncInput {
  readonly cluster: string;
  readonly client: MemberClient;
  readonly sourceCommit: string;
  readonly desired: readonly DesiredObject[];
  readonly prune: PruneSettings;
  /** The inventory on the status branch: used when the member's own copy is missing. */
  readonly knownInventory: Inventory;
  /** The ResourceInterpreter for a custom kind (health, replicas). */
  readonly interpreterFor?: ObjectInterpreterLookup;
  /** Requests in flight per cluster (default 8). */
  readonly concurrency?: number;
  /** How long to wait for applied CRDs to be Established (default 30 s). */
  readonly crdTimeoutMs?: number;
  /** Reads the member's capacity after the sync (default: list its nodes and pods every time). */
  readonly capacity?: (client: MemberClient) => Promise<ClusterCapacity | undefined>;
  /** Told after each object is applied or compared (progress of a large sync). */
  readonly onObject?: (done: number, total: number) => void;
  /** Apps whose current rendering waits for the rollout to reach this cluster, and why: they keep what they run. */
  readonly held?: ReadonlyMap<string, Hold>;
}

/** The annotation that keeps an object when it leaves the rendered tree. */
export const PRUNE_ANNOTATION = "gitfleet.io/prune";
const MANAGED_SELECTOR = `${MANAGED_BY.key}=${MANAGED_BY.value}`;

/**
 * Syncs one member cluster to the rendered objects: reads the inventory, records the intent to apply
 * new objects in it before applying them (so a crash never leaves an object gitfleet created outside
 * the inventory), applies in order with server-side apply (CRDs first and waited for, then Namespaces,
 * cluster-scoped, namespaced objects), skips objects that are unchanged and have not drifted, prunes
 * within the deletion budget, and writes the inventory back. A member that cannot be reached gives a
 * result saying so; nothing is deleted then.
 */
export async function syncCluster(input: ClusterSyncInput): Promise<ClusterSyncResult> {
  const { cluster, client, sourceCommit } = input;
  const seen = await observe(input);
  if ("error" in seen) return notSynced(input, seen.error, seen.inventory);
  const inventory = new Map(seen.inventory);
  const held = input.held ?? new Map<string, Hold>();
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
  // What a held app ran before stays until its rollout reaches this cluster.
  const keep = new Set(input.desired.map((d) => d.identity));
  for (const entry of inventory.values()) if (held.has(entry.app)) keep.add(entry.identity);
  const prune = planPrune(cluster, inventory, keep, input.prune, seen.pruneBase);
  const pruned = await mapConcurrently(prune.delete, input.concurrency ?? 8, (entry) =>
    pruneOne(client, entry),
  );
  for (const result of pruned) if (result.outcome !== "failed") inventory.delete(result.identity);
  // Tokens stay bound to the commit before a blocked deletion, so the token it reports keeps working.
  const pruneBase = prune.blocked ? seen.pruneBase : sourceCommit;
  const error = await writeInventory(client, { ...record, pruneBase }, inventory, text).then(
    () => undefined,
    (failure: unknown) => `the inventory could not be written: ${message(failure)}`,
  );
  return finished(input, { objects, pruned, prune, inventory, pruneBase, error });
}

// The result of a sync that reached its member: what it did, read its capacity with.
async function finished(
  input: ClusterSyncInput,
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
  const capacity = await (input.capacity ?? readCapacity)(client);
  return {
    cluster,
    sourceCommit,
    reachable: true,
    ...(error ? { error } : {}),
    ...(capacity ? { capacity } : {}),
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
    const live = await listManaged(client, input.desired, stored.inventory);
    const targets = hpaTargets([
      ...((await client.list("autoscaling/v2", "HorizontalPodAutoscaler", "")) ?? []),
      ...input.desired.map((d) => d.object).filter((o) => o.kind === "HorizontalPodAutoscaler"),
    ]);
    return { ...stored, live, targets };
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
  const fresh = input.desired.filter((d) => !inventory.has(d.identity) && !held.has(d.app));
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
    for (const [index, { result, entry }] of done.entries()) {
      const desired = items[index] as DesiredObject;
      if (entry) inventory.set(desired.identity, entry);
      else inventory.delete(desired.identity);
      results.push(result);
    }
  }
  return results;
}

interface Applied {
  readonly result: ObjectResult;
  /** The inventory entry after this object's sync; undefined drops it (gitfleet did not create it). */
  readonly entry: InventoryEntry | undefined;
  readonly live?: JsonMap;
}

async function applyOne(
  input: ClusterSyncInput,
  rendered: DesiredObject,
  entry: InventoryEntry | undefined,
  listed: JsonMap | undefined,
  scaledByHpa: ReadonlySet<string>,
): Promise<Applied> {
  const waiting = input.held?.get(rendered.app);
  if (waiting !== undefined)
    return heldBack(input, rendered, entry, await heldLive(input, rendered, entry, listed), waiting);
  if (rendered.error) return failed(rendered, entry, new Error(rendered.error));
  try {
    // An object that is neither labelled nor in the inventory may still exist: look before creating.
    const current = listed ?? (entry?.uid ? undefined : await input.client.get(addressOf(rendered.object)));
    const desired = leaveReplicasToHpa(rendered, current, scaledByHpa, input.interpreterFor);
    const step = decide(desired, entry, current);
    if (step.kind === "refuse") return refused(desired);
    if (step.kind === "keep" && current && entry)
      return withDrift(settled(input, desired, step.action, current, entry), step.drift);
    const action: ObjectAction = !current
      ? "created"
      : entry?.digest === desired.digest
        ? "corrected"
        : "configured";
    // Correcting drift takes back the fields gitfleet applied and someone changed; adopting takes the
    // fields the rendered object sets from whoever set them by hand (`gitfleet plan` lists them);
    // a new rendering that meets another manager's fields reports the conflict unless the policy forces.
    const adopting = current !== undefined && !entry?.uid && !appliedByGitfleet(current);
    const applied = await applyObject(input.client, desired, action === "corrected", adopting);
    // What gitfleet took over stays marked as adopted: it is never deleted without a token.
    const adopted = adopting || entry?.adopted === true;
    const next = { ...intentEntry(desired), digest: desired.digest, ...(adopted ? { adopted: true } : {}) };
    return withDrift(settled(input, desired, action, applied, next), action === "created" ? [] : step.drift);
  } catch (error) {
    return failed(rendered, entry, error);
  }
}

async function applyObject(
  client: MemberClient,
  desired: DesiredObject,
  correcting: boolean,
  adopting: boolean,
): Promise<JsonMap> {
  const applied = await client.apply(desired.object, desired.policy.force || correcting || adopting);
  if (!adopting) return applied;
  return (await takeOverFields(client, addressOf(desired.object))) ?? applied;
}

// An object of an app whose rollout has not reached this cluster: left as it runs, reported with why.
// A held object as it runs: listed when gitfleet manages it, else looked up, so that an object a
// migration has not adopted yet reports its real health.
async function heldLive(
  input: ClusterSyncInput,
  rendered: DesiredObject,
  entry: InventoryEntry | undefined,
  listed: JsonMap | undefined,
): Promise<JsonMap | undefined> {
  if (listed || entry) return listed;
  return input.client.get(addressOf(rendered.object)).catch(() => undefined);
}

function heldBack(
  input: ClusterSyncInput,
  desired: DesiredObject,
  entry: InventoryEntry | undefined,
  live: JsonMap | undefined,
  hold: Hold,
): Applied {
  const { reason, by } = hold;
  if (live && entry) {
    // What runs is the old rendering: its replicas are the desired ones until the rollout arrives.
    const kept = settled(input, { ...desired, object: live }, "held", live, entry);
    return { ...kept, result: { ...kept.result, held: reason, heldBy: by } };
  }
  if (live) {
    // Not gitfleet's (a migration has not adopted it): reported as it runs, never recorded.
    const interpreter = input.interpreterFor?.(String(live.apiVersion), String(live.kind));
    const result: ObjectResult = {
      identity: desired.identity,
      app: desired.app,
      action: "held",
      health: assessHealth(live, interpreter),
      ...replicasOf(live, live, interpreter),
      held: reason,
      heldBy: by,
    };
    return { result, entry: undefined };
  }
  return {
    result: {
      identity: desired.identity,
      app: desired.app,
      action: "held",
      health: { status: "Progressing", reason },
      held: reason,
      heldBy: by,
    },
    entry,
  };
}

type Step =
  | { readonly kind: "refuse" }
  | { readonly kind: "keep"; readonly action: "unchanged" | "drifted"; readonly drift: readonly string[] }
  | { readonly kind: "apply"; readonly drift: readonly string[] };

/** What to do with one object, given its inventory entry and what the cluster holds. Pure. */
export function decide(
  desired: DesiredObject,
  entry: InventoryEntry | undefined,
  current: JsonMap | undefined,
): Step {
  // Present, yet neither in the inventory with a uid nor ever applied by gitfleet: somebody else's
  // object, even if it carries gitfleet's labels.
  if (current && !entry?.uid && !desired.policy.adopt && !appliedByGitfleet(current) && !madeBare(current))
    return { kind: "refuse" };
  const drift = current ? driftedPaths(desired.object, current) : [];
  if (!current || entry?.digest !== desired.digest) return { kind: "apply", drift };
  if (drift.length === 0) return { kind: "keep", action: "unchanged", drift };
  return desired.policy.selfHeal ? { kind: "apply", drift } : { kind: "keep", action: "drifted", drift };
}

// A Namespace gitfleet created bare for the objects in it.
function madeBare(live: JsonMap): boolean {
  return (
    live.kind === "Namespace" &&
    asMap(asMap(live.metadata).annotations)[IMPLICIT_NAMESPACE_ANNOTATION] === "true"
  );
}

// gitfleet's field manager has applied this object before (an inventory lost, a crash before it was written).
function appliedByGitfleet(live: JsonMap): boolean {
  const managed = asMap(live.metadata).managedFields;
  return (
    Array.isArray(managed) &&
    managed.some((m) => asMap(m).manager === FIELD_MANAGER && asMap(m).operation === "Apply")
  );
}

function withDrift(applied: Applied, drift: readonly string[]): Applied {
  return drift.length === 0 ? applied : { ...applied, result: { ...applied.result, drift } };
}

function refused(desired: DesiredObject): Applied {
  return {
    result: {
      identity: desired.identity,
      app: desired.app,
      action: "conflict",
      health: { status: "Unknown", reason: "not managed by gitfleet" },
      error:
        "exists in the cluster and gitfleet did not create it; set conflictResolution: Adopt on the Placement (or migrate it with a Migration) to take it over",
    },
    entry: undefined,
  };
}

function failed(desired: DesiredObject, entry: InventoryEntry | undefined, error: unknown): Applied {
  const conflict = error instanceof MemberApiError && error.code === 409;
  return {
    result: {
      identity: desired.identity,
      app: desired.app,
      action: conflict ? "conflict" : "failed",
      health: { status: "Unknown", reason: conflict ? "apply conflict" : "apply failed" },
      error: message(error),
    },
    // A transient failure may have created the object: keep the intent so the next sync settles it.
    entry: entry ?? (error instanceof MemberApiError && error.transient ? intentEntry(desired) : undefined),
  };
}

function settled(
  input: ClusterSyncInput,
  desired: DesiredObject,
  action: ObjectAction,
  live: JsonMap,
  entry: InventoryEntry,
): Applied {
  const interpreter = input.interpreterFor?.(String(desired.object.apiVersion), String(desired.object.kind));
  const uid = String(asMap(live.metadata).uid ?? entry.uid);
  return {
    result: {
      identity: desired.identity,
      app: desired.app,
      action,
      health: assessHealth(live, interpreter),
      ...replicasOf(desired.object, live, interpreter),
    },
    entry: { ...entry, uid },
    live,
  };
}

// Desired and ready replicas of a workload: built-in kinds, or a ResourceInterpreter's paths.
function replicasOf(
  rendered: JsonMap,
  live: JsonMap,
  interpreter: ResourceInterpreterSpec | undefined,
): { desiredReplicas?: number; readyReplicas?: number } {
  const builtIn = ["apps/v1/Deployment", "apps/v1/StatefulSet", "apps/v1/ReplicaSet"].includes(
    `${String(rendered.apiVersion)}/${String(rendered.kind)}`,
  );
  const replicasPath = builtIn ? "spec.replicas" : interpreter?.replicasPath;
  const readyPath = builtIn ? "status.readyReplicas" : interpreter?.statusPaths?.readyReplicas;
  if (!replicasPath) return {};
  // An HPA's workload is applied without replicas: the member's count is the desired one.
  const wanted = valueAt(rendered, replicasPath.split(".")) ?? valueAt(live, replicasPath.split("."));
  const ready = readyPath ? valueAt(live, readyPath.split(".")) : undefined;
  return {
    desiredReplicas: typeof wanted === "number" ? wanted : 1,
    readyReplicas: typeof ready === "number" ? ready : 0,
  };
}

/**
 * Counts, for each workload short of ready replicas, its pods the member's scheduler could not place
 * (Pending, PodScheduled=False, reason Unschedulable), matched by namespace and the workload's
 * spec.selector.matchLabels. One list of Pending pods per sync, and only when a workload is short.
 */
async function withUnschedulable(
  client: MemberClient,
  desired: readonly DesiredObject[],
  objects: ObjectResult[],
): Promise<ObjectResult[]> {
  const short = objects.filter((o) => (o.readyReplicas ?? 0) < (o.desiredReplicas ?? 0));
  if (short.length === 0) return objects;
  const pending = await client.list("v1", "Pod", "", "status.phase=Pending").catch(() => undefined);
  const unschedulable = (pending ?? []).filter((pod) =>
    asList(asMap(pod.status).conditions).some((c) => {
      const condition = asMap(c);
      return (
        condition.type === "PodScheduled" &&
        condition.status === "False" &&
        condition.reason === "Unschedulable"
      );
    }),
  );
  if (unschedulable.length === 0) return objects;
  const byIdentity = new Map(desired.map((d) => [d.identity, d.object]));
  return objects.map((o) => {
    const workload = short.includes(o) ? byIdentity.get(o.identity) : undefined;
    const selector = asMap(asMap(asMap(workload?.spec).selector).matchLabels);
    if (!workload || Object.keys(selector).length === 0) return o;
    const namespace = asMap(workload.metadata).namespace;
    const count = unschedulable.filter((pod) => {
      const metadata = asMap(pod.metadata);
      const labels = asMap(metadata.labels);
      return metadata.namespace === namespace && Object.entries(selector).every(([k, v]) => labels[k] === v);
    }).length;
    return count > 0 ? { ...o, unschedulableReplicas: count } : o;
  });
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

async function pruneOne(client: MemberClient, entry: InventoryEntry): Promise<PruneResult> {
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

// The member's inventory: its owner, prune base and entries, and its data as text (to skip writes
// that change nothing). A member without one falls back to the inventory the status branch holds —
// entries without a uid left out, since nothing would guard their deletion.
async function readInventory(
  client: MemberClient,
  known: Inventory,
): Promise<{
  inventory: Inventory;
  text: string | undefined;
  owner: string | undefined;
  pruneBase: string | undefined;
}> {
  const configMap = await client.get({
    apiVersion: "v1",
    kind: "ConfigMap",
    namespace: INVENTORY_NAMESPACE,
    name: INVENTORY_CONFIGMAP,
  });
  if (!configMap) {
    const guarded = new Map([...known].filter(([, entry]) => entry.uid !== ""));
    return { inventory: guarded, text: undefined, owner: undefined, pruneBase: undefined };
  }
  const data = asMap(configMap.data);
  const record = inventoryFromData(data);
  return {
    inventory: record.inventory,
    text: JSON.stringify(data),
    owner: record.cluster,
    pruneBase: record.pruneBase,
  };
}

// Writes the inventory ConfigMap (and its namespace) when its data changed; returns the data written.
async function writeInventory(
  client: MemberClient,
  record: InventoryOwner,
  inventory: Inventory,
  previous: string | undefined,
): Promise<string> {
  const data = inventoryData(record, inventory);
  const text = JSON.stringify(data);
  if (text === previous) return text;
  const labels = { [MANAGED_BY.key]: MANAGED_BY.value };
  if (previous === undefined)
    await client.apply(
      { apiVersion: "v1", kind: "Namespace", metadata: { name: INVENTORY_NAMESPACE, labels } },
      true,
    );
  await client.apply(
    {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: INVENTORY_CONFIGMAP, namespace: INVENTORY_NAMESPACE, labels },
      data,
    },
    true,
  );
  return text;
}

// The live objects gitfleet manages, of every kind it renders or has applied, by identity.
async function listManaged(
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

function identityOfLive(object: JsonMap): string {
  const metadata = asMap(object.metadata);
  const namespace = typeof metadata.namespace === "string" ? metadata.namespace : undefined;
  return identityOf(
    groupOf(String(object.apiVersion)),
    String(object.kind),
    namespace,
    String(metadata.name),
  );
}

/** Where an object is addressed in a member: apiVersion, kind, namespace, name. */
export function addressOf(object: JsonMap): ObjectAddress {
  const metadata = asMap(object.metadata);
  return {
    apiVersion: String(object.apiVersion),
    kind: String(object.kind),
    namespace: typeof metadata.namespace === "string" ? metadata.namespace : undefined,
    name: String(metadata.name),
  };
}

// An entry recorded before applying: no uid or digest yet.
function intentEntry(desired: DesiredObject): InventoryEntry {
  const address = addressOf(desired.object);
  return { identity: desired.identity, ...address, app: desired.app, uid: "", digest: "" };
}

// What went wrong, on one bounded line: errors can quote what a member sent.
function message(error: unknown): string {
  return oneLine(error instanceof Error ? error.message : String(error));
}

/** What detaching an app from one cluster did, per object. */
export interface DetachResult {
  readonly cluster: string;
  readonly app: string;
  readonly objects: readonly {
    readonly identity: string;
    readonly outcome: DetachOutcome;
    readonly error?: string;
  }[];
  readonly inventory: Inventory;
}

/**
 * Detaches every object of an app from one cluster (migration rollback): each is left running
 * without gitfleet's labels and ownership, and leaves the inventory, so no later prune can touch it.
 * Objects whose detach failed stay in the inventory, to be tried again.
 */
export async function detachApp(input: {
  readonly cluster: string;
  readonly client: MemberClient;
  readonly app: string;
  readonly sourceCommit: string;
  readonly knownInventory: Inventory;
}): Promise<DetachResult> {
  const stored = await readInventory(input.client, input.knownInventory);
  const inventory = new Map(stored.inventory);
  const entries = [...inventory.values()].filter((entry) => entry.app === input.app);
  const objects = await mapConcurrently(entries, 8, async (entry) => ({
    identity: entry.identity,
    ...(await detachObject(input.client, entry)),
  }));
  for (const object of objects) if (object.outcome !== "failed") inventory.delete(object.identity);
  const owner = { cluster: input.cluster, sourceCommit: input.sourceCommit, pruneBase: stored.pruneBase };
  await writeInventory(input.client, owner, inventory, stored.text);
  return { cluster: input.cluster, app: input.app, objects, inventory };
}
