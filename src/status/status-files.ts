import { parse } from "yaml";
import { isJsonMap, type Json, type JsonMap } from "../apimachinery/json.js";
import { compareStrings } from "../model/file-tree.js";
import { spreadHash32 } from "../model/hash.js";
import type { Problem } from "../model/problem.js";
import type { RenderError, RenderedObject, WorkloadDecision } from "../render/render-result.js";
import { serviceViews } from "../render/service-discovery/service-views.js";
import { emitYaml } from "../render/yaml-emitter.js";
import { readEmittedYaml } from "../render/yaml-reader.js";
import { describeShortfall, shortfallOf } from "../schedule/shortfall.js";
import type { ScheduleDecision } from "../schedule/types.js";

// The files under status/ on the status branch (DESIGN.md §3). Each is a function of the render and,
// for an app, of the source commit that last changed it — never of the time or of the fleet's size,
// so an unchanged app's file stays byte-identical and a one-app change rewrites a handful of files.

export const SOURCE_STATUS_PATH = "status/source.yaml";

/** status/apps/<bucket>/<app>.yaml (see appStatusDirectory). */
export function appStatusPath(app: string): string {
  return `${appStatusDirectory(app)}${app}.yaml`;
}

/**
 * status/apps/<bucket>/, the directory of an app's status file: the bucket is two hex digits of a hash
 * of the app's name, as Git spreads its objects, so 50,000 apps make 256 directories of about 200
 * files and a one-app change rewrites two small trees rather than one of 50,000 entries.
 */
export function appStatusDirectory(app: string): string {
  return `status/apps/${(spreadHash32(app) >>> 24).toString(16).padStart(2, "0")}/`;
}

const APPS_PREFIX = "status/apps/";
const APP_STATUS_FILE = /^status\/apps\/(?:([0-9a-f]{2})\/)?([^/]+)\.yaml$/;

/**
 * The app whose status file `path` is: in its bucket, or at status/apps/<app>.yaml where gitfleet
 * before buckets wrote it (a reconcile moves such files into their buckets). Undefined for any other path.
 */
export function appOfStatusPath(path: string): string | undefined {
  const match = APP_STATUS_FILE.exec(path);
  const [, bucket, app] = match ?? [];
  if (app === undefined) return undefined;
  return bucket === undefined || appStatusDirectory(app) === `status/apps/${bucket}/` ? app : undefined;
}

/**
 * The app whose status file `path` is when it lies where gitfleet wrote it before buckets
 * (status/apps/<app>.yaml), which the next status commit moves; undefined for any other path.
 */
export function unbucketedApp(path: string): string | undefined {
  // Checked against every file of the branch at each commit: the prefix first.
  if (!path.startsWith(APPS_PREFIX) || path.includes("/", APPS_PREFIX.length)) return undefined;
  return appOfStatusPath(path);
}

/**
 * Each app's status file among `paths`, by app: the one in its bucket where both layouts hold one
 * (a branch written before buckets, not yet moved).
 */
export function appStatusFiles(paths: Iterable<string>): Map<string, string> {
  const files = new Map<string, string>();
  for (const path of paths) {
    const app = path.startsWith(APPS_PREFIX) ? appOfStatusPath(path) : undefined;
    if (app !== undefined && (!files.has(app) || unbucketedApp(path) === undefined)) files.set(app, path);
  }
  return files;
}

/** status/clusters/<cluster>.yaml */
export function clusterStatusPath(cluster: string): string {
  return `status/clusters/${cluster}.yaml`;
}

/** Where the loop stands: the last source commit it reconciled, and the one rendered/ comes from. */
export interface SourceStatus {
  /** The last source commit reconciled, valid or not. */
  readonly sourceCommit: string;
  /** The last valid source commit: what rendered/ holds. Absent until a commit validates. */
  readonly renderedCommit: string | undefined;
  readonly valid: boolean;
  /** Errors and warnings of the last reconciled commit, with file, line and column. */
  readonly problems: readonly Problem[];
}

export function sourceStatusText(status: SourceStatus): string {
  const errors = status.problems.filter((p) => p.severity === "error").length;
  return emitYaml({
    sourceCommit: status.sourceCommit,
    renderedCommit: status.renderedCommit ?? null,
    valid: status.valid,
    errors,
    warnings: status.problems.length - errors,
    problems: status.problems.map((p) => ({
      file: p.file,
      line: p.line,
      column: p.column,
      severity: p.severity,
      code: p.code,
      ...(p.path === "" ? {} : { path: p.path }),
      message: p.message,
    })),
  });
}

/** status/source.yaml read back: where the loop stands and how many errors the last commit had. */
export interface RecordedSource {
  readonly sourceCommit: string | undefined;
  readonly renderedCommit: string | undefined;
  readonly valid: boolean;
  readonly errors: number;
  readonly warnings: number;
}

/** Reads status/source.yaml (parsed) back; commits that are not 40 hex digits count as none. */
export function readSourceStatus(value: unknown): RecordedSource {
  const map = isJsonMap(value) ? value : {};
  const commit = (v: unknown) => (typeof v === "string" && /^[0-9a-f]{40}$/.test(v) ? v : undefined);
  const count = (v: unknown) => (typeof v === "number" && Number.isSafeInteger(v) && v >= 0 ? v : 0);
  return {
    sourceCommit: commit(map.sourceCommit),
    renderedCommit: commit(map.renderedCommit),
    valid: map.valid === true,
    errors: count(map.errors),
    warnings: count(map.warnings),
  };
}

/** status/source.yaml's text read back; a file that does not read as YAML records nothing. */
export function sourceStatusFromText(text: string): RecordedSource {
  try {
    return readSourceStatus(readEmittedYaml(text) ?? parse(text, { version: "1.1" }));
  } catch {
    return readSourceStatus(undefined);
  }
}

/** What one app renders: its objects, its workloads' decisions and its render errors. */
export interface AppOutput {
  readonly objects: readonly RenderedObject[];
  readonly decisions: readonly WorkloadDecision[];
  readonly errors: readonly RenderError[];
}

/**
 * status/apps/<app>.yaml: per cluster the objects it gets (and, for an app built by kustomize or
 * Helm, what built them) and each workload's desired replicas; per workload the scheduler's decision
 * with its reasons; render errors; the objects a build made that are never applied (Helm hooks).
 * `sourceCommit` is the source commit that last changed what the app renders.
 */
export function appStatusText(
  app: string,
  sourceCommit: string,
  output: AppOutput,
  notApplied: readonly string[] = [],
): string {
  const clusters: Record<string, JsonMap> = {};
  for (const object of output.objects) {
    const entry = clusters[object.cluster] ?? { objects: 0 };
    clusters[object.cluster] = {
      ...entry,
      objects: (entry.objects as number) + 1,
      ...(object.source ? { source: object.source } : {}),
    };
  }
  for (const workload of output.decisions) {
    const kept = new Map((workload.failover?.keeping ?? []).map((k) => [k.cluster, k.replicas]));
    const counts = { ...workload.decision.clusters };
    for (const [cluster, replicas] of kept) counts[cluster] = Math.max(replicas, counts[cluster] ?? 0);
    for (const [cluster, replicas] of Object.entries(counts)) {
      const entry = clusters[cluster] ?? { objects: 0 };
      const desired = { ...(entry.desiredReplicas as JsonMap | undefined), [workload.resource]: replicas };
      clusters[cluster] = { ...entry, desiredReplicas: desired };
    }
  }
  const services = serviceViews(output.objects);
  return emitYaml({
    app,
    sourceCommit,
    ...(notApplied.length > 0 ? { notApplied: [...notApplied] } : {}),
    clusters: sortedRecord(clusters),
    workloads: output.decisions.map(workloadRecord),
    // Exported services: where from, where imported, where traffic goes (networking.md).
    ...(services.length > 0
      ? { services: services.map(({ app: _, ...view }) => JSON.parse(JSON.stringify(view)) as Json) }
      : {}),
    errors: output.errors.map((e) => ({
      cluster: e.cluster,
      resource: e.resource,
      file: e.file,
      ...(e.rule === undefined ? {} : { rule: e.rule }),
      ...(e.code === undefined ? {} : { code: e.code }),
      message: e.message,
    })),
  });
}

/** status/clusters/<cluster>.yaml: the objects gitfleet renders for the cluster, per app. */
export function clusterStatusText(cluster: string, objects: readonly RenderedObject[]): string {
  const apps: Record<string, number> = {};
  for (const object of objects) apps[object.app] = (apps[object.app] ?? 0) + 1;
  return emitYaml({ cluster, objects: objects.length, apps: sortedRecord(apps) });
}

function sortedRecord<T extends Json>(record: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => compareStrings(a, b)));
}

// One workload's decision as status/apps/ records it; replicas that fit nowhere said in one line.
function workloadRecord(w: WorkloadDecision): Json {
  const shortfall = shortfallOf(w.replicas, w.decision);
  return {
    identity: w.identity,
    resource: w.resource,
    placement: w.placement,
    replicas: w.replicas,
    ...(shortfall
      ? { unplaced: shortfall.unplaced, shortfall: describeShortfall(w.resource, shortfall) }
      : {}),
    ...(w.autoscaledBy ? { autoscaledBy: w.autoscaledBy } : {}),
    ...(w.scaleDownBy ? { scaleDownBy: w.scaleDownBy } : {}),
    ...(w.capacityUnknown ? { capacityUnknown: [...w.capacityUnknown] } : {}),
    ...(w.suspended ? { suspended: w.suspended } : {}),
    ...(w.memberHpas ? { memberHpas: JSON.parse(JSON.stringify(w.memberHpas)) as Json } : {}),
    ...(w.ordinals ? { ordinals: { ...w.ordinals } } : {}),
    ...(w.state ? { state: JSON.parse(JSON.stringify(w.state)) as Json } : {}),
    // Through JSON, so optional fields that are absent stay absent. Each cluster's room is left out:
    // it moves with every capacity step, and the plan and the dashboard compute it where they show it.
    decision: JSON.parse(JSON.stringify(withoutRoom(w.decision))) as Json,
    ...(w.failover ? { failover: JSON.parse(JSON.stringify(w.failover)) as Json } : {}),
  };
}

function withoutRoom(decision: ScheduleDecision): ScheduleDecision {
  if (decision.diagnosis.room === undefined) return decision;
  const { room: _, ...diagnosis } = decision.diagnosis;
  return { ...decision, diagnosis };
}
