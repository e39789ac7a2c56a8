import { parseQuantity } from "../apimachinery/quantity.js";
import type { FederatedHPASpec, MetricSpec, MetricTarget, ScalingRules } from "../model/types.js";

// The horizontal pod autoscaler's algorithm, as the Kubernetes HPA controller (autoscaling/v2)
// computes it, over pods from every member cluster: per metric a usage ratio against the target,
// a 10% tolerance, missing and not-ready pods counted conservatively, the largest proposal of all
// metrics; then the behavior — stabilization windows over past recommendations, and rate policies
// over past scale events — and the min/max bounds of the global total. Pure: the recommendations
// and events it needs from earlier rounds are an input, and the updated ones an output, so they can
// be kept in the status branch and a restarted controller decides the same.

/** One pod's sample for one resource metric. */
export interface PodSample {
  readonly cluster: string;
  readonly pod: string;
  /** The pod counts toward the current replicas but is not Ready (or just started). */
  readonly ready: boolean;
  /** Usage in the resource's base unit (cores for cpu, bytes for memory); undefined: no metric for it. */
  readonly usage: number | undefined;
  /** The pod's request for the resource (same unit); needed for Utilization targets. */
  readonly request: number;
}

/** What the HPA saw at one round. */
export interface HpaObservation {
  /** The workload's current replicas (the global total). */
  readonly currentReplicas: number;
  /** Per resource name (cpu, memory) and per Pods metric (metricKey): every pod's sample. */
  readonly samples: Readonly<Record<string, readonly PodSample[]>>;
  /** Per Object and External metric (metricKey): its value summed over the clusters the workload runs in. */
  readonly values?: Readonly<Record<string, number>>;
  /** The workload's Ready pods over every cluster (what a Value target multiplies its ratio by). */
  readonly readyPods?: number;
}

/** What the members gave for one workload at one round: everything of an observation but the current total. */
export type HpaSamples = Omit<HpaObservation, "currentReplicas">;

/** Where a metric's samples or value are kept in an observation: the resource's name, or "<type>/…". */
export function metricKey(metric: MetricSpec): string {
  switch (metric.type) {
    case "Resource":
      return metric.resource.name;
    case "Pods":
      return `pods/${metric.pods.metric.name}`;
    case "Object": {
      const { describedObject, metric: m } = metric.object;
      return `object/${describedObject.kind}/${describedObject.name}/${m.name}`;
    }
    default:
      return `external/${metric.external.metric.name}`;
  }
}

/** Past recommendations (for stabilization) and scale events (for rate policies). */
export interface HpaHistory {
  readonly recommendations: readonly { readonly at: number; readonly replicas: number }[];
  readonly events: readonly { readonly at: number; readonly change: number }[];
}

export const EMPTY_HISTORY: HpaHistory = { recommendations: [], events: [] };

export interface HpaDecision {
  readonly desiredReplicas: number;
  /** What the metrics alone asked for (before behavior and bounds). */
  readonly metricReplicas: number;
  /** e.g. "cpu 91% > 65%" — the metric that decided, with its current and target values. */
  readonly reason: string;
  /** What held it back, if anything: "ScaleUpLimit", "ScaleDownStabilized", "TooFewReplicas", … */
  readonly limitedBy?: string;
  readonly history: HpaHistory;
}

/** The tolerance below which a usage ratio changes nothing (the controller's default, 0.1). */
export const TOLERANCE = 0.1;

const DEFAULT_SCALE_UP: Required<ScalingRules> = {
  stabilizationWindowSeconds: 0,
  selectPolicy: "Max",
  policies: [
    { type: "Pods", value: 4, periodSeconds: 15 },
    { type: "Percent", value: 100, periodSeconds: 15 },
  ],
};
const DEFAULT_SCALE_DOWN: Required<ScalingRules> = {
  stabilizationWindowSeconds: 300,
  selectPolicy: "Max",
  policies: [{ type: "Percent", value: 100, periodSeconds: 15 }],
};

/** One round of the autoscaler. `now` in milliseconds. */
export function decideReplicas(
  spec: FederatedHPASpec,
  observation: HpaObservation,
  history: HpaHistory,
  now: number,
): HpaDecision {
  const min = spec.minReplicas ?? 1;
  const max = spec.maxReplicas;
  const current = observation.currentReplicas;
  const up = rules(spec.behavior?.scaleUp, DEFAULT_SCALE_UP);
  const down = rules(spec.behavior?.scaleDown, DEFAULT_SCALE_DOWN);
  const kept = prune(history, now, up, down);
  const bounded = outOfBounds(current, min, max, kept, now);
  if (bounded) return bounded;
  const proposal = metricProposal(spec, observation);
  const stabilized = stabilize(proposal.replicas, current, kept, now, up, down);
  const recorded: HpaHistory = {
    ...kept,
    recommendations: [...kept.recommendations, { at: now, replicas: proposal.replicas }],
  };
  const limited = rateLimit(stabilized.replicas, current, recorded, now, { min, max, up, down });
  return withEvent(
    {
      desiredReplicas: limited.replicas,
      metricReplicas: proposal.replicas,
      reason: proposal.reason,
      ...((limited.limitedBy ?? stabilized.limitedBy)
        ? { limitedBy: limited.limitedBy ?? stabilized.limitedBy }
        : {}),
      history: recorded,
    },
    current,
    now,
  );
}

// Scaled to zero by a person (autoscaling off), or outside min/max: no metric is looked at.
function outOfBounds(
  current: number,
  min: number,
  max: number,
  history: HpaHistory,
  now: number,
): HpaDecision | undefined {
  const at = (desiredReplicas: number, reason: string, limitedBy: string): HpaDecision =>
    withEvent({ desiredReplicas, metricReplicas: desiredReplicas, reason, limitedBy, history }, current, now);
  if (current === 0 && min !== 0) return at(0, "scaled to zero", "ScalingDisabled");
  if (current > max) return at(max, `above maxReplicas ${max}`, "TooManyReplicas");
  if (current < min) return at(min, `below minReplicas ${min}`, "TooFewReplicas");
  return undefined;
}

function rules(given: ScalingRules | undefined, defaults: Required<ScalingRules>): Required<ScalingRules> {
  return {
    stabilizationWindowSeconds: given?.stabilizationWindowSeconds ?? defaults.stabilizationWindowSeconds,
    selectPolicy: given?.selectPolicy ?? defaults.selectPolicy,
    policies: given?.policies && given.policies.length > 0 ? given.policies : defaults.policies,
  };
}

// The largest proposal over every metric (the controller scales to satisfy all of them).
function metricProposal(
  spec: FederatedHPASpec,
  observation: HpaObservation,
): { replicas: number; reason: string } {
  const metrics: readonly MetricSpec[] = spec.metrics ?? [
    {
      type: "Resource" as const,
      resource: { name: "cpu", target: { type: "Utilization" as const, averageUtilization: 80 } },
    },
  ];
  let best: { replicas: number; reason: string } | undefined;
  for (const metric of metrics) {
    const proposal = proposalFor(metric, observation);
    if (proposal && (!best || proposal.replicas > best.replicas)) best = proposal;
  }
  return best ?? { replicas: observation.currentReplicas, reason: "no metrics: replicas kept" };
}

// One metric's proposal; undefined when it has no sample or value this round (it does not vote).
function proposalFor(
  metric: MetricSpec,
  observation: HpaObservation,
): { replicas: number; reason: string } | undefined {
  const key = metricKey(metric);
  const current = observation.currentReplicas;
  switch (metric.type) {
    case "Resource": {
      const samples = observation.samples[key] ?? [];
      // Readiness matters for cpu only, as in the controller: other resources count every pod with a metric.
      const counted = key === "cpu" ? samples : samples.map((s) => ({ ...s, ready: true }));
      return resourceReplicas(key, metric.resource.target, counted, current);
    }
    case "Pods": {
      const samples = (observation.samples[key] ?? []).map((s) => ({ ...s, ready: true }));
      return resourceReplicas(metric.pods.metric.name, metric.pods.target, samples, current);
    }
    case "Object":
      return valueReplicas(metric.object.metric.name, metric.object.target, observation, key);
    default:
      return valueReplicas(metric.external.metric.name, metric.external.target, observation, key);
  }
}

/**
 * An Object or External metric, as the controller's GetObjectMetricReplicas and
 * GetExternalMetricReplicas: a Value target scales the ready pods by the ratio of the value to the
 * target; an AverageValue target divides the value by the per-pod target. Within the tolerance,
 * nothing changes.
 */
function valueReplicas(
  name: string,
  target: MetricTarget,
  observation: HpaObservation,
  key: string,
): { replicas: number; reason: string } | undefined {
  const value = observation.values?.[key];
  const current = observation.currentReplicas;
  const perPod = target.type === "AverageValue";
  const goal = parseQuantity((perPod ? target.averageValue : target.value) ?? "0") ?? 0;
  if (value === undefined || goal <= 0) return undefined;
  const pods = Math.max(current, 1);
  const ratio = perPod ? value / (goal * pods) : value / goal;
  const shown = perPod
    ? `${name} ${formatValue(value / pods)}/pod ${compare(ratio)} ${formatValue(goal)}/pod`
    : `${name} ${formatValue(value)} ${compare(ratio)} ${formatValue(goal)}`;
  if (current === 0) return { replicas: Math.ceil(perPod ? value / goal : ratio), reason: shown };
  if (Math.abs(1 - ratio) <= TOLERANCE) return { replicas: current, reason: `${shown} (within tolerance)` };
  const replicas = perPod ? Math.ceil(value / goal) : Math.ceil(ratio * (observation.readyPods ?? current));
  return { replicas, reason: shown };
}

function compare(ratio: number): string {
  return ratio > 1 ? ">" : ratio < 1 ? "<" : "=";
}

type Target = MetricTarget;

/**
 * One resource metric, as the controller's GetResourceReplicas: the ratio of the ready pods' usage
 * to the target; pods without a metric count as using the target (scale down) or nothing (scale
 * up), not-ready pods as nothing (scale up only); within the tolerance, or if counting them flips
 * the direction, nothing changes.
 */
function resourceReplicas(
  name: string,
  target: Target,
  samples: readonly PodSample[],
  current: number,
): { replicas: number; reason: string } | undefined {
  const metric = metricOf(target);
  if (!metric) return undefined;
  const measured = samples.filter((s) => s.ready && s.usage !== undefined);
  if (measured.length === 0) return undefined;
  const missing = samples.filter((s) => s.ready && s.usage === undefined);
  const unready = samples.filter((s) => !s.ready);
  const currentValue = metric.value(measured, []);
  const ratio = currentValue / metric.goal;
  const shown = `${name} ${metric.show(currentValue)} ${ratio > 1 ? ">" : ratio < 1 ? "<" : "="} ${metric.show(metric.goal)}`;
  const scaleUp = ratio > 1;
  const others = [...missing, ...(scaleUp ? unready : [])];
  if (others.length === 0)
    return Math.abs(1 - ratio) <= TOLERANCE
      ? { replicas: current, reason: `${shown} (within tolerance)` }
      : { replicas: Math.ceil(ratio * measured.length), reason: shown };
  // Count the pods without a usable metric: as using the target when scaling down, nothing when up.
  const assumed = others.map((s) => ({ ...s, usage: scaleUp ? 0 : metric.assumedUsage(s) }));
  const newRatio = metric.value(measured, assumed) / metric.goal;
  const proposed = Math.ceil(newRatio * (measured.length + assumed.length));
  const reversed = scaleUp ? newRatio <= 1 || proposed < current : newRatio >= 1 || proposed > current;
  if (Math.abs(1 - newRatio) <= TOLERANCE || reversed)
    return { replicas: current, reason: `${shown} (within tolerance once pods without metrics are counted)` };
  return { replicas: proposed, reason: shown };
}

interface Metric {
  readonly goal: number;
  /** The metric's value over pods (utilization in % of requests, or average usage). */
  value(measured: readonly PodSample[], assumed: readonly PodSample[]): number;
  /** The usage a pod without a metric is assumed to have when scaling down: the target. */
  assumedUsage(pod: PodSample): number;
  show(value: number): string;
}

function metricOf(target: Target): Metric | undefined {
  const sum = (pods: readonly PodSample[], pick: (p: PodSample) => number) =>
    pods.reduce((t, p) => t + pick(p), 0);
  if (target.type === "Utilization") {
    const goal = target.averageUtilization ?? 80;
    if (goal <= 0) return undefined;
    return {
      goal,
      value: (measured, assumed) => {
        const pods = [...measured, ...assumed];
        const request = sum(pods, (p) => p.request);
        return request > 0 ? (sum(pods, (p) => p.usage ?? 0) * 100) / request : 0;
      },
      assumedUsage: (pod) => (goal * pod.request) / 100,
      show: (value) => `${Math.round(value)}%`,
    };
  }
  const goal = parseQuantity(target.averageValue ?? "0") ?? 0;
  if (goal <= 0) return undefined;
  return {
    goal,
    value: (measured, assumed) => {
      const pods = [...measured, ...assumed];
      return sum(pods, (p) => p.usage ?? 0) / pods.length;
    },
    assumedUsage: () => goal,
    show: formatValue,
  };
}

// Stabilization: a scale-up may go no higher than the lowest recommendation in its window, a
// scale-down no lower than the highest in its window.
function stabilize(
  proposed: number,
  current: number,
  history: HpaHistory,
  now: number,
  up: Required<ScalingRules>,
  down: Required<ScalingRules>,
): { replicas: number; limitedBy?: string } {
  let upBound = proposed;
  let downBound = proposed;
  for (const r of history.recommendations) {
    if (r.at > now - up.stabilizationWindowSeconds * 1000) upBound = Math.min(upBound, r.replicas);
    if (r.at > now - down.stabilizationWindowSeconds * 1000) downBound = Math.max(downBound, r.replicas);
  }
  let replicas = current;
  if (replicas < upBound) replicas = upBound;
  if (replicas > downBound) replicas = downBound;
  if (replicas === proposed) return { replicas };
  return { replicas, limitedBy: proposed > current ? "ScaleUpStabilized" : "ScaleDownStabilized" };
}

// Rate policies over the scale events of each policy's period, then the bounds.
function rateLimit(
  desired: number,
  current: number,
  history: HpaHistory,
  now: number,
  limits: { min: number; max: number; up: Required<ScalingRules>; down: Required<ScalingRules> },
): { replicas: number; limitedBy?: string } {
  if (desired === current) return { replicas: desired };
  const up = desired > current;
  const rules = up ? limits.up : limits.down;
  if (rules.selectPolicy === "Disabled") return { replicas: current, limitedBy: "ScalingDisabled" };
  const limit = scaleLimit(current, history, now, rules, up);
  if (up) {
    const allowed = Math.min(limits.max, Math.max(current, limit));
    return desired > allowed
      ? { replicas: allowed, limitedBy: allowed === limits.max ? "TooManyReplicas" : "ScaleUpLimit" }
      : { replicas: desired };
  }
  const allowed = Math.max(limits.min, Math.min(current, limit));
  return desired < allowed
    ? { replicas: allowed, limitedBy: allowed === limits.min ? "TooFewReplicas" : "ScaleDownLimit" }
    : { replicas: desired };
}

// The furthest the policies let replicas go from where each period started: selectPolicy Max picks
// the policy allowing the largest change, Min the smallest.
function scaleLimit(
  current: number,
  history: HpaHistory,
  now: number,
  rules: Required<ScalingRules>,
  up: boolean,
): number {
  const proposals = rules.policies.map((policy) => {
    const recent = history.events.filter((e) => e.at > now - policy.periodSeconds * 1000);
    const start = current - recent.reduce((t, e) => t + e.change, 0);
    if (policy.type === "Pods") return up ? start + policy.value : start - policy.value;
    return up ? Math.ceil(start * (1 + policy.value / 100)) : Math.floor(start * (1 - policy.value / 100));
  });
  const widest = rules.selectPolicy !== "Min";
  return up === widest ? Math.max(...proposals) : Math.min(...proposals);
}

// Forget what no window or period looks at any more.
function prune(
  history: HpaHistory,
  now: number,
  up: Required<ScalingRules>,
  down: Required<ScalingRules>,
): HpaHistory {
  const window = Math.max(up.stabilizationWindowSeconds, down.stabilizationWindowSeconds) * 1000;
  const period = Math.max(0, ...[...up.policies, ...down.policies].map((p) => p.periodSeconds)) * 1000;
  return {
    recommendations: history.recommendations.filter((r) => r.at > now - window),
    events: history.events.filter((e) => e.at > now - period),
  };
}

function withEvent(decision: HpaDecision, current: number, now: number): HpaDecision {
  const change = decision.desiredReplicas - current;
  if (change === 0) return decision;
  return {
    ...decision,
    history: { ...decision.history, events: [...decision.history.events, { at: now, change }] },
  };
}

function formatValue(value: number): string {
  return Number.isInteger(value) ? String(value) : value.toFixed(3);
}
