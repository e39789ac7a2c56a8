import { matchesClusterAffinity } from "../model/cluster-affinity.js";
import { compareStrings } from "../model/file-tree.js";
import type { OverflowSpec } from "../model/types.js";
import type { Profile } from "./framework.js";
import type {
  ClusterRoom,
  ClusterState,
  ScheduleDecision,
  ScheduleResult,
  SchedulingProblem,
  TierShare,
} from "./types.js";

// Overflow tiers (vivo's and Huawei's practice: own data centres first, the cloud only for what does
// not fit). A Placement lists tiers of clusters in order; a Divided workload's total is split over
// the tiers first — each takes what fits in it, by the same estimator and filters a flat schedule
// uses — and each tier's share is then divided over its clusters by the Placement's own rules.
//
// Where replicas run now is kept: a scale-up's increment fills the tiers in order, a scale-down
// takes replicas back from the last tier first, and an equal total leaves every tier as it is, so a
// first tier that regains room does not pull running replicas back unless the Placement says
// reclaim: WhenRoom. Karmada's ordered clusterAffinities differ: a workload that does not fit in
// the first group moves to the next group whole; here only what does not fit overflows.

type Flat = (problem: SchedulingProblem, profile: Profile) => ScheduleResult;

/** The clusters of each tier, in order: a cluster belongs to the first tier that selects it. */
export function tierMembers(overflow: OverflowSpec, clusters: readonly ClusterState[]): string[][] {
  const taken = new Set<string>();
  return overflow.tiers.map((tier) => {
    const members = clusters
      .filter((c) => !taken.has(c.name) && matchesClusterAffinity(tier.clusterAffinity, c))
      .map((c) => c.name)
      .sort(compareStrings);
    for (const name of members) taken.add(name);
    return members;
  });
}

/** Schedules a Divided workload over the Placement's overflow tiers. Pure. */
export function scheduleTiers(
  problem: SchedulingProblem,
  profile: Profile,
  overflow: OverflowSpec,
  flat: Flat,
): ScheduleResult {
  const members = tierMembers(overflow, problem.clusters);
  const tierProblem = (
    index: number,
    replicas: number,
    current: Record<string, number>,
  ): SchedulingProblem => {
    const { overflow: _, ...placement } = problem.placement;
    return {
      ...problem,
      replicas,
      current,
      placement: { ...placement, clusterAffinity: { clusterNames: members[index] ?? [] } },
      clusters: problem.clusters.filter((c) => (members[index] ?? []).includes(c.name)),
    };
  };
  const currents = members.map((names) => currentIn(problem.current ?? {}, names));
  // How much of the total each tier can hold: a schedule of all of it there, what it could not place subtracted.
  const fits: number[] = [];
  for (const [i, current] of currents.entries()) {
    if ((members[i] ?? []).length === 0) {
      fits.push(0);
      continue;
    }
    const probe = flat(tierProblem(i, problem.replicas, current), profile);
    if (!probe.ok) return probe;
    fits.push(problem.replicas - probe.decision.unschedulable);
  }
  const held = currents.map((current) => sum(Object.values(current)));
  const keep = overflow.reclaim === "WhenRoom" || problem.rebalance ? held.map(() => 0) : held;
  const shares = tierShares(problem.replicas, keep, fits);
  const decisions: ScheduleDecision[] = [];
  // What a tier could not place after all goes on to the next; after the last, it fits nowhere.
  let carried = 0;
  for (const [i, share] of shares.entries()) {
    const wanted = share + carried;
    const asked = Math.min(wanted, fits[i] ?? 0);
    const run = flat(tierProblem(i, asked, currents[i] ?? {}), profile);
    if (!run.ok) return run;
    decisions.push(run.decision);
    carried = wanted - (asked - run.decision.unschedulable);
  }
  return { ok: true, decision: merged(overflow, members, decisions, carried) };
}

/**
 * Each tier's share of `total`: what it holds (`keep`, capped at what fits), then a surplus fills the
 * tiers in order up to what fits, a shortfall is taken from the last tier first. What fits nowhere
 * is left to the caller (the last element's remainder). Pure.
 */
export function tierShares(total: number, keep: readonly number[], fits: readonly number[]): number[] {
  const shares = keep.map((held, i) => Math.min(held, fits[i] ?? 0));
  let delta = total - sum(shares);
  for (let i = 0; i < shares.length && delta > 0; i++) {
    const add = Math.min((fits[i] ?? 0) - (shares[i] ?? 0), delta);
    shares[i] = (shares[i] ?? 0) + add;
    delta -= add;
  }
  for (let i = shares.length - 1; i >= 0 && delta < 0; i--) {
    const take = Math.min(shares[i] ?? 0, -delta);
    shares[i] = (shares[i] ?? 0) - take;
    delta += take;
  }
  // What fits nowhere goes with the last tier's share: its schedule reports it unschedulable.
  if (delta > 0 && shares.length > 0) shares[shares.length - 1] = (shares.at(-1) ?? 0) + delta;
  return shares;
}

function merged(
  overflow: OverflowSpec,
  members: readonly string[][],
  decisions: readonly ScheduleDecision[],
  unschedulable: number,
): ScheduleDecision {
  const clusters: Record<string, number> = {};
  const tiers: TierShare[] = [];
  const diagnosis = {
    filtered: {} as Record<string, string>,
    frozen: {} as Record<string, string>,
    notSelected: {} as Record<string, string>,
    selected: [] as string[],
  };
  const room: Record<string, ClusterRoom> = {};
  for (const [i, decision] of decisions.entries()) {
    Object.assign(room, decision.diagnosis.room);
    Object.assign(clusters, decision.clusters);
    Object.assign(diagnosis.filtered, decision.diagnosis.filtered);
    Object.assign(diagnosis.frozen, decision.diagnosis.frozen);
    Object.assign(diagnosis.notSelected, decision.diagnosis.notSelected);
    diagnosis.selected.push(...decision.diagnosis.selected);
    tiers.push({
      name: overflow.tiers[i]?.name ?? String(i),
      clusters: [...(members[i] ?? [])],
      replicas: sum(Object.values(decision.clusters)),
    });
  }
  // Clusters in no tier are not candidates; the Placement asked for none of them.
  const summary = tiers.map((t) => `tier ${t.name} ${t.replicas}`).join(", ");
  const ordered = Object.fromEntries(Object.entries(clusters).sort(([a], [b]) => compareStrings(a, b)));
  const last = decisions.at(-1);
  return {
    clusters: ordered,
    unschedulable,
    diagnosis: {
      summary: `${summary}${unschedulable > 0 ? `; ${unschedulable} fit in no tier` : ""}`,
      ...diagnosis,
      tiers,
      ...(Object.keys(room).length > 0
        ? { room: Object.fromEntries(Object.entries(room).sort(([a], [b]) => compareStrings(a, b))) }
        : {}),
      ...(unschedulable > 0
        ? {
            unschedulableReason:
              last?.diagnosis.unschedulableReason ?? `${unschedulable} replicas fit in no tier`,
          }
        : {}),
    },
  };
}

function currentIn(
  current: Readonly<Record<string, number>>,
  names: readonly string[],
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const name of names) if ((current[name] ?? 0) > 0) out[name] = current[name] as number;
  return out;
}

function sum(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0);
}
