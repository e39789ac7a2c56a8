import { smallest } from "../model/extremes.js";
import type { ObservedReplicas } from "../model/observed-state.js";
import type { PlacementSpec, PurgeMode } from "../model/types.js";
import { fnv32a } from "../schedule/division/fnv.js";
import type { ScheduleDecision } from "../schedule/types.js";

// Failover for one workload, around its scheduling: before, what the scheduler must respect (caps
// from application failover, keeping the current counts after a failover); after, which clusters
// the replicas moved off and why, and which old replicas stay rendered until the new ones are
// Healthy elsewhere. Pure; the record it returns is kept in the app's status file, so a restarted
// controller continues where the last one stopped.

/** Replicas that moved off a cluster, why and when. */
export interface MovedOff {
  readonly cluster: string;
  readonly replicas: number;
  readonly reason: string;
  /** ISO time. */
  readonly at: string;
}

/** Old replicas still rendered on a cluster they moved off, until the new ones are Healthy elsewhere. */
export interface KeptReplicas {
  readonly cluster: string;
  readonly replicas: number;
  readonly purgeMode: PurgeMode;
  /** ISO time after which they go even if the new ones are not Healthy (Gracefully); absent for Never and Directly. */
  readonly until?: string;
}

/** Application failover: a cluster's capacity for this workload, capped at what ran there. */
export interface CapacityCap {
  readonly cluster: string;
  readonly replicas: number;
  readonly reason: string;
  /** ISO time when gitfleet's own estimate is trusted again. */
  readonly until: string;
}

/** The labels a move carried from the cluster its replicas left to those that took them (statePreservation). */
export interface PreservedState {
  readonly from: string;
  readonly to: readonly string[];
  readonly labels: Readonly<Record<string, string>>;
  /** ISO time of the move. */
  readonly at: string;
}

/** What failover has done to a workload, kept in status/apps/<app>.yaml. */
export interface FailoverRecord {
  /** The Placement spec (a digest) the moves were made under: while it is unchanged, replicas do not move back. */
  readonly placement?: string;
  readonly movedOff: readonly MovedOff[];
  readonly keeping: readonly KeptReplicas[];
  readonly capped: readonly CapacityCap[];
  /** Labels moves carried (statePreservation); they stay while the moves stand. */
  readonly preserved?: readonly PreservedState[];
}

/** What the scheduler must respect for this workload. */
export interface FailoverConstraints {
  /** Keep the current counts where the total allows (after a failover: no move back). */
  readonly keepCurrent: boolean;
  /** Most replicas per cluster (application failover). */
  readonly caps: Readonly<Record<string, number>>;
  /** Caps added now, with why. */
  readonly newCaps: readonly CapacityCap[];
}

/** One workload's scheduling inputs for failover. */
export interface FailoverSubject {
  readonly record: FailoverRecord | undefined;
  readonly placement: PlacementSpec;
  /** Replicas per cluster in the previous decision. */
  readonly current: Readonly<Record<string, number>>;
  /** What the members report for this workload, per cluster. */
  readonly observed: ReadonlyMap<string, ObservedReplicas>;
  readonly now: number;
  /** Divided (replicas split across clusters) rather than Duplicated. */
  readonly divided: boolean;
}

const DEFAULT_GRACE_SECONDS = 600;
const DEFAULT_UNSCHEDULABLE_SECONDS = 60;
const DEFAULT_DEGRADED_SECONDS = 300;
const DEFAULT_COOL_DOWN_SECONDS = 600;
const MOVES_KEPT = 10;

/** A short digest of a Placement spec: a person's change to it ends "do not move back". */
export function placementDigest(placement: PlacementSpec): string {
  return fnv32a(JSON.stringify(placement)).toString(16).padStart(8, "0");
}

/**
 * What the scheduler must respect: caps still cooling down, new caps where pods have stayed
 * Unschedulable past `failover.application.unschedulableSeconds` (the cluster's capacity for the
 * workload is what runs there), and the current counts when the workload has failed over under
 * this Placement.
 */
export function failoverConstraints(subject: FailoverSubject): FailoverConstraints {
  const { record, placement, now } = subject;
  const caps: Record<string, number> = {};
  for (const cap of record?.capped ?? []) if (Date.parse(cap.until) > now) caps[cap.cluster] = cap.replicas;
  const newCaps = subject.divided ? [...unschedulableCaps(subject), ...degradedCaps(subject)] : [];
  for (const cap of newCaps) caps[cap.cluster] = Math.min(cap.replicas, caps[cap.cluster] ?? cap.replicas);
  const sticky = record?.placement !== undefined && record.placement === placementDigest(placement);
  return { keepCurrent: sticky || newCaps.length > 0, caps, newCaps };
}

/**
 * Application failover's settings: the Placement's, or for a division by capacity (dynamic weights,
 * Aggregated) the defaults — a cluster that can no longer fit its share gives up the excess, as the
 * capacity it was given it on no longer holds.
 */
export function applicationFailover(
  placement: PlacementSpec,
): NonNullable<NonNullable<PlacementSpec["failover"]>["application"]> | undefined {
  const settings = placement.failover?.application;
  if (settings) return settings;
  const scheduling = placement.replicaScheduling;
  const byCapacity =
    scheduling?.divisionPreference === "Aggregated" ||
    scheduling?.weightPreference?.dynamicWeight === "AvailableReplicas";
  return byCapacity ? {} : undefined;
}

// Clusters where this workload's pods have been Unschedulable for long enough, capped at what runs there.
function unschedulableCaps(subject: FailoverSubject): CapacityCap[] {
  const settings = applicationFailover(subject.placement);
  if (!settings) return [];
  const seconds = settings.unschedulableSeconds ?? DEFAULT_UNSCHEDULABLE_SECONDS;
  const coolDown = settings.coolDownSeconds ?? DEFAULT_COOL_DOWN_SECONDS;
  const caps: CapacityCap[] = [];
  for (const [cluster, seen] of subject.observed) {
    const current = subject.current[cluster] ?? 0;
    // Only an observation of what gitfleet asks for now counts: an older one is about other replicas.
    if (seen.unschedulable === 0 || seen.unschedulableSince === undefined || seen.desired !== current)
      continue;
    const pendingFor = subject.now - seen.unschedulableSince;
    if (pendingFor < seconds * 1000) continue;
    caps.push({
      cluster,
      replicas: Math.max(0, current - seen.unschedulable),
      reason: `${seen.unschedulable} replicas Unschedulable for ${Math.round(pendingFor / 1000)}s`,
      until: new Date(subject.now + coolDown * 1000).toISOString(),
    });
  }
  return caps;
}

/**
 * Clusters where this workload's pods have been stuck (CrashLoopBackOff, ImagePullBackOff,
 * ErrImagePull, past the progress deadline) for `degradedSeconds`, capped at what runs there — but
 * only while every other cluster that holds replicas runs them all ready: a bad image that fails
 * everywhere halts the rollout instead of moving replicas around. Where a member HPA owns the count,
 * the cap is what runs there.
 */
function degradedCaps(subject: FailoverSubject): CapacityCap[] {
  const settings = subject.placement.failover?.application;
  if (!settings) return [];
  const seconds = settings.degradedSeconds ?? DEFAULT_DEGRADED_SECONDS;
  const coolDown = settings.coolDownSeconds ?? DEFAULT_COOL_DOWN_SECONDS;
  const caps: CapacityCap[] = [];
  for (const [cluster, seen] of subject.observed) {
    const current = subject.current[cluster] ?? 0;
    const stuckFor = stuckLongEnough(seen, current, subject.now, seconds);
    if (stuckFor === undefined || !healthyElsewhere(subject, cluster)) continue;
    caps.push({
      cluster,
      replicas: Math.max(0, seen.scaledByHpa ? seen.ready : current - (seen.degraded ?? 0)),
      reason: `${seen.degraded} replicas ${seen.degradedReason || "degraded"} for ${Math.round(stuckFor / 1000)}s`,
      until: new Date(subject.now + coolDown * 1000).toISOString(),
    });
  }
  return caps;
}

// How long the cluster's pods have been stuck, when it is at least `seconds` and about the replicas
// gitfleet asks for now (or a member HPA's).
function stuckLongEnough(
  seen: ObservedReplicas,
  current: number,
  now: number,
  seconds: number,
): number | undefined {
  if (!seen.degraded || seen.degradedSince === undefined || current === 0) return undefined;
  if (!seen.scaledByHpa && seen.desired !== current) return undefined;
  const stuckFor = now - seen.degradedSince;
  return stuckFor >= seconds * 1000 ? stuckFor : undefined;
}

// Some other cluster holds replicas of this workload, and every one that does runs them all ready.
function healthyElsewhere(subject: FailoverSubject, cluster: string): boolean {
  const others = Object.entries(subject.current).filter(([name, count]) => name !== cluster && count > 0);
  return (
    others.length > 0 &&
    others.every(([name]) => {
      const seen = subject.observed.get(name);
      return seen !== undefined && !seen.degraded && seen.ready >= seen.desired && seen.desired > 0;
    })
  );
}

/** The record after scheduling, and the replicas each cluster keeps beyond the decision. */
export interface FailoverOutcome {
  readonly record: FailoverRecord | undefined;
  /** Clusters that keep old replicas (purgeMode), with the count to render there. */
  readonly kept: ReadonlyMap<string, number>;
  /** The next time (ms) this workload's failover can change without a new observation. */
  readonly wakeAt: number | undefined;
}

/**
 * Settles failover after scheduling: replicas that left a cluster because of an untolerated NoExecute
 * taint (cluster failover, drain) or a capacity cap (application failover) are recorded as moved;
 * under purgeMode Gracefully the old replicas stay rendered there until every cluster that took
 * replicas reports them ready (or gracePeriodSeconds pass), Directly drops them at once, Never keeps
 * them until the Placement changes. Whatever the mode, while replicas cannot be placed anywhere the
 * old ones stay: nothing is deleted for a move that did not happen.
 */
export function settleFailover(
  subject: FailoverSubject,
  constraints: FailoverConstraints,
  decision: ScheduleDecision,
): FailoverOutcome {
  const { record, now } = subject;
  const digest = placementDigest(subject.placement);
  const moves = failoverMoves(subject, constraints, decision);
  const keeping = keptAfter(subject, decision, moves, digest);
  const sticky = moves.length > 0 || record?.placement === digest ? digest : undefined;
  const movedOff = sticky
    ? [...(record?.placement === digest ? record.movedOff : []), ...moves.map(({ purgeMode: _, ...m }) => m)]
    : [];
  const capped = [
    ...(record?.capped ?? []).filter(
      (c) => Date.parse(c.until) > now && !constraints.newCaps.some((n) => n.cluster === c.cluster),
    ),
    ...constraints.newCaps,
  ];
  const kept = new Map<string, number>();
  for (const k of keeping) kept.set(k.cluster, Math.max(k.replicas, decision.clusters[k.cluster] ?? 0));
  const next: FailoverRecord = {
    ...(sticky ? { placement: sticky } : {}),
    movedOff: movedOff.slice(-MOVES_KEPT),
    keeping,
    capped,
    ...(sticky && record?.placement === digest && record.preserved ? { preserved: record.preserved } : {}),
  };
  const empty = !sticky && keeping.length === 0 && capped.length === 0;
  return { record: empty ? undefined : next, kept, wakeAt: wakeAt(subject, next) };
}

// The old replicas still kept (those not purged), and those the moves of this decision keep.
function keptAfter(
  subject: FailoverSubject,
  decision: ScheduleDecision,
  moves: readonly Move[],
  digest: string,
): KeptReplicas[] {
  const keeping = new Map<string, KeptReplicas>();
  for (const kept of subject.record?.keeping ?? [])
    if (!purged(kept, subject, decision, digest)) keeping.set(kept.cluster, kept);
  for (const move of moves) {
    const earlier = keeping.get(move.cluster);
    const replicas = Math.max(earlier?.replicas ?? 0, subject.current[move.cluster] ?? 0);
    const kept = keptFor(move.cluster, replicas, move.purgeMode, subject.placement, subject.now);
    // A Duplicated workload's other copies already run: nothing new has to become ready first.
    const waits = kept.purgeMode !== "Directly" && (subject.divided || kept.purgeMode === "Never");
    if (waits || decision.unschedulable > 0) keeping.set(move.cluster, kept);
  }
  if (moves.length > 0 && decision.unschedulable > 0) shrinkNothing(subject, decision, keeping);
  return [...keeping.values()];
}

// A failover the Placement cannot satisfy elsewhere (capacity, spread constraints) shrinks nothing:
// every cluster keeps what it runs until the replicas can go somewhere.
function shrinkNothing(
  subject: FailoverSubject,
  decision: ScheduleDecision,
  keeping: Map<string, KeptReplicas>,
): void {
  for (const [cluster, replicas] of Object.entries(subject.current))
    if (replicas > (decision.clusters[cluster] ?? 0) && !keeping.has(cluster))
      keeping.set(cluster, keptFor(cluster, replicas, "Gracefully", subject.placement, subject.now));
}

type Move = MovedOff & { readonly purgeMode: PurgeMode };

// Clusters whose count fell because of failover: a NoExecute taint removed them, or a new cap lowered them.
function failoverMoves(
  subject: FailoverSubject,
  constraints: FailoverConstraints,
  decision: ScheduleDecision,
): Move[] {
  const at = new Date(subject.now).toISOString();
  const failover = subject.placement.failover;
  const moves: Move[] = [];
  for (const [cluster, before] of Object.entries(subject.current)) {
    const after = decision.clusters[cluster] ?? 0;
    if (before <= after) continue;
    const removed = decision.diagnosis.filtered[cluster];
    const cap = constraints.newCaps.find((c) => c.cluster === cluster);
    if (removed?.includes(":NoExecute}")) {
      const purgeMode = failover?.cluster?.purgeMode ?? "Gracefully";
      moves.push({ cluster, replicas: before - after, reason: removed, at, purgeMode });
    } else if (cap) {
      const purgeMode = failover?.application?.purgeMode ?? "Gracefully";
      moves.push({ cluster, replicas: before - after, reason: cap.reason, at, purgeMode });
    }
  }
  return moves;
}

function keptFor(
  cluster: string,
  replicas: number,
  purgeMode: PurgeMode,
  placement: PlacementSpec,
  now: number,
): KeptReplicas {
  if (purgeMode !== "Gracefully") return { cluster, replicas, purgeMode };
  const grace =
    placement.failover?.cluster?.gracePeriodSeconds ??
    placement.failover?.application?.gracePeriodSeconds ??
    DEFAULT_GRACE_SECONDS;
  return { cluster, replicas, purgeMode, until: new Date(now + grace * 1000).toISOString() };
}

// Old replicas go once their replacements run: every cluster that holds replicas reports them all
// ready; Gracefully also after its grace period; Never only when the Placement changes.
function purged(
  kept: KeptReplicas,
  subject: FailoverSubject,
  decision: ScheduleDecision,
  digest: string,
): boolean {
  if ((decision.clusters[kept.cluster] ?? 0) >= kept.replicas) return true;
  if (kept.purgeMode === "Never") return subject.record?.placement !== digest;
  if (decision.unschedulable > 0) return false;
  if (kept.purgeMode === "Directly") return true;
  if (kept.until !== undefined && subject.now >= Date.parse(kept.until)) return true;
  return replacementsReady(kept.cluster, subject.observed, decision);
}

/**
 * Every other cluster that holds replicas reports the count it is asked for, all ready; where a
 * member's HorizontalPodAutoscaler owns the count, all of the HPA's replicas ready.
 */
export function replacementsReady(
  cluster: string,
  observed: ReadonlyMap<string, ObservedReplicas>,
  decision: ScheduleDecision,
): boolean {
  return Object.entries(decision.clusters).every(([name, count]) => {
    if (name === cluster || count === 0) return true;
    const seen = observed.get(name);
    if (seen?.scaledByHpa) return seen.ready >= seen.desired;
    return seen !== undefined && seen.desired === count && seen.ready >= count;
  });
}

// The next deadline: a grace period or a cool-down ending, or pods unschedulable or stuck long enough to move.
function wakeAt(subject: FailoverSubject, record: FailoverRecord): number | undefined {
  const times: number[] = [];
  for (const k of record.keeping) if (k.until) times.push(Date.parse(k.until));
  for (const c of record.capped) times.push(Date.parse(c.until));
  if (subject.divided) times.push(...observedDeadlines(subject));
  const future = times.filter((t) => t > subject.now);
  return smallest(future);
}

// When pods unschedulable or stuck now will have been so long enough to move.
function observedDeadlines(subject: FailoverSubject): number[] {
  const application = applicationFailover(subject.placement);
  if (!application) return [];
  const explicit = subject.placement.failover?.application;
  const times: number[] = [];
  for (const seen of subject.observed.values()) {
    if (seen.unschedulable > 0 && seen.unschedulableSince !== undefined)
      times.push(
        seen.unschedulableSince + (application.unschedulableSeconds ?? DEFAULT_UNSCHEDULABLE_SECONDS) * 1000,
      );
    if (explicit && seen.degraded && seen.degradedSince !== undefined)
      times.push(seen.degradedSince + (explicit.degradedSeconds ?? DEFAULT_DEGRADED_SECONDS) * 1000);
  }
  return times;
}
