import { asList, asMap, isJsonMap, type JsonMap } from "../apimachinery/json.js";
import { autoscalerKey, targetOf } from "../autoscale/autoscale-step.js";
import type { AutoscalingStatus, CronRun, CronStatus, HpaStatus } from "../autoscale/autoscaling-round.js";
import type { RuleRecord } from "../autoscale/cron-scale.js";
import type { ScaleDownStatus } from "../autoscale/scale-down.js";
import type { FleetModel } from "../model/types.js";
import { emitYaml } from "../render/yaml-emitter.js";
import { readEmittedYaml } from "../render/yaml-reader.js";

// status/autoscaling/: what each FederatedHPA and CronScale decided last, so that a restarted
// controller continues where it stopped — the total, a cron rule's bounds, the distribution member
// HPAs settled on, the scale events rate policies count, and every rule's last run (a rule missed
// while the controller was down runs once at start). A file changes only when a decision does:
// recommendations kept for the scale-down stabilization window stay in memory, and of the scale
// events only the last is kept.

export { AUTOSCALING_DIRECTORY } from "./layout.js";

import { largest } from "../model/extremes.js";
import { AUTOSCALING_DIRECTORY } from "./layout.js";

const fileName = (key: string) => (key.startsWith("/") ? key.slice(1) : key.replace("/", "."));

/** status/autoscaling/hpa/<namespace.>name.yaml */
export function hpaStatusPath(key: string): string {
  return `${AUTOSCALING_DIRECTORY}hpa/${fileName(key)}.yaml`;
}

/** status/autoscaling/scaledown/<namespace.>name.yaml */
export function scaleDownStatusPath(key: string): string {
  return `${AUTOSCALING_DIRECTORY}scaledown/${fileName(key)}.yaml`;
}

/** status/autoscaling/cron/<namespace.>name.yaml */
export function cronStatusPath(key: string): string {
  return `${AUTOSCALING_DIRECTORY}cron/${fileName(key)}.yaml`;
}

const iso = (ms: number) => new Date(ms).toISOString();
const ms = (value: unknown) => (typeof value === "string" ? Date.parse(value) : Number.NaN);

/** Every status file of the autoscalers in the model; files of autoscalers gone are null. */
export function autoscalingFiles(
  model: FleetModel,
  status: AutoscalingStatus,
  existing: Iterable<string>,
): Map<string, string | null> {
  const files = new Map<string, string | null>();
  for (const hpa of model.federatedHPAs) {
    const state = status.hpas.get(autoscalerKey(hpa));
    if (!state) continue;
    files.set(
      hpaStatusPath(autoscalerKey(hpa)),
      emitYaml({ federatedHPA: hpa.metadata.name, target: targetOf(model, hpa), ...hpaFields(state) }),
    );
  }
  for (const cron of model.cronScales) {
    const state = status.crons.get(autoscalerKey(cron));
    if (!state) continue;
    const { kind, name } = cron.spec.scaleTargetRef;
    files.set(
      cronStatusPath(autoscalerKey(cron)),
      emitYaml({ cronScale: cron.metadata.name, target: `${kind} ${name}`, ...cronFields(state) }),
    );
  }
  for (const request of model.scaleDownRequests) {
    const state = status.scaleDowns.get(autoscalerKey(request));
    if (!state) continue;
    files.set(
      scaleDownStatusPath(autoscalerKey(request)),
      emitYaml({
        scaleDownRequest: request.metadata.name,
        target: targetOf(model, request),
        ...(JSON.parse(JSON.stringify({ ...state, at: iso(state.at) })) as JsonMap),
      }),
    );
  }
  for (const path of existing)
    if (path.startsWith(AUTOSCALING_DIRECTORY) && !files.has(path)) files.set(path, null);
  return files;
}

function hpaFields(state: HpaStatus): JsonMap {
  return JSON.parse(
    JSON.stringify({
      replicas: state.replicas,
      ...(state.changedAt !== undefined ? { changedAt: iso(state.changedAt) } : {}),
      reason: state.reason,
      bounds: state.bounds,
      distribution: state.distribution,
      ...(state.recordedAt !== undefined ? { recordedAt: iso(state.recordedAt) } : {}),
      // The last scale event: what rate policies count after a restart (the file changes with decisions only).
      ...(state.lastEvent
        ? { lastEvent: { at: iso(state.lastEvent.at), change: state.lastEvent.change } }
        : {}),
    }),
  ) as JsonMap;
}

function cronFields(state: CronStatus): JsonMap {
  return JSON.parse(
    JSON.stringify({
      since: iso(state.history.since),
      ...(state.nextAt !== undefined ? { nextRun: iso(state.nextAt) } : {}),
      replicas: state.replicas,
      reason: state.reason,
      rules: state.history.rules.map((r) => ({
        rule: r.rule,
        lastFired: iso(r.firedAt),
        outcome: r.outcome,
        by: r.by,
      })),
      runs: state.runs.map((r) => ({
        rule: r.rule,
        firedAt: iso(r.firedAt),
        ranAt: iso(r.ranAt),
        outcome: r.outcome,
        result: r.result,
      })),
    }),
  ) as JsonMap;
}

/**
 * The autoscalers' status as the branch's files hold it. The stabilization window's recommendations
 * are not kept: a restarted autoscaler counts its current total as recommended at `now`, so it
 * scales down no sooner than a full window after the restart. Unreadable files count as absent.
 * Every count read is an observation bounded by what the reviewed source allows: totals within
 * [0, the highest maxReplicas or cron target in the fleet], distributions over the fleet's
 * clusters only — so whoever can write the branch cannot scale anything past what was reviewed.
 */
export function readAutoscalingStatus(
  model: FleetModel,
  files: ReadonlyMap<string, string>,
  now: number,
): AutoscalingStatus {
  const bound = countBound(model);
  const hpas = new Map<string, HpaStatus>();
  const crons = new Map<string, CronStatus>();
  for (const hpa of model.federatedHPAs) {
    const value = parse(files.get(hpaStatusPath(autoscalerKey(hpa))));
    const state = value && readHpa(bound(value), now);
    if (state) hpas.set(autoscalerKey(hpa), state);
  }
  for (const cron of model.cronScales) {
    const value = parse(files.get(cronStatusPath(autoscalerKey(cron))));
    const state = value && readCron(bound(value));
    if (state) crons.set(autoscalerKey(cron), state);
  }
  const scaleDowns = new Map<string, ScaleDownStatus>();
  for (const request of model.scaleDownRequests) {
    const value = parse(files.get(scaleDownStatusPath(autoscalerKey(request))));
    const state = value && readScaleDown(bound(value));
    if (state) scaleDowns.set(autoscalerKey(request), state);
  }
  return { hpas, crons, scaleDowns };
}

// Bounds a status file's counts: totals and bounds to whole numbers within the fleet's ceiling,
// distributions and per-cluster counts to the fleet's clusters.
function countBound(model: FleetModel): (value: JsonMap) => JsonMap {
  const bounds = new CountBounds(model);
  return (value) => bounds.apply(value);
}

class CountBounds {
  private readonly ceiling: number;
  private readonly clusters: ReadonlySet<string>;

  constructor(model: FleetModel) {
    this.ceiling = largest(
      [
        ...model.federatedHPAs.map((h) => h.spec.maxReplicas),
        ...model.cronScales.flatMap((c) =>
          c.spec.rules.flatMap((r) => [r.targetReplicas ?? 0, r.targetMaxReplicas ?? 0]),
        ),
        ...model.apps.flatMap((a) => a.resources.map((r) => Number(asMap(r.object.spec).replicas) || 0)),
      ],
      1,
    );
    this.clusters = new Set(model.clusters.map((c) => c.metadata.name));
  }

  apply(value: JsonMap): JsonMap {
    const bounded: JsonMap = { ...value };
    for (const key of ["replicas", "total", "from", "sourceReplicas"]) {
      if (value[key] === undefined) continue;
      const n = this.count(value[key]);
      if (n === undefined) delete bounded[key];
      else bounded[key] = n;
    }
    for (const key of ["distribution", "clusters"])
      if (value[key] !== undefined) bounded[key] = this.perCluster(value[key]);
    if (isJsonMap(value.bounds)) bounded.bounds = this.bounds(value.bounds);
    return bounded;
  }

  private bounds(bounds: JsonMap): JsonMap {
    const min = this.count(bounds.minReplicas);
    const max = this.count(bounds.maxReplicas);
    return {
      ...bounds,
      ...(min === undefined ? {} : { minReplicas: min }),
      ...(max === undefined ? {} : { maxReplicas: max }),
    };
  }

  private count(n: unknown): number | undefined {
    if (typeof n !== "number" || !Number.isFinite(n)) return undefined;
    return Math.min(Math.max(Math.round(n), 0), this.ceiling);
  }

  private perCluster(map: unknown): JsonMap {
    const out: JsonMap = {};
    if (!isJsonMap(map)) return out;
    for (const [cluster, n] of Object.entries(map)) {
      const count = this.count(n);
      if (this.clusters.has(cluster) && count !== undefined) out[cluster] = count;
    }
    return out;
  }
}
function parse(text: string | undefined): JsonMap | undefined {
  if (text === undefined) return undefined;
  try {
    const value = readEmittedYaml(text);
    return isJsonMap(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

function readHpa(value: JsonMap, now: number): HpaStatus | undefined {
  if (typeof value.replicas !== "number") return undefined;
  const bounds = asMap(value.bounds);
  const changedAt = ms(value.changedAt);
  const recordedAt = ms(value.recordedAt);
  const event = asMap(value.lastEvent);
  const lastEvent =
    Number.isFinite(ms(event.at)) && typeof event.change === "number"
      ? { at: ms(event.at), change: event.change }
      : undefined;
  const distribution = isJsonMap(value.distribution)
    ? Object.fromEntries(Object.entries(value.distribution).map(([c, n]) => [c, Number(n)]))
    : undefined;
  return {
    replicas: value.replicas,
    history: {
      recommendations: [{ at: now, replicas: value.replicas }],
      events: lastEvent ? [lastEvent] : [],
    },
    ...(lastEvent ? { lastEvent } : {}),
    ...(Number.isFinite(changedAt) ? { changedAt } : {}),
    ...(typeof value.reason === "string" ? { reason: value.reason } : {}),
    ...(typeof bounds.by === "string"
      ? {
          bounds: {
            by: bounds.by,
            ...(typeof bounds.minReplicas === "number" ? { minReplicas: bounds.minReplicas } : {}),
            ...(typeof bounds.maxReplicas === "number" ? { maxReplicas: bounds.maxReplicas } : {}),
          },
        }
      : {}),
    ...(distribution ? { distribution } : {}),
    ...(Number.isFinite(recordedAt) ? { recordedAt } : {}),
  };
}

function readCron(value: JsonMap): CronStatus | undefined {
  const since = ms(value.since);
  if (!Number.isFinite(since)) return undefined;
  const rules: RuleRecord[] = asList(value.rules).flatMap((entry) => {
    const r = asMap(entry);
    const firedAt = ms(r.lastFired);
    if (typeof r.rule !== "string" || !Number.isFinite(firedAt)) return [];
    const outcome = r.outcome === "superseded" ? "superseded" : "applied";
    return [{ rule: r.rule, firedAt, outcome, ...(typeof r.by === "string" ? { by: r.by } : {}) }];
  });
  const runs: CronRun[] = asList(value.runs).flatMap((entry) => {
    const r = asMap(entry);
    const firedAt = ms(r.firedAt);
    const ranAt = ms(r.ranAt);
    if (typeof r.rule !== "string" || !Number.isFinite(firedAt) || !Number.isFinite(ranAt)) return [];
    return [
      {
        rule: r.rule,
        firedAt,
        ranAt,
        outcome: r.outcome === "superseded" ? "superseded" : "applied",
        result: String(r.result ?? ""),
      },
    ];
  });
  const nextAt = ms(value.nextRun);
  return {
    history: { since, rules },
    runs,
    ...(typeof value.replicas === "number" ? { replicas: value.replicas } : {}),
    ...(typeof value.reason === "string" ? { reason: value.reason } : {}),
    ...(Number.isFinite(nextAt) ? { nextAt } : {}),
  };
}

function readScaleDown(value: JsonMap): ScaleDownStatus | undefined {
  const at = ms(value.at);
  const state = value.state === "Done" || value.state === "Refused" ? value.state : undefined;
  if (!state || typeof value.cluster !== "string" || !Number.isFinite(at)) return undefined;
  const number = (key: string) => (typeof value[key] === "number" ? { [key]: value[key] as number } : {});
  return {
    state,
    cluster: value.cluster,
    pods: asList(value.pods).map(String),
    at,
    ...(typeof value.reason === "string" ? { reason: value.reason } : {}),
    ...number("from"),
    ...number("total"),
    ...number("sourceReplicas"),
    ...(isJsonMap(value.clusters)
      ? { clusters: Object.fromEntries(Object.entries(value.clusters).map(([c, n]) => [c, Number(n)])) }
      : {}),
  };
}
