import { asList, asMap, type Json, type JsonMap } from "../apimachinery/json.js";
import type { ClusterHealth } from "../failover/cluster-health.js";
import type { HostedCredentials } from "../model/controlplane/credential-record.js";
import { HEALTH_STATUSES, type Health } from "../model/health.js";
import { capacityRecord, readCapacityRecord } from "../model/node-capacity.js";
import { readServedApis, servedApisRecord } from "../model/served-apis.js";
import { inventoryEntries, inventoryFromStatus } from "../sync/inventory.js";
import type {
  ClusterSyncResult,
  Hold,
  ObjectAction,
  ObjectResult,
  PruneOutcome,
  PruneResult,
} from "../sync/sync-result.js";

/**
 * What a shard's holder observed of its members — each one's condition (the probes') and its last
 * sync's result — committed to a ref of the shard's own, which the leader folds in as it folds in
 * pull-mode agents' reports. The leader trusts it as it trusts a member's answers: as observations
 * only, read bounded and validated, and only for the clusters the shard has.
 */
export interface ShardReport {
  readonly shard: number;
  readonly holder: string;
  /** Per cluster, the probes' condition (absent before the first probe). */
  readonly conditions: ReadonlyMap<string, ClusterHealth>;
  /** Per cluster, its last sync's result. */
  readonly results: ReadonlyMap<string, ClusterSyncResult>;
}

/** Where a shard's ref holds its report. */
export const SHARD_REPORT_PATH = "status/shard.json";

/** The largest report the leader reads. */
export const MAX_SHARD_REPORT_BYTES = 16 * 2 ** 20;

const MAX_OBJECTS = 200_000;
const MAX_TEXT = 4096;
const ACTIONS: readonly ObjectAction[] = [
  "held",
  "created",
  "configured",
  "unchanged",
  "corrected",
  "drifted",
  "conflict",
  "failed",
];
const PRUNE_OUTCOMES: readonly PruneOutcome[] = [
  "deleted",
  "gone",
  "replaced",
  "detached",
  "prune-disabled",
  "failed",
];
const HOLDERS: readonly Hold["by"][] = ["rollout", "migration", "control-plane"];
const COMMIT = /^[0-9a-f]{40}$/;

/** The report as its ref holds it: JSON, clusters by name, every field a plain value. */
export function shardReportText(report: ShardReport): string {
  const names = [...new Set([...report.conditions.keys(), ...report.results.keys()])].sort();
  const clusters: JsonMap = {};
  for (const name of names) {
    const health = report.conditions.get(name);
    const result = report.results.get(name);
    clusters[name] = {
      ...(health ? { condition: conditionRecord(health) } : {}),
      ...(result ? { sync: syncRecord(result) } : {}),
    };
  }
  const root = { kind: "ShardReport", shard: report.shard, holder: report.holder, clusters };
  // Keys sorted at every level: the same observations give the same bytes, so an unchanged report is no commit.
  return `${JSON.stringify(root, (_key, value: unknown) => (isPlainMap(value) ? sortedKeys(value) : value), 1)}\n`;
}

/**
 * Reads a report back, keeping only what the shard may speak for: clusters of `clusters` (the shard's
 * under the current assignment), each value validated; anything else is left out. Undefined when the
 * text is not a report of this shard.
 */
export function readShardReport(
  text: string,
  shard: number,
  clusters: ReadonlySet<string>,
): ShardReport | undefined {
  if (text.length > MAX_SHARD_REPORT_BYTES) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const root = asMap(value);
  if (root.kind !== "ShardReport" || root.shard !== shard || typeof root.holder !== "string")
    return undefined;
  const conditions = new Map<string, ClusterHealth>();
  const results = new Map<string, ClusterSyncResult>();
  for (const [cluster, entry] of Object.entries(asMap(root.clusters))) {
    if (!clusters.has(cluster)) continue;
    const condition = readCondition(asMap(entry).condition);
    if (condition) conditions.set(cluster, condition);
    const result = readSync(cluster, asMap(entry).sync);
    if (result) results.set(cluster, result);
  }
  return { shard, holder: text1(root.holder, 253) ?? "", conditions, results };
}

// The condition as the leader reads it: ready, why, since when. The probes' running counts are left
// out — they change with every probe, and a report should change only when the condition does (the
// next holder continues from the status branch's record, not from counts).
function conditionRecord(health: ClusterHealth): JsonMap {
  return {
    ready: health.ready,
    ...(health.reason && !health.ready ? { reason: health.reason } : {}),
    since: health.since,
    ...(health.lastError && !health.ready ? { lastError: health.lastError } : {}),
  };
}

function readCondition(value: Json | undefined): ClusterHealth | undefined {
  const record = asMap(value);
  const since = count(record.since);
  if (typeof record.ready !== "boolean" || since === undefined) return undefined;
  const reason = record.reason === "NotReady" || record.reason === "Unreachable" ? record.reason : undefined;
  const lastError = text1(record.lastError, MAX_TEXT);
  return {
    ready: record.ready,
    since,
    failures: 0,
    successes: 0,
    ...(reason && !record.ready ? { reason } : {}),
    ...(lastError && !record.ready ? { lastError } : {}),
  };
}

function syncRecord(result: ClusterSyncResult): JsonMap {
  return {
    sourceCommit: result.sourceCommit,
    reachable: result.reachable,
    ...(result.error ? { error: result.error } : {}),
    objects: result.objects.map((o) => ({ ...o }) as unknown as JsonMap),
    pruned: result.pruned.map((p) => ({ ...p }) as unknown as JsonMap),
    ...(result.pruneBlocked ? { pruneBlocked: { ...result.pruneBlocked } as unknown as JsonMap } : {}),
    retained: [...result.retained],
    inventory: inventoryEntries(result.inventory),
    ...(result.pruneBase ? { pruneBase: result.pruneBase } : {}),
    ...(result.capacity ? { capacity: capacityRecord(result.capacity) } : {}),
    ...(result.served ? { served: servedApisRecord(result.served) } : {}),
    ...(result.version ? { version: result.version } : {}),
    ...(result.credentials ? { credentials: result.credentials as unknown as JsonMap } : {}),
  };
}

// One cluster's sync result back, or undefined when its frame does not validate; objects and prunes
// that do not validate are left out.
function readSync(cluster: string, value: Json | undefined): ClusterSyncResult | undefined {
  const record = asMap(value);
  const sourceCommit = typeof record.sourceCommit === "string" ? record.sourceCommit : "";
  if (!COMMIT.test(sourceCommit) || typeof record.reachable !== "boolean") return undefined;
  const inventory = inventoryFromStatus({
    entries: asList(record.inventory).slice(0, MAX_OBJECTS),
  }).inventory;
  const error = text1(record.error, MAX_TEXT);
  const pruneBase =
    typeof record.pruneBase === "string" && COMMIT.test(record.pruneBase) ? record.pruneBase : undefined;
  const capacity = readCapacityRecord(record.capacity);
  const served = readServedApis(record.served);
  const version = text1(record.version, 64);
  const blocked = readPruneBlocked(record.pruneBlocked);
  const credentials = readCredentials(record.credentials);
  return {
    cluster,
    sourceCommit,
    reachable: record.reachable,
    ...(error ? { error } : {}),
    objects: asList(record.objects)
      .slice(0, MAX_OBJECTS)
      .flatMap((o) => readObject(o) ?? []),
    pruned: asList(record.pruned)
      .slice(0, MAX_OBJECTS)
      .flatMap((p) => readPrune(p) ?? []),
    ...(blocked ? { pruneBlocked: blocked } : {}),
    retained: asList(record.retained)
      .slice(0, MAX_OBJECTS)
      .flatMap((r) => text1(r, MAX_TEXT) ?? []),
    inventory,
    ...(pruneBase ? { pruneBase } : {}),
    ...(capacity ? { capacity } : {}),
    ...(served ? { served } : {}),
    ...(version ? { version } : {}),
    ...(credentials ? { credentials } : {}),
  };
}

function readObject(value: Json): ObjectResult | undefined {
  const o = asMap(value);
  const identity = text1(o.identity, MAX_TEXT);
  const app = text1(o.app, 253);
  const health = readHealth(o.health);
  const action = ACTIONS.find((a) => a === o.action);
  if (!identity || !app || !health || !action) return undefined;
  const texts = {
    error: text1(o.error, MAX_TEXT),
    held: text1(o.held, MAX_TEXT),
    degradedReason: text1(o.degradedReason, MAX_TEXT),
  };
  const counts = {
    desiredReplicas: count(o.desiredReplicas),
    readyReplicas: count(o.readyReplicas),
    unschedulableReplicas: count(o.unschedulableReplicas),
    degradedReplicas: count(o.degradedReplicas),
  };
  const heldBy = HOLDERS.find((h) => h === o.heldBy);
  const drift = Array.isArray(o.drift)
    ? o.drift.slice(0, 100).flatMap((d) => text1(d, MAX_TEXT) ?? [])
    : undefined;
  return {
    identity,
    app,
    action,
    health,
    ...defined(texts),
    ...defined(counts),
    ...(heldBy ? { heldBy } : {}),
    ...(drift ? { drift } : {}),
    ...(o.scaledByHpa === true ? { scaledByHpa: true } : {}),
  };
}

function readPrune(value: Json): PruneResult | undefined {
  const p = asMap(value);
  const identity = text1(p.identity, MAX_TEXT);
  const app = text1(p.app, 253);
  const outcome = PRUNE_OUTCOMES.find((o) => o === p.outcome);
  if (!identity || !app || !outcome) return undefined;
  const error = text1(p.error, MAX_TEXT);
  return { identity, app, outcome, ...(error ? { error } : {}) };
}

function readPruneBlocked(value: Json | undefined): ClusterSyncResult["pruneBlocked"] {
  const b = asMap(value);
  const token = text1(b.token, 256);
  const blockedCount = count(b.count);
  if (!token || blockedCount === undefined) return undefined;
  return {
    token,
    count: blockedCount,
    reasons: asList(b.reasons)
      .slice(0, 100)
      .flatMap((r) => text1(r, MAX_TEXT) ?? []),
  };
}

// Hosted control planes' credentials as records say them (fingerprints and expiries, never a key).
function readCredentials(value: Json | undefined): HostedCredentials | undefined {
  if (value === undefined) return undefined;
  const read: Record<string, HostedCredentials[string]> = {};
  for (const [cluster, entry] of Object.entries(asMap(value)).slice(0, 1000)) {
    const e = asMap(entry);
    const error = text1(e.error, MAX_TEXT);
    if (error) {
      read[cluster] = { error };
      continue;
    }
    read[cluster] = {
      records: asList(e.records)
        .slice(0, 1000)
        .flatMap((r) => {
          const c = asMap(r);
          const namespace = text1(c.namespace, 253);
          const name = text1(c.name, 253);
          const fingerprint = text1(c.fingerprint, 128);
          const action = ["kept", "created", "renewed", "reissued"].find((a) => a === c.action);
          if (!namespace || !name || !fingerprint || !action) return [];
          const reason = text1(c.reason, MAX_TEXT);
          const notAfter = text1(c.notAfter, 64);
          return [
            {
              namespace,
              name,
              fingerprint,
              action: action as "kept",
              ...(reason ? { reason } : {}),
              ...(notAfter ? { notAfter } : {}),
            },
          ];
        }),
    };
  }
  return read;
}

function readHealth(value: Json | undefined): Health | undefined {
  const h = asMap(value);
  const status = HEALTH_STATUSES.find((s) => s === h.status);
  if (!status) return undefined;
  const reason = text1(h.reason, MAX_TEXT);
  return { status, ...(reason ? { reason } : {}) };
}

function isPlainMap(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function sortedKeys(map: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.keys(map)
      .sort()
      .map((key) => [key, map[key]]),
  );
}

// A string of at most `max` characters, else undefined.
function text1(value: Json | undefined, max: number): string | undefined {
  return typeof value === "string" && value.length > 0 && value.length <= max ? value : undefined;
}

// A non-negative safe integer, else undefined.
function count(value: Json | undefined): number | undefined {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}

// The entries whose value is defined (an optional field is absent, never undefined).
function defined<T>(values: Record<string, T | undefined>): Record<string, T> {
  return Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined)) as Record<string, T>;
}
