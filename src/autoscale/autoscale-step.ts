import { groupOf } from "../apimachinery/kinds.js";
import { identityOf } from "../model/identity.js";
import type { Autoscaled, CronBounds } from "../model/observed-state.js";
import type { FederatedHPA, FleetModel, Resource } from "../model/types.js";
import { decideReplicas, type HpaHistory, type HpaSamples } from "./hpa-algorithm.js";

// One round of the centralized FederatedHPAs: for each, the global total its target should run,
// from the pods of every member, the autoscaler's history and the time — at most one change per
// workload per interval, so the status branch does not turn into noise. Pure; the controller
// samples the members, feeds the totals to the render as observations, and commits the result.

/** What the step needs to know about one autoscaler between rounds (kept in the status branch). */
export interface AutoscalerState {
  readonly history: HpaHistory;
  /** The total it decided last (the render's input). */
  readonly replicas: number;
  /** When the total last changed (ms). */
  readonly changedAt?: number;
  /** Why it last changed ("cpu 91% > 70%"), for the render's record. */
  readonly reason?: string;
  /** The algorithm's last scale event: kept on the status branch, it seeds rate policies after a restart. */
  readonly lastEvent?: { readonly at: number; readonly change: number };
  /** Bounds a CronScale rule set in place of the spec's minReplicas/maxReplicas, until its next rule. */
  readonly bounds?: CronBounds;
}

/** The spec with a CronScale rule's bounds in place of its own. */
export function effectiveSpec(hpa: FederatedHPA, bounds: CronBounds | undefined): FederatedHPA["spec"] {
  if (!bounds) return hpa.spec;
  return {
    ...hpa.spec,
    ...(bounds.minReplicas !== undefined ? { minReplicas: bounds.minReplicas } : {}),
    ...(bounds.maxReplicas !== undefined ? { maxReplicas: bounds.maxReplicas } : {}),
  };
}

/** The member HPAs of one workload: which FederatedHPA, and per cluster its bounds and the replicas they were split by. */
export interface MemberHpas {
  readonly autoscaler: string;
  readonly clusters: Readonly<
    Record<string, { readonly minReplicas: number; readonly maxReplicas: number; readonly replicas: number }>
  >;
  /** A CronScale rule's bounds in place of the spec's, when one set them. */
  readonly boundsBy?: string;
}

/**
 * What autoscaling reads of a workload's scheduling decision: the render's WorkloadDecision is one.
 * (Autoscaling decides before rendering, so it names only what it needs, not the render's type.)
 */
export interface ScheduledWorkload {
  /** group/kind/namespace/name. */
  readonly identity: string;
  /** "Kind namespace/name", as messages name it. */
  readonly resource: string;
  /** The total: what the source or an autoscaler asks for. */
  readonly replicas: number;
  readonly decision: { readonly clusters: Readonly<Record<string, number>> };
  /** A distributed FederatedHPA's member HPAs, as the render gave them. */
  readonly memberHpas?: MemberHpas;
}

export interface AutoscaleInput {
  readonly model: FleetModel;
  /** The current render's workload decisions (the source's totals and where they run). */
  readonly decisions: readonly ScheduledWorkload[];
  /** Per workload identity: its pods' samples per resource, from every member. */
  readonly samples: ReadonlyMap<string, HpaSamples>;
  /** Per FederatedHPA ("namespace/name"): its state from the last round. */
  readonly states: ReadonlyMap<string, AutoscalerState>;
  readonly now: number;
  /** The least time between two changes of one workload's total (ms). */
  readonly intervalMs: number;
}

/** One change of a total, for the status commit's message. */
export interface ScaleChange {
  readonly autoscaler: string;
  readonly workload: string;
  readonly from: number;
  readonly to: number;
  readonly reason: string;
}

export interface AutoscaleOutcome {
  /** Per workload identity: the total to render, and the FederatedHPA that decided it. */
  readonly autoscaled: ReadonlyMap<string, Autoscaled>;
  readonly states: ReadonlyMap<string, AutoscalerState>;
  readonly changes: readonly ScaleChange[];
}

/** The key of a FederatedHPA or CronScale in states and status files: "namespace/name". */
export function autoscalerKey(object: {
  readonly metadata: { readonly name: string; readonly namespace?: string };
}): string {
  return `${object.metadata.namespace ?? ""}/${object.metadata.name}`;
}

/** An object that names a workload template: a FederatedHPA, a CronScale or a ScaleDownRequest. */
interface Targeting {
  readonly metadata: { readonly name: string; readonly namespace?: string };
  readonly spec: {
    readonly scaleTargetRef: { readonly apiVersion: string; readonly kind: string; readonly name: string };
  };
}

/** The workload templates of a model, by identity and by reference (apiVersion, kind, name). */
interface TemplateIndex {
  readonly byIdentity: ReadonlyMap<string, Resource>;
  readonly byRef: ReadonlyMap<string, readonly string[]>;
}

const templateIndexes = new WeakMap<FleetModel, TemplateIndex>();

// Built once per model: autoscalers look their targets up on every round.
function templateIndex(model: FleetModel): TemplateIndex {
  const known = templateIndexes.get(model);
  if (known) return known;
  const byIdentity = new Map<string, Resource>();
  const byRef = new Map<string, string[]>();
  for (const r of model.apps.flatMap((a) => a.resources)) {
    const identity = identityOf(r.group, r.kind, r.namespace, r.name);
    byIdentity.set(identity, r);
    const key = `${r.apiVersion} ${r.kind} ${r.name}`;
    byRef.set(key, [...(byRef.get(key) ?? []), identity]);
  }
  const index = { byIdentity, byRef };
  templateIndexes.set(model, index);
  return index;
}

/** The template of a workload identity (group/kind/namespace/name). */
export function templateOf(model: FleetModel, identity: string): Resource | undefined {
  return templateIndex(model).byIdentity.get(identity);
}

/**
 * The identity (group/kind/namespace/name) of the workload template an autoscaler names. Without
 * metadata.namespace the reference is found in whichever namespace holds it (validation makes sure
 * only one does).
 */
export function targetOf(model: FleetModel, object: Targeting): string {
  const { apiVersion, kind, name } = object.spec.scaleTargetRef;
  const namespace = object.metadata.namespace;
  if (namespace !== undefined) return identityOf(groupOf(apiVersion), kind, namespace, name);
  return (
    templateIndex(model).byRef.get(`${apiVersion} ${kind} ${name}`)?.[0] ??
    identityOf(groupOf(apiVersion), kind, undefined, name)
  );
}

/** The FederatedHPAs that set a global total: mode centralized, or unset on a Divided workload. */
export function centralized(hpa: FederatedHPA, decision: ScheduledWorkload | undefined): boolean {
  if (hpa.spec.mode) return hpa.spec.mode === "centralized";
  // Unset: centralized for a Divided workload (one total split), distributed for a Duplicated one.
  return (
    decision !== undefined && Object.keys(decision.decision.clusters).length > 0 && !duplicated(decision)
  );
}

function duplicated(decision: ScheduledWorkload): boolean {
  const counts = Object.values(decision.decision.clusters);
  return counts.length > 1 && counts.every((c) => c === decision.replicas);
}

export function autoscaleStep(input: AutoscaleInput): AutoscaleOutcome {
  const autoscaled = new Map<string, Autoscaled>();
  const states = new Map<string, AutoscalerState>();
  const changes: ScaleChange[] = [];
  for (const hpa of input.model.federatedHPAs) {
    const identity = targetOf(input.model, hpa);
    const decision = input.decisions.find((d) => d.identity === identity);
    if (!decision || !centralized(hpa, decision)) continue;
    const key = autoscalerKey(hpa);
    const one = stepOne(hpa, decision, input.states.get(key), input);
    autoscaled.set(identity, {
      replicas: one.state.replicas,
      by: hpa.metadata.name,
      ...(one.state.reason ? { reason: one.state.reason } : {}),
    });
    states.set(key, one.state);
    if (one.change) changes.push(one.change);
  }
  return { autoscaled, states, changes };
}

// One autoscaler: nothing sampled (members unreachable) or a change too recent keeps the total.
function stepOne(
  hpa: FederatedHPA,
  decision: ScheduledWorkload,
  before: AutoscalerState | undefined,
  input: AutoscaleInput,
): { state: AutoscalerState; change?: ScaleChange } {
  const current = before?.replicas ?? decision.replicas;
  const samples = input.samples.get(decision.identity);
  const settling = before?.changedAt !== undefined && input.now - before.changedAt < input.intervalMs;
  if (!samples || settling)
    return { state: before ?? { history: firstSight(current, input.now), replicas: current } };
  const next = decideReplicas(
    effectiveSpec(hpa, before?.bounds),
    { currentReplicas: current, ...samples },
    before?.history ?? firstSight(current, input.now),
    input.now,
  );
  if (next.desiredReplicas === current)
    return { state: { ...(before ?? {}), history: next.history, replicas: current } };
  const reason = next.limitedBy ? `${next.reason}; ${next.limitedBy}` : next.reason;
  return {
    state: {
      ...(before ?? {}),
      history: next.history,
      replicas: next.desiredReplicas,
      changedAt: input.now,
      reason,
      lastEvent: { at: input.now, change: next.desiredReplicas - current },
    },
    change: {
      autoscaler: hpa.metadata.name,
      workload: decision.resource,
      from: current,
      to: next.desiredReplicas,
      reason,
    },
  };
}

/**
 * The history of an autoscaler seen for the first time: its current count recommended now, as the
 * Kubernetes HPA controller seeds it, so that it does not scale down before a full stabilization
 * window has passed.
 */
export function firstSight(replicas: number, now: number): HpaHistory {
  return { recommendations: [{ at: now, replicas }], events: [] };
}

/**
 * "storefront-api: hpa 8 → 12 (cpu 95% > 65%) aws-use1=3→5 gcp-euw1=2→3 idc-east-1=3→4": a change
 * with what each cluster runs before and after the render divided the new total.
 */
export function scaleMessage(
  change: ScaleChange,
  before: Readonly<Record<string, number>>,
  after: Readonly<Record<string, number>>,
): string {
  const clusters = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  const moves = clusters
    .filter((c) => (before[c] ?? 0) !== (after[c] ?? 0))
    .map((c) => `${c}=${before[c] ?? 0}→${after[c] ?? 0}`);
  // "web" is a FederatedHPA; "cronscale/peak" and "scaledown/drain" name the other deciders.
  const [kind, name] = change.autoscaler.includes("/")
    ? change.autoscaler.split("/", 2)
    : ["hpa", change.autoscaler];
  const who = `${name}: ${kind === "scaledown" ? "scale-down" : kind}`;
  return `${who} ${change.from} → ${change.to} (${change.reason})${moves.length > 0 ? ` ${moves.join(" ")}` : ""}`;
}

/**
 * The lines of a status commit for the totals autoscalers changed between two renders: one per
 * workload whose total moved, with its autoscaler, reason and each cluster before → after.
 */
export function scaleLines(
  before: readonly ScheduledWorkload[],
  after: readonly ScheduledWorkload[],
  autoscaled: ReadonlyMap<string, Autoscaled> | undefined,
): string[] {
  const old = new Map(before.map((d) => [d.identity, d]));
  const lines: string[] = [];
  for (const decision of after) {
    const previous = old.get(decision.identity);
    const by = autoscaled?.get(decision.identity);
    if (!previous || !by || previous.replicas === decision.replicas) continue;
    lines.push(
      scaleMessage(
        {
          autoscaler: by.by,
          workload: decision.resource,
          from: previous.replicas,
          to: decision.replicas,
          reason: by.reason ?? "autoscaled",
        },
        previous.decision.clusters,
        decision.decision.clusters,
      ),
    );
  }
  return lines;
}
