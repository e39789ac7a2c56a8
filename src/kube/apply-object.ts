import { asMap, type JsonMap, valueAt } from "../apimachinery/json.js";
import { type PreservedLabels, readState } from "../model/state-preservation.js";
import type { ResourceInterpreterSpec } from "../model/types.js";
import { appliedByGitfleet, decide } from "../sync/apply-decision.js";
import type { DesiredObject } from "../sync/desired-objects.js";
import { driftedPaths } from "../sync/drift.js";
import { entryPointOf } from "../sync/entry-points.js";
import { assessHealth } from "../sync/health.js";
import { leaveReplicasToHpa } from "../sync/hpa-owned-replicas.js";
import type { InventoryEntry } from "../sync/inventory.js";
import { quotaUsageOf } from "../sync/quota-usage.js";
import type { Hold, ObjectAction, ObjectResult, QuotaUsage } from "../sync/sync-result.js";
import type { ClusterSyncInput } from "./cluster-sync-input.js";
import { addressOf, MemberApiError, type MemberClient, message } from "./member-client.js";
import { takeOverFields } from "./take-over.js";
import { writerOf } from "./team-access.js";

export interface Applied {
  readonly result: ObjectResult;
  /** The inventory entry after this object's sync; undefined drops it (gitfleet did not create it). */
  readonly entry: InventoryEntry | undefined;
  readonly live?: JsonMap;
}

export async function applyOne(
  input: ClusterSyncInput,
  rendered: DesiredObject,
  entry: InventoryEntry | undefined,
  listed: JsonMap | undefined,
  scaledByHpa: ReadonlySet<string>,
): Promise<Applied> {
  const waiting = holdFor(input, rendered, listed);
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

// Why an object is left as it runs this sync: its app's hold (rollout, migration) or its own.
function holdOf(input: ClusterSyncInput, rendered: DesiredObject): Hold | undefined {
  return input.held?.get(rendered.app) ?? input.heldObjects?.get(rendered.identity);
}

// The object's hold, unless it is a window's that lets this change through as a scale.
function holdFor(
  input: ClusterSyncInput,
  rendered: DesiredObject,
  listed: JsonMap | undefined,
): Hold | undefined {
  const hold = holdOf(input, rendered);
  return hold && !passesAsScale(hold, rendered, listed) ? hold : undefined;
}

// In a window failover passes, an object whose replica count failover changes goes through (with the
// rest of its rendering: a window never blocks failover); the app's other objects wait for the window.
function passesAsScale(hold: Hold, rendered: DesiredObject, live: JsonMap | undefined): boolean {
  if (!hold.exceptScale || !live) return false;
  return driftedPaths(rendered.object, live, 50).some((path) => SCALE_PATHS.has(path));
}

const SCALE_PATHS = new Set(["spec.replicas", "spec.parallelism", "spec.completions"]);

export async function applyObject(
  client: MemberClient,
  desired: DesiredObject,
  correcting: boolean,
  adopting: boolean,
): Promise<JsonMap> {
  // A team's object is written as its team: the member's RBAC is the last check of its bounds.
  const writer = writerOf(client, desired);
  const applied = await writer.apply(desired.object, desired.policy.force || correcting || adopting);
  if (!adopting) return applied;
  return (await takeOverFields(writer, addressOf(desired.object))) ?? applied;
}

// An object of an app whose rollout has not reached this cluster: left as it runs, reported with why.
// A held object as it runs: listed when gitfleet manages it, else looked up, so that an object a
// migration has not adopted yet reports its real health.
export async function heldLive(
  input: ClusterSyncInput,
  rendered: DesiredObject,
  entry: InventoryEntry | undefined,
  listed: JsonMap | undefined,
): Promise<JsonMap | undefined> {
  if (listed || entry) return listed;
  return input.client.get(addressOf(rendered.object)).catch(() => undefined);
}

export function heldBack(
  input: ClusterSyncInput,
  desired: DesiredObject,
  entry: InventoryEntry | undefined,
  live: JsonMap | undefined,
  hold: Hold,
): Applied {
  const { reason, by } = hold;
  const until = hold.until === undefined ? {} : { heldUntil: hold.until };
  if (live && entry) {
    // What runs is the old rendering: its replicas are the desired ones until the rollout arrives.
    const kept = settled(input, { ...desired, object: live }, "held", live, entry);
    // Suspended or out of its window: how the cluster departs from the rendering is reported.
    const drift = by === "suspend" || by === "window" ? driftedPaths(desired.object, live) : [];
    return withDrift({ ...kept, result: { ...kept.result, held: reason, heldBy: by, ...until } }, drift);
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
      ...liveFields(live),
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

export function withDrift(applied: Applied, drift: readonly string[]): Applied {
  return drift.length === 0 ? applied : { ...applied, result: { ...applied.result, drift } };
}

export function refused(desired: DesiredObject): Applied {
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

export function failed(desired: DesiredObject, entry: InventoryEntry | undefined, error: unknown): Applied {
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

export function settled(
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
      ...liveFields(live),
      ...stateOf(input, desired.identity, live),
    },
    entry: { ...entry, uid },
    live,
  };
}

// Desired and ready replicas of a workload: built-in kinds, or a ResourceInterpreter's paths.
export function replicasOf(
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

// A LoadBalancer Service's addresses: where its cluster is reached (exported services, gateways).
// What the workload's failover would carry to the clusters its replicas move to (statePreservation).
function stateOf(input: ClusterSyncInput, identity: string, live: JsonMap): { state?: PreservedLabels } {
  const rules = input.stateRulesFor?.(identity) ?? [];
  const state = rules.length > 0 ? readState(rules, live) : undefined;
  return state ? { state } : {};
}

// A ResourceQuota's usage: what its namespace uses in the cluster (a FederatedResourceQuota's).
function liveFields(live: JsonMap): { entryPoint?: readonly string[]; quotaUsage?: QuotaUsage } {
  const entryPoint = entryPointOf(live);
  const quotaUsage = quotaUsageOf(live);
  return { ...(entryPoint ? { entryPoint } : {}), ...(quotaUsage ? { quotaUsage } : {}) };
}

// An entry recorded before applying: no uid or digest yet.
export function intentEntry(desired: DesiredObject): InventoryEntry {
  const address = addressOf(desired.object);
  return { identity: desired.identity, ...address, app: desired.app, uid: "", digest: "" };
}
