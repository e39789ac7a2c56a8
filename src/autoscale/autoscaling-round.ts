import { smallest } from "../model/extremes.js";
import type {
  Autoscaled,
  CronBounds,
  DistributedScaling,
  HeldDivision,
  ObservedReplicas,
} from "../model/observed-state.js";
import type { CronScale, CronScaleRule, FederatedHPA, FleetModel } from "../model/types.js";
import {
  type AutoscalerState,
  autoscalerKey,
  autoscaleStep,
  centralized,
  effectiveSpec,
  firstSight,
  type ScaleChange,
  type ScheduledWorkload,
  targetOf,
} from "./autoscale-step.js";
import { type CronScaleHistory, dueCronRule } from "./cron-scale.js";
import type { HpaSamples } from "./hpa-algorithm.js";
import { type ScaleDownRound, type ScaleDownStatus, scaleDowns } from "./scale-down.js";

// One round of everything that sets replica counts besides people: CronScale rules that are due
// (bounds of a FederatedHPA, or a workload's total), the centralized FederatedHPAs' totals, and the
// distributions distributed FederatedHPAs' member HPAs settled on. Pure: the status of the last
// round (kept on the status branch, status/autoscaling/) and what the members report go in; the
// render's inputs, the next status and the lines the status commit names come out.

/** A FederatedHPA between rounds: the centralized total, cron bounds, and (distributed) the members' replicas. */
export interface HpaStatus extends AutoscalerState {
  /** Distributed: per cluster, the replicas its member HPA keeps, as last recorded. */
  readonly distribution?: Readonly<Record<string, number>>;
  /** When `distribution` was recorded (ms). */
  readonly recordedAt?: number;
}

/** One execution of a CronScale rule. */
export interface CronRun {
  readonly rule: string;
  /** The schedule's time it ran for (ms). */
  readonly firedAt: number;
  /** When gitfleet applied it (ms): later than firedAt when the controller was down at the time. */
  readonly ranAt: number;
  readonly outcome: "applied" | "superseded";
  /** What it did: "total 4 → 10", "min 2 → 10, max 20 → 40", or the rule applied instead. */
  readonly result: string;
}

/** A CronScale between rounds: which rules ran when, and the total it last set on a workload. */
export interface CronStatus {
  readonly history: CronScaleHistory;
  readonly runs: readonly CronRun[];
  /** The targetReplicas of the last rule applied to a workload target (the render's total for it). */
  readonly replicas?: number;
  /** Which rule set `replicas`, and its schedule. */
  readonly reason?: string;
  /** The next time one of its rules fires (ms). */
  readonly nextAt?: number;
}

export interface AutoscalingStatus {
  /** By "namespace/name". */
  readonly hpas: ReadonlyMap<string, HpaStatus>;
  readonly crons: ReadonlyMap<string, CronStatus>;
  readonly scaleDowns: ReadonlyMap<string, ScaleDownStatus>;
}

export const EMPTY_AUTOSCALING: AutoscalingStatus = {
  hpas: new Map(),
  crons: new Map(),
  scaleDowns: new Map(),
};

export interface RoundInput {
  readonly model: FleetModel;
  /** The current render's workload decisions. */
  readonly decisions: readonly ScheduledWorkload[];
  /** Per workload identity, its pods' samples and metric values from every member (centralized FederatedHPAs). */
  readonly samples: ReadonlyMap<string, HpaSamples>;
  /** Per workload identity and cluster, what the members run (distributed FederatedHPAs read it back). */
  readonly members: ReadonlyMap<string, ReadonlyMap<string, ObservedReplicas>>;
  readonly previous: AutoscalingStatus;
  readonly now: number;
  /** The least time between two changes of one workload's total, or two recordings of a distribution (ms). */
  readonly intervalMs: number;
}

export interface RoundOutcome {
  readonly status: AutoscalingStatus;
  /** Per workload identity, the total to render in place of the source's. */
  readonly autoscaled: ReadonlyMap<string, Autoscaled>;
  /** Per workload identity a distributed FederatedHPA scales: what its member HPAs are split by. */
  readonly distributed: ReadonlyMap<string, DistributedScaling>;
  /** Per workload identity: the division a targeted scale-down holds. */
  readonly held: ReadonlyMap<string, HeldDivision>;
  /** Totals that changed this round (their lines are written once the render divided them). */
  readonly changes: readonly ScaleChange[];
  /** Lines for the status commit about everything else: cron rules run, distributions recorded. */
  readonly notes: readonly string[];
  /** The next time a round has something to do without new samples: a cron rule's next fire (ms). */
  readonly wakeAt?: number;
}

export function autoscalingRound(input: RoundInput): RoundOutcome {
  const hpas = new Map<string, HpaStatus>();
  for (const hpa of input.model.federatedHPAs) {
    const before = input.previous.hpas.get(autoscalerKey(hpa));
    if (before) hpas.set(autoscalerKey(hpa), before);
  }
  const crons = new Map<string, CronStatus>();
  const changes: ScaleChange[] = [];
  const notes: string[] = [];
  for (const cron of input.model.cronScales) {
    const ran = runCron(cron, hpas, input);
    crons.set(autoscalerKey(cron), ran.status);
    changes.push(...ran.changes);
    notes.push(...ran.notes);
  }
  const requests = runScaleDowns(input, hpas);
  changes.push(...requests.changes);
  notes.push(...requests.notes);
  const stepped = autoscaleStep({ ...input, states: hpas });
  for (const [key, state] of stepped.states) hpas.set(key, { ...hpas.get(key), ...state });
  changes.push(...stepped.changes);
  const autoscaled = totals(input.model, stepped.autoscaled, requests.totals, crons);
  const distributed = recordDistributions(input, hpas, notes);
  const wakeAt = smallest([...crons.values()].flatMap((c) => (c.nextAt === undefined ? [] : [c.nextAt])));
  return {
    status: { hpas, crons, scaleDowns: requests.statuses },
    autoscaled,
    distributed,
    held: requests.held,
    changes,
    notes,
    ...(wakeAt === undefined ? {} : { wakeAt }),
  };
}

// The totals the render takes: a FederatedHPA's, else a scale-down request's, else a CronScale's.
function totals(
  model: FleetModel,
  fromHpas: ReadonlyMap<string, Autoscaled>,
  fromRequests: ReadonlyMap<string, Autoscaled>,
  crons: ReadonlyMap<string, CronStatus>,
): Map<string, Autoscaled> {
  const autoscaled = new Map(fromHpas);
  for (const [identity, total] of fromRequests)
    if (!autoscaled.has(identity)) autoscaled.set(identity, total);
  for (const cron of model.cronScales) {
    const { replicas, reason } = crons.get(autoscalerKey(cron)) ?? {};
    const identity = workloadTarget(model, cron);
    if (replicas === undefined || !identity || autoscaled.has(identity)) continue;
    autoscaled.set(identity, {
      replicas,
      by: `cronscale/${cron.metadata.name}`,
      ...(reason ? { reason } : {}),
    });
  }
  return autoscaled;
}

// Targeted scale-downs; a centralized FederatedHPA that owns the count takes the new total.
function runScaleDowns(input: RoundInput, hpas: Map<string, HpaStatus>): ScaleDownRound {
  const owner = (identity: string) => {
    const decision = input.decisions.find((d) => d.identity === identity);
    const hpa = input.model.federatedHPAs.find(
      (h) => targetOf(input.model, h) === identity && centralized(h, decision),
    );
    return hpa && { hpa, decision };
  };
  return scaleDowns({
    model: input.model,
    decisions: input.decisions,
    previous: input.previous.scaleDowns,
    now: input.now,
    ownedTotal: (identity) => {
      const found = owner(identity);
      return found && (hpas.get(autoscalerKey(found.hpa))?.replicas ?? found.decision?.replicas);
    },
    setTotal: (identity, replicas, reason) => {
      const found = owner(identity);
      if (!found) return;
      const key = autoscalerKey(found.hpa);
      hpas.set(key, {
        ...(hpas.get(key) ?? { history: firstSight(replicas, input.now) }),
        replicas,
        changedAt: input.now,
        reason,
      });
    },
  });
}

// The identity of a CronScale's workload target (undefined when it targets a FederatedHPA).
function workloadTarget(model: FleetModel, cron: CronScale): string | undefined {
  return cron.spec.scaleTargetRef.kind === "FederatedHPA" ? undefined : targetOf(model, cron);
}

function hpaNamed(model: FleetModel, cron: CronScale): FederatedHPA | undefined {
  const name = cron.spec.scaleTargetRef.name;
  const namespace = cron.metadata.namespace;
  return model.federatedHPAs.find(
    (h) => h.metadata.name === name && (namespace === undefined || h.metadata.namespace === namespace),
  );
}

// Runs the rule that is due, if any: new bounds for a FederatedHPA (its total clamped into them at
// once), or a new total for a workload (the centralized FederatedHPA's, when one scales it).
function runCron(
  cron: CronScale,
  hpas: Map<string, HpaStatus>,
  input: RoundInput,
): { status: CronStatus; changes: ScaleChange[]; notes: string[] } {
  const before = input.previous.crons.get(autoscalerKey(cron));
  const step = dueCronRule(cron, before?.history, input.now);
  const base: CronStatus = {
    history: step.history,
    runs: before?.runs ?? [],
    ...(before?.replicas !== undefined ? { replicas: before.replicas } : {}),
    ...(before?.reason !== undefined ? { reason: before.reason } : {}),
    ...(step.nextAt !== undefined ? { nextAt: step.nextAt } : {}),
  };
  const followed = before ? [] : [`cronscale ${cron.metadata.name}: followed from now on`];
  if (!step.apply) return { status: base, changes: [], notes: followed };
  const { rule, firedAt } = step.apply;
  const name = `${cron.metadata.name}/${rule.name}`;
  const applied = applyRule(cron, rule, name, hpas, input);
  const superseded: CronRun[] = step.history.rules
    .filter(
      (r) => r.outcome === "superseded" && r.by === rule.name && r.firedAt >= (before?.history.since ?? 0),
    )
    .filter((r) => !before?.history.rules.some((b) => b.rule === r.rule && b.firedAt === r.firedAt))
    .map((r) => ({ ...r, ranAt: input.now, outcome: "superseded", result: `superseded by ${rule.name}` }));
  const run: CronRun = {
    rule: rule.name,
    firedAt,
    ranAt: input.now,
    outcome: "applied",
    result: applied.result,
  };
  const late = input.now - firedAt > 60_000 ? " (missed while gitfleet was down; the latest due rule)" : "";
  return {
    status: {
      ...base,
      runs: keepRuns([...base.runs, ...superseded, run], cron.spec.rules),
      ...(applied.replicas !== undefined
        ? { replicas: applied.replicas, reason: applied.change?.reason ?? name }
        : {}),
    },
    changes: applied.change ? [applied.change] : [],
    notes: [...followed, `cronscale ${name}: ${applied.result}${late}`],
  };
}

function applyRule(
  cron: CronScale,
  rule: CronScaleRule,
  name: string,
  hpas: Map<string, HpaStatus>,
  input: RoundInput,
): { result: string; replicas?: number; change?: ScaleChange } {
  if (cron.spec.scaleTargetRef.kind === "FederatedHPA") {
    const hpa = hpaNamed(input.model, cron);
    if (!hpa) return { result: `no FederatedHPA ${cron.spec.scaleTargetRef.name}` };
    return setBounds(hpa, rule, name, hpas, input);
  }
  const identity = workloadTarget(input.model, cron) ?? "";
  const target = rule.targetReplicas ?? 0;
  const decision = input.decisions.find((d) => d.identity === identity);
  const hpa = input.model.federatedHPAs.find(
    (h) => targetOf(input.model, h) === identity && centralized(h, decision),
  );
  const state = hpa ? hpas.get(autoscalerKey(hpa)) : undefined;
  const from = state?.replicas ?? decision?.replicas ?? 0;
  const reason = `rule ${rule.name}, ${rule.schedule} ${rule.timeZone ?? "UTC"}`;
  if (hpa) {
    // The FederatedHPA takes the new total as its current one and scales on from it.
    hpas.set(autoscalerKey(hpa), {
      ...(state ?? { history: firstSight(target, input.now) }),
      replicas: target,
      changedAt: input.now,
      reason,
    });
    return {
      result: `total ${from} → ${target}`,
      change: {
        autoscaler: hpa.metadata.name,
        workload: decision?.resource ?? identity,
        from,
        to: target,
        reason,
      },
    };
  }
  return {
    result: `total ${from} → ${target}`,
    replicas: target,
    change: {
      autoscaler: `cronscale/${cron.metadata.name}`,
      workload: decision?.resource ?? identity,
      from,
      to: target,
      reason,
    },
  };
}

// New bounds for a FederatedHPA; a centralized total outside them moves inside at once.
function setBounds(
  hpa: FederatedHPA,
  rule: CronScaleRule,
  name: string,
  hpas: Map<string, HpaStatus>,
  input: RoundInput,
): { result: string; change?: ScaleChange } {
  const key = autoscalerKey(hpa);
  const state = hpas.get(key);
  const old = effectiveSpec(hpa, state?.bounds);
  const bounds: CronBounds = {
    minReplicas: rule.targetMinReplicas ?? old.minReplicas ?? 1,
    maxReplicas: rule.targetMaxReplicas ?? old.maxReplicas,
    by: name,
  };
  const result = `FederatedHPA ${hpa.metadata.name} min ${old.minReplicas ?? 1} → ${bounds.minReplicas}, max ${old.maxReplicas} → ${bounds.maxReplicas}`;
  const decision = input.decisions.find((d) => d.identity === targetOf(input.model, hpa));
  const next: HpaStatus = {
    ...(state ?? {
      history: firstSight(decision?.replicas ?? 0, input.now),
      replicas: decision?.replicas ?? 0,
    }),
    bounds,
  };
  if (!centralized(hpa, decision) || !decision) {
    hpas.set(key, next);
    return { result };
  }
  const from = next.replicas;
  const to = Math.min(bounds.maxReplicas ?? from, Math.max(bounds.minReplicas ?? from, from));
  if (to === from) {
    hpas.set(key, next);
    return { result };
  }
  const reason = `cronscale ${name}: ${to > from ? `min ${bounds.minReplicas}` : `max ${bounds.maxReplicas}`}`;
  hpas.set(key, { ...next, replicas: to, changedAt: input.now, reason });
  return {
    result,
    change: { autoscaler: hpa.metadata.name, workload: decision.resource, from, to, reason },
  };
}

// The newest runs of each rule within its history limits (3 by default).
function keepRuns(runs: readonly CronRun[], rules: readonly CronScaleRule[]): CronRun[] {
  const limits = new Map(rules.map((r) => [r.name, r]));
  const kept: CronRun[] = [];
  const counts = new Map<string, number>();
  for (const run of [...runs].sort((a, b) => b.ranAt - a.ranAt || b.firedAt - a.firedAt)) {
    const rule = limits.get(run.rule);
    if (!rule) continue;
    const limit =
      run.outcome === "applied" ? (rule.successfulHistoryLimit ?? 3) : (rule.failedHistoryLimit ?? 3);
    const key = `${run.rule} ${run.outcome}`;
    const count = counts.get(key) ?? 0;
    if (count >= limit) continue;
    counts.set(key, count + 1);
    kept.push(run);
  }
  return kept.reverse();
}

// Distributed FederatedHPAs: what the members' HPAs settled on is recorded as the distribution the
// bounds are split by — once every cluster the workload runs in reported, and at most once per interval.
function recordDistributions(
  input: RoundInput,
  hpas: Map<string, HpaStatus>,
  notes: string[],
): Map<string, DistributedScaling> {
  const distributed = new Map<string, DistributedScaling>();
  for (const hpa of input.model.federatedHPAs) {
    const identity = targetOf(input.model, hpa);
    const decision = input.decisions.find((d) => d.identity === identity);
    if (!decision || centralized(hpa, decision)) continue;
    const key = autoscalerKey(hpa);
    let state = hpas.get(key);
    const seen = observedDistribution(decision, input.members.get(identity));
    const settled = state?.recordedAt !== undefined && input.now - state.recordedAt < input.intervalMs;
    if (seen && !settled && !sameCounts(seen, state?.distribution)) {
      const old = state?.distribution ?? decision.memberHpas?.clusters;
      notes.push(`${hpa.metadata.name}: member HPAs run ${describeCounts(old, seen)}; bounds split again`);
      state = {
        ...(state ?? { history: firstSight(decision.replicas, input.now), replicas: decision.replicas }),
        distribution: seen,
        recordedAt: input.now,
      };
      hpas.set(key, state);
    }
    distributed.set(identity, state ? scalingOf(state) : {});
  }
  return distributed;
}

// The members' replicas in every cluster the workload is placed in, or undefined until all reported.
function observedDistribution(
  decision: ScheduledWorkload,
  members: ReadonlyMap<string, ObservedReplicas> | undefined,
): Record<string, number> | undefined {
  const placed = Object.entries(decision.decision.clusters)
    .filter(([, count]) => count > 0)
    .map(([cluster]) => cluster)
    .sort();
  if (placed.length === 0 || !members) return undefined;
  const counts: Record<string, number> = {};
  for (const cluster of placed) {
    const seen = members.get(cluster);
    if (!seen) return undefined;
    counts[cluster] = seen.desired;
  }
  return counts;
}

function sameCounts(
  a: Readonly<Record<string, number>>,
  b: Readonly<Record<string, number>> | undefined,
): boolean {
  return (
    b !== undefined && JSON.stringify(a) === JSON.stringify(Object.fromEntries(Object.entries(b).sort()))
  );
}

function describeCounts(
  before: Readonly<Record<string, number | { readonly replicas: number }>> | undefined,
  after: Readonly<Record<string, number>>,
): string {
  return Object.entries(after)
    .map(([cluster, count]) => {
      const old = before?.[cluster];
      const was = typeof old === "number" ? old : old?.replicas;
      return was === undefined || was === count ? `${cluster}=${count}` : `${cluster}=${was}→${count}`;
    })
    .join(" ");
}

/**
 * What the autoscalers' recorded status feeds the render, without running anything: the totals
 * FederatedHPAs, CronScales and scale-down requests set, the distributions member HPAs settled on,
 * and the divisions done scale-down requests hold — so that a plan renders a change on top of what
 * the clusters really run. Pure.
 */
export function standingScaling(
  model: FleetModel,
  decisions: readonly ScheduledWorkload[],
  status: AutoscalingStatus,
): Pick<RoundOutcome, "autoscaled" | "distributed" | "held"> {
  const fromHpas = new Map<string, Autoscaled>();
  const distributed = new Map<string, DistributedScaling>();
  for (const hpa of model.federatedHPAs) {
    const state = status.hpas.get(autoscalerKey(hpa));
    const identity = targetOf(model, hpa);
    const decision = decisions.find((d) => d.identity === identity);
    if (!state) continue;
    if (centralized(hpa, decision)) fromHpas.set(identity, totalOf(hpa, state));
    else distributed.set(identity, scalingOf(state));
  }
  const fromRequests = new Map<string, Autoscaled>();
  for (const request of model.scaleDownRequests) {
    const done = status.scaleDowns.get(autoscalerKey(request));
    if (done?.state === "Done" && done.total !== undefined)
      fromRequests.set(targetOf(model, request), {
        replicas: done.total,
        by: `scaledown/${request.metadata.name}`,
      });
  }
  const autoscaled = totals(model, fromHpas, fromRequests, status.crons);
  // Requests recorded as run are not run again here: only the divisions they hold are taken.
  const { held } = scaleDowns({
    model,
    decisions,
    previous: status.scaleDowns,
    now: 0,
    ownedTotal: (identity) => autoscaled.get(identity)?.replicas,
    setTotal: () => undefined,
  });
  return { autoscaled, distributed, held };
}

function totalOf(hpa: FederatedHPA, state: HpaStatus): Autoscaled {
  return {
    replicas: state.replicas,
    by: hpa.metadata.name,
    ...(state.reason ? { reason: state.reason } : {}),
  };
}

// What a distributed FederatedHPA's member HPAs are split by: the recorded distribution, cron bounds.
function scalingOf(state: HpaStatus): DistributedScaling {
  return {
    ...(state.distribution ? { distribution: state.distribution } : {}),
    ...(state.bounds ? { bounds: state.bounds } : {}),
  };
}
