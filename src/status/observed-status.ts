import { isJsonMap, type Json, type JsonMap } from "../apimachinery/json.js";
import { compareStrings } from "../model/file-tree.js";
import type { Health, HealthStatus } from "../model/health.js";
import { describeIdentity } from "../model/identity.js";
import { capacityRecord } from "../model/node-capacity.js";
import { oneLine } from "../model/one-line.js";
import { servedApisRecord } from "../model/served-apis.js";
import type { EventKind } from "../model/trailers.js";
import type { FleetModel } from "../model/types.js";
import { emitYaml } from "../render/yaml-emitter.js";
import { entryPointsOf } from "../sync/entry-points.js";
import { worstHealth } from "../sync/health.js";
import { quotaUsageRecord } from "../sync/quota-usage.js";
import type { ClusterSyncResult, ObjectResult } from "../sync/sync-result.js";
import { credentialLines, hostedCredentialsRecord } from "./hosted-plane-status.js";
import { type StatusMessage, statusMessage } from "./status-message.js";

// status/apps/<app>.yaml and status/clusters/<cluster>.yaml have two writers: the reconcile writes
// what gitfleet decided, the sync appends what it observed in an `observed:` block, always last. Each
// writer replaces only its own part, so neither needs to parse the other's.

const OBSERVED_LINE = /^observed:/m;

/** A status file's reconcile part and its observed block (undefined when it has none). */
export function splitObserved(text: string): { base: string; observed: string | undefined } {
  const match = OBSERVED_LINE.exec(text);
  if (!match) return { base: text, observed: undefined };
  return { base: text.slice(0, match.index), observed: text.slice(match.index) };
}

/** The file with this observed block (or without one). */
export function joinObserved(base: string, observed: string | undefined): string {
  return observed === undefined ? base : base + observed;
}

/**
 * An app's observed block: per cluster it is rendered to, its health (the least healthy of its
 * objects, with the reason), the source commit the cluster runs, ready replicas per workload, and
 * the objects that failed, conflicted or drifted. Nothing in it depends on the time, so an
 * unchanged fleet gives an unchanged block. Pure.
 */
export function appObserved(
  app: string,
  clusters: readonly string[],
  results: ReadonlyMap<string, ClusterSyncResult>,
  reported: ReadonlyMap<string, AgentReport> = new Map(),
): string {
  const observed: Record<string, JsonMap> = {};
  for (const cluster of [...clusters].sort(compareStrings)) {
    const result = results.get(cluster);
    const report = reported.get(cluster);
    if (result)
      observed[cluster] = result.reachable
        ? appInCluster(
            result,
            app,
            result.objects.filter((o) => o.app === app),
          )
        : unreachable(result);
    else if (report)
      observed[cluster] = report.apps[app] ?? { health: "Unknown", reason: "not in the agent's report" };
    else observed[cluster] = { health: "Unknown", reason: "not synced yet" };
  }
  return emitYaml({ observed });
}

/**
 * What a pull-mode agent reports for its cluster: the cluster's observed block, each app's (as the
 * controller writes them for push-mode clusters), and each workload's replicas as numbers, keyed by
 * identity — the values failover and autoscaling read, never parsed back from display text.
 */
export interface AgentReport {
  readonly cluster: string;
  readonly observed: JsonMap;
  readonly apps: Readonly<Record<string, JsonMap>>;
  readonly replicas: Readonly<Record<string, ReportedReplicas>>;
}

/** One workload's replicas in an agent's cluster. */
export interface ReportedReplicas {
  /** What the member's object asks for (the member HPA's count when one scales it). */
  readonly desired: number;
  readonly ready: number;
  /** Pods Pending as Unschedulable. */
  readonly unschedulable: number;
  readonly scaledByHpa?: boolean;
  /** Pods that cannot run (CrashLoopBackOff, ImagePullBackOff, ErrImagePull, past the progress deadline). */
  readonly degraded?: number;
  readonly degradedReason?: string;
}

const MAX_REPORTED_WORKLOADS = 5000;

/** The ConfigMap (in gitfleet-system) in which an agent keeps its latest report, for when it cannot push. */
export const AGENT_STATUS_CONFIGMAP = "gitfleet-agent-status";

/** status/agents/<cluster>.yaml, which the agent commits to the status branch. */
export function agentReportPath(cluster: string): string {
  return `status/agents/${cluster}.yaml`;
}

/** The agent's report of one sync: the same blocks the controller writes for push-mode clusters. Pure. */
export function agentReportText(result: ClusterSyncResult, agent: string): string {
  const apps: Record<string, JsonMap> = {};
  const named = [...result.objects.map((o) => o.app), ...(result.hooks ?? []).map((h) => h.app)];
  for (const app of [...new Set(named)].sort(compareStrings))
    apps[app] = appInCluster(
      result,
      app,
      result.objects.filter((o) => o.app === app),
    );
  const replicas: Record<string, JsonMap> = {};
  for (const o of [...result.objects].sort((a, b) => compareStrings(a.identity, b.identity)))
    if (o.desiredReplicas !== undefined)
      replicas[o.identity] = {
        desired: o.desiredReplicas,
        ready: o.readyReplicas ?? 0,
        unschedulable: o.unschedulableReplicas ?? 0,
        ...(o.scaledByHpa ? { scaledByHpa: true } : {}),
        ...(o.degradedReplicas
          ? { degraded: o.degradedReplicas, degradedReason: o.degradedReason ?? "" }
          : {}),
      };
  return emitYaml({ cluster: result.cluster, agent, observed: clusterObservedValue(result), apps, replicas });
}

/** Reads an agent's report back; undefined when it is not one. */
export function readAgentReport(value: unknown): AgentReport | undefined {
  if (!isJsonMap(value) || typeof value.cluster !== "string" || !isJsonMap(value.observed)) return undefined;
  const apps: Record<string, JsonMap> = {};
  for (const [app, entry] of Object.entries(isJsonMap(value.apps) ? value.apps : {}))
    if (isJsonMap(entry)) apps[app] = entry;
  return { cluster: value.cluster, observed: value.observed, apps, replicas: readReplicas(value.replicas) };
}

// The typed replicas of a report: counts that are whole numbers of at least 0, at most 5,000 workloads.
function readReplicas(value: unknown): Record<string, ReportedReplicas> {
  const replicas: Record<string, ReportedReplicas> = {};
  if (!isJsonMap(value)) return replicas;
  for (const [identity, entry] of Object.entries(value).slice(0, MAX_REPORTED_WORKLOADS)) {
    if (!isJsonMap(entry)) continue;
    const { desired, ready, unschedulable } = entry;
    if (!isCount(desired) || !isCount(ready) || !isCount(unschedulable)) continue;
    replicas[oneLine(identity, 600)] = {
      desired,
      ready,
      unschedulable,
      ...(entry.scaledByHpa === true ? { scaledByHpa: true } : {}),
      ...(isCount(entry.degraded) && entry.degraded > 0
        ? { degraded: entry.degraded, degradedReason: oneLine(String(entry.degradedReason ?? ""), 80) }
        : {}),
    };
  }
  return replicas;
}

function isCount(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}

/**
 * A report from outside (an agent's branch, its cluster's ConfigMap) as the controller keeps it: the
 * apps the fleet has only, every string one bounded line, at most 5,000 entries per map — so it can
 * speak about its own cluster's apps and nothing else, and never add a line to a status file.
 */
export function sanitizeAgentReport(report: AgentReport, model: FleetModel): AgentReport {
  const apps = new Set(model.apps.map((a) => a.name));
  const kept: Record<string, JsonMap> = {};
  for (const [app, entry] of Object.entries(report.apps)) if (apps.has(app)) kept[app] = boundedMap(entry, 0);
  return {
    cluster: report.cluster,
    observed: boundedMap(report.observed, 0),
    apps: kept,
    replicas: readReplicas(report.replicas),
  };
}

function boundedMap(map: JsonMap, depth: number): JsonMap {
  const out: JsonMap = {};
  for (const [key, value] of Object.entries(map).slice(0, 5000)) {
    const bounded = boundedValue(value, depth + 1);
    if (bounded !== undefined) out[oneLine(key, 253)] = bounded;
  }
  return out;
}

function boundedValue(value: Json, depth: number): Json | undefined {
  if (depth > 6) return undefined;
  if (typeof value === "string") return oneLine(value);
  if (Array.isArray(value)) return value.slice(0, 5000).flatMap((v) => boundedValue(v, depth + 1) ?? []);
  if (isJsonMap(value)) return boundedMap(value, depth);
  return value;
}

// Per workload: ready of desired, pods unschedulable, and pods that cannot run and why.
function replicaLines(objects: readonly ObjectResult[]) {
  const ready: Record<string, string> = {};
  const unschedulable: Record<string, number> = {};
  const degraded: Record<string, string> = {};
  for (const o of objects) {
    const name = describeIdentity(o.identity);
    if (o.desiredReplicas !== undefined) ready[name] = `${o.readyReplicas ?? 0}/${o.desiredReplicas}`;
    if (o.unschedulableReplicas) unschedulable[name] = o.unschedulableReplicas;
    if (o.degradedReplicas) degraded[name] = `${o.degradedReplicas} ${o.degradedReason ?? "degraded"}`;
  }
  return { ready, unschedulable, degraded };
}

function appInCluster(result: ClusterSyncResult, app: string, objects: readonly ObjectResult[]): JsonMap {
  // An app of hooks alone (a migration run as a Job) stands as its hooks do.
  const hooksAlone = objects.length === 0 ? hookHealth(result, app) : [];
  const health = worstHealth([...objects.map((o) => described(o)), ...hooksAlone]);
  const { ready, unschedulable, degraded } = replicaLines(objects);
  const problems = objects
    .filter((o) => o.error !== undefined || (o.drift?.length ?? 0) > 0)
    .map((o) => ({
      object: describeIdentity(o.identity),
      action: o.action,
      ...(o.error ? { error: o.error } : {}),
      ...(o.drift?.length ? { drift: [...o.drift] } : {}),
    }));
  const hold = objects.find((o) => o.held !== undefined);
  const hooks = hookLines(result, app);
  return {
    health: health.status,
    ...(health.reason ? { reason: health.reason } : {}),
    // A migration's hold is not a rollout's: the app waits for a reviewed commit, not for time.
    ...(hold?.held ? { [holdKey(hold.heldBy)]: hold.held } : {}),
    syncedCommit: result.sourceCommit,
    ...(Object.keys(ready).length > 0 ? { ready } : {}),
    ...(Object.keys(unschedulable).length > 0 ? { unschedulable } : {}),
    ...(Object.keys(degraded).length > 0 ? { degraded } : {}),
    ...(problems.length > 0 ? { problems } : {}),
    ...(Object.keys(hooks).length > 0 ? { hooks } : {}),
  };
}

// An object's health, its name in the reason so an app's worst reason says which object.
function described(o: ObjectResult): Health {
  return o.health.reason === undefined
    ? o.health
    : { status: o.health.status, reason: `${describeIdentity(o.identity)}: ${o.health.reason}` };
}

function unreachable(result: ClusterSyncResult): JsonMap {
  return { health: "Unknown", reason: `cluster unreachable: ${result.error ?? "no answer"}` };
}

/**
 * A cluster's observed block: reachable, the commit it runs, counts by health and by problem, a
 * blocked prune; `carried`, the last readings of a member that did not answer. Pure.
 */
export function clusterObserved(
  result: ClusterSyncResult | undefined,
  condition?: JsonMap,
  reported?: JsonMap,
  carried?: JsonMap,
): string {
  // The probes' condition first, then what the last sync (or the agent) saw.
  return emitYaml({
    observed: {
      ...(condition ? { condition } : {}),
      ...(result ? clusterObservedValue(result) : (reported ?? {})),
      ...(carried ?? {}),
    },
  });
}

// The entry points of the cluster's LoadBalancer Services gitfleet syncs, "namespace/name" → addresses.
function entryPointsRecord(result: ClusterSyncResult): JsonMap | undefined {
  const services = entryPointsOf(result);
  if (services.size === 0) return undefined;
  return Object.fromEntries(
    [...services].sort(([a], [b]) => compareStrings(a, b)).map(([k, v]) => [k, [...v]]),
  );
}

// The member's own credential: its kind, when it stops working, a fingerprint; never its value.
function credentialRecord(result: ClusterSyncResult): JsonMap | undefined {
  const credential = result.credential;
  if (!credential) return undefined;
  return {
    kind: credential.kind,
    notAfter: credential.notAfter,
    fingerprint: credential.fingerprint,
    ...(credential.expiring ? { expiring: true } : {}),
  };
}

// What a sync read of the member besides its objects: credential, hosted planes, APIs, entry points, quotas.
function readingsRecord(result: ClusterSyncResult, credential: JsonMap | undefined): JsonMap {
  const readings: JsonMap = {};
  if (credential) readings.credential = credential;
  const planes = hostedControlPlanesRecord(result);
  if (planes) readings.hostedControlPlanes = planes;
  if (result.served) readings.apis = servedApisRecord(result.served);
  const entryPoints = entryPointsRecord(result);
  if (entryPoints) readings.services = entryPoints;
  const quotas = quotaUsageRecord(result);
  if (quotas) readings.quotas = quotas;
  return readings;
}

function clusterObservedValue(result: ClusterSyncResult): JsonMap {
  const credential = credentialRecord(result);
  if (!result.reachable)
    return { reachable: false, error: result.error ?? "no answer", ...(credential ? { credential } : {}) };
  const health: Partial<Record<HealthStatus, number>> = {};
  for (const o of result.objects) health[o.health.status] = (health[o.health.status] ?? 0) + 1;
  const count = (action: string) => result.objects.filter((o) => o.action === action).length;
  const observed: Record<string, Json> = {
    reachable: true,
    syncedCommit: result.sourceCommit,
    objects: result.objects.length,
    inventory: result.inventory.size,
    health: Object.fromEntries(Object.entries(health).sort(([a], [b]) => compareStrings(a, b))),
    conflicts: count("conflict"),
    failed: count("failed"),
    drifted: count("drifted"),
  };
  if (result.error) observed.error = result.error;
  if (result.capacity) observed.capacity = capacityRecord(result.capacity);
  if (result.version) observed.kubernetesVersion = result.version;
  Object.assign(observed, readingsRecord(result, credential));
  if (result.retained.length > 0) observed.retained = result.retained.map(describeIdentity);
  if (result.pruneBlocked)
    observed.pruneBlocked = {
      token: result.pruneBlocked.token,
      objects: result.pruneBlocked.count,
      reasons: [...result.pruneBlocked.reasons],
      allowWith: `add ${result.pruneBlocked.token} to spec.pruning.allowPrune in fleet.yaml`,
    };
  return observed;
}

/**
 * A sync status commit's message: the subject ("sync", or "agent <cluster>"), then per cluster what
 * was applied, pruned, blocked or unreachable. Its event: `rollout` when a cluster took a change,
 * else `sync` (an agent's commits are `agent`).
 */
export function syncCommitMessage(
  results: readonly ClusterSyncResult[],
  writer: { readonly subject: string; readonly kind: EventKind } | undefined = undefined,
): StatusMessage {
  const parts: string[] = [];
  const lines: string[] = [];
  let applied = false;
  for (const result of [...results].sort((a, b) => compareStrings(a.cluster, b.cluster))) {
    if (!result.reachable) {
      parts.push(`${result.cluster} unreachable`);
      lines.push(`${result.cluster}: unreachable (${result.error ?? "no answer"})`);
      continue;
    }
    const changed = result.objects.filter((o) => !["unchanged", "drifted", "held"].includes(o.action)).length;
    applied ||= changed > 0;
    const health = worstHealth(result.objects.map((o) => o.health)).status;
    parts.push(`${result.cluster} ${health}`);
    const details = [
      `${changed} applied`,
      `${result.pruned.filter((p) => p.outcome === "deleted").length} pruned`,
      ...(result.pruneBlocked ? [`prune blocked (${result.pruneBlocked.token})`] : []),
      ...(result.objects.some((o) => o.action === "conflict") ? ["conflicts"] : []),
    ];
    lines.push(`${result.cluster}: ${details.join(", ")}; ${health}`);
    lines.push(...credentialLines(result.cluster, result.credentials));
  }
  const kind = writer?.kind ?? (applied ? "rollout" : "sync");
  return statusMessage(kind, `${writer?.subject ?? "sync"}: ${parts.join(", ")}`, lines);
}

// Per hosted cluster, each credential's fingerprint and expiry (what changes only when it is
// renewed), or why the credentials step failed. Never a body.
// Per hosted cluster a host runs: its credentials (fingerprints and expiry) and each component's
// health as this sync saw it ("kube-apiserver: 1/1 Healthy"), from its control-plane app's workloads.
function hostedControlPlanesRecord(result: ClusterSyncResult): JsonMap | undefined {
  const out: Record<string, JsonMap> = result.credentials
    ? (hostedCredentialsRecord(result.credentials) as Record<string, JsonMap>)
    : {};
  const components = controlPlaneComponents(result.objects);
  for (const [cluster, entry] of Object.entries(components))
    out[cluster] = { ...(out[cluster] ?? {}), components: entry };
  if (Object.keys(out).length === 0) return undefined;
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => compareStrings(a, b)));
}

const CONTROL_PLANE_APP = "gitfleet-cp-";
const WORKLOAD_KINDS = new Set(["Deployment", "StatefulSet"]);

/** Per hosted cluster, its control plane's workloads in the host, each as "ready/desired Health[, why]". Pure. */
export function controlPlaneComponents(
  objects: readonly ClusterSyncResult["objects"][number][],
): Record<string, Record<string, string>> {
  const found = new Map<string, [string, string][]>();
  for (const o of objects) {
    if (!o.app.startsWith(CONTROL_PLANE_APP)) continue;
    const [, kind = "", , name = ""] = o.identity.split("/");
    if (!WORKLOAD_KINDS.has(kind)) continue;
    const cluster = o.app.slice(CONTROL_PLANE_APP.length);
    found.set(cluster, [...(found.get(cluster) ?? []), [name, componentText(o)]]);
  }
  return Object.fromEntries(
    [...found].map(([cluster, entries]) => [
      cluster,
      Object.fromEntries(entries.sort(([a], [b]) => compareStrings(a, b))),
    ]),
  );
}

// "1/1 Healthy", "0/1 Progressing (1 CrashLoopBackOff, held)".
function componentText(o: ClusterSyncResult["objects"][number]): string {
  const replicas = o.desiredReplicas === undefined ? "" : `${o.readyReplicas ?? 0}/${o.desiredReplicas} `;
  const why = [
    ...(o.degradedReplicas ? [`${o.degradedReplicas} ${o.degradedReason ?? "degraded"}`] : []),
    ...(o.action === "held" ? ["held"] : []),
  ];
  return `${replicas}${o.health.status}${why.length > 0 ? ` (${why.join(", ")})` : ""}`;
}

// Who holds an app's objects, as its status says it: a rollout, a migration, or a control plane's order.
function holdKey(by: string | undefined): string {
  return HOLD_KEYS[by ?? "rollout"] ?? "rollout";
}

/** The key of status/apps/'s observed block that says why an app waits in a cluster, by what holds it. */
export const HOLD_KEYS: Readonly<Record<string, string>> = {
  rollout: "rollout",
  migration: "migration",
  "control-plane": "controlPlane",
  dependency: "dependsOn",
  wave: "syncWave",
  hook: "hook",
  suspend: "suspended",
  window: "syncWindow",
};

// The health of an app's hooks: a failed one Degraded, one pending or running Progressing.
function hookHealth(result: ClusterSyncResult, app: string): Health[] {
  return (result.hooks ?? [])
    .filter((hook) => hook.app === app)
    .map((hook) => {
      const name = `${hook.phase} hook ${describeIdentity(hook.identity)}`;
      const why = hook.message ? `: ${hook.message}` : "";
      if (hook.outcome === "Succeeded") return { status: "Healthy" };
      if (hook.outcome === "Failed") return { status: "Degraded", reason: `${name} failed${why}` };
      return { status: "Progressing", reason: `${name} ${hook.outcome.toLowerCase()}${why}` };
    });
}

// "PreSync batch/Job/shop/migrate" → "Succeeded" (or "Failed: why", "Running"), for status/apps/.
function hookLines(result: ClusterSyncResult, app: string): Record<string, string> {
  const lines: Record<string, string> = {};
  for (const hook of result.hooks ?? [])
    if (hook.app === app)
      lines[`${hook.phase} ${describeIdentity(hook.identity)}`] =
        hook.message && hook.outcome !== "Succeeded" ? `${hook.outcome}: ${hook.message}` : hook.outcome;
  return lines;
}
