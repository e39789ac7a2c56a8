import type { EtcdMemberView, JobPhase } from "./etcd-member-plan.js";

/**
 * Clearing a replicated etcd's NOSPACE alarm, as etcd's maintenance guide does by hand: once a
 * member's database has reached its quota, etcd refuses every write (reads go on) until the alarm is
 * disarmed, and a disarm while the database is still that large is raised again at the next write.
 * kube-apiserver cannot compact etcd's history then (its compaction writes a key first), so the
 * clearing compacts it. Pure.
 *
 * - With no member reporting NOSPACE, nothing is done (and the Jobs of an earlier clearing go).
 * - First a Job compacts the history up to the lowest current revision of the Ready members
 *   (`etcdctl compact <revision> --physical`): what older revisions held is free space afterwards.
 * - Where the data in use then still fills more than MAX_FILL of the quota on some member,
 *   defragmenting gives back too little: the alarm stays, `held` says why (delete objects — deletes
 *   are taken under NOSPACE — or raise etcd.quota); the next clearing starts over.
 * - Where some member's database on disk is past MAX_FILL of its quota, a Job defragments every
 *   member (`etcdctl defrag --cluster`); once it completed, and every database is within MAX_FILL,
 *   a Job runs `etcdctl alarm disarm`.
 * - A member whose size or quota is unknown holds the clearing (nothing is disarmed blind).
 * - A failed Job holds it until it is deleted; a disarm that completed while the alarm is still
 *   reported (raised again) starts over: its Jobs go, and the next pass looks again.
 *
 * CORRUPT is never cleared: it is reported, for a person to replace the member or restore the etcd.
 */

/** The share of the quota a database may fill for the alarm to be disarmed. */
export const MAX_FILL = 0.9;
/** How long after a compaction that left too much data in use the history is compacted again. */
export const COMPACT_AGAIN_AFTER_MS = 5 * 60_000;

/** The clearing's Jobs as the host shows them (they are its memory between passes). */
export interface AlarmJobs {
  readonly compact?: JobPhase | undefined;
  /** When the compaction completed (ms). */
  readonly compactedAt?: number | undefined;
  readonly defrag?: JobPhase | undefined;
  readonly disarm?: JobPhase | undefined;
}

export type AlarmAction =
  /** Run `etcdctl compact <revision> --physical`. */
  | { readonly kind: "compact"; readonly revision: number; readonly endpoints: readonly string[] }
  /** Run `etcdctl defrag --cluster`. */
  | { readonly kind: "defrag"; readonly endpoints: readonly string[] }
  /** Run `etcdctl alarm disarm`. */
  | { readonly kind: "disarm"; readonly endpoints: readonly string[] }
  /**
   * Delete the clearing's Jobs: the alarm is gone, was raised again after its disarm, or the data in
   * use was still too much COMPACT_AGAIN_AFTER_MS after the compaction (the next pass compacts again).
   */
  | { readonly kind: "clean"; readonly why: "cleared" | "raised again" | "too full" };

export interface AlarmPlan {
  readonly actions: readonly AlarmAction[];
  /** Where the clearing stands ("defragmenting", "disarming"); undefined when none runs. */
  readonly clearing?: string | undefined;
  /** Why the alarm stays. */
  readonly held?: string | undefined;
}

export interface AlarmInput {
  readonly enabled: boolean;
  readonly members: readonly EtcdMemberView[];
  readonly jobs: AlarmJobs;
  readonly now: number;
}

export function planEtcdAlarms(input: AlarmInput): AlarmPlan {
  const { members, jobs } = input;
  const alarmed = members.filter((m) => m.alarm === "NOSPACE").map((m) => m.name);
  const anyJob = jobs.compact !== undefined || jobs.defrag !== undefined || jobs.disarm !== undefined;
  if (alarmed.length === 0) return { actions: anyJob ? [{ kind: "clean", why: "cleared" }] : [] };
  if (!input.enabled) return { actions: [], held: `${alarmed.join(", ")} raised NOSPACE; repair is off` };
  const endpoints = members.filter((m) => m.ready === "True").map((m) => m.name);
  if (endpoints.length === 0)
    return {
      actions: [],
      held: `${alarmed.join(", ")} raised NOSPACE, and no member is Ready to clear it through`,
    };
  return (
    underWay(jobs) ??
    (jobs.compact === undefined ? compaction(members, endpoints) : afterCompaction(input, endpoints))
  );
}

// A step whose Job runs or failed, or a disarm the alarm came back after; undefined: a next step is due.
function underWay(jobs: AlarmJobs): AlarmPlan | undefined {
  const failed = (step: string) => ({
    actions: [],
    clearing: `${step} failed`,
    held: `clearing NOSPACE: the ${step} Job failed; delete the etcd's Jobs labelled gitfleet.io/etcd-alarm to start again`,
  });
  const running: Readonly<Record<"disarm" | "defrag" | "compact", string>> = {
    disarm: "disarming",
    defrag: "defragmenting",
    compact: "compacting",
  };
  for (const step of ["disarm", "defrag", "compact"] as const) {
    if (jobs[step] === "Failed") return failed(step);
    if (jobs[step] === "Running") return { actions: [], clearing: running[step] };
    // Disarmed, and raised again: start over.
    if (step === "disarm" && jobs.disarm === "Complete")
      return { actions: [{ kind: "clean", why: "raised again" }], clearing: "raised again" };
  }
  return undefined;
}

// The first step: the history compacted to the lowest current revision of the Ready members.
function compaction(members: readonly EtcdMemberView[], endpoints: readonly string[]): AlarmPlan {
  const revisions = members.filter((m) => m.ready === "True").map((m) => m.revision);
  if (revisions.some((r) => r === undefined || !Number.isSafeInteger(r) || r < 1))
    return { actions: [], held: "a Ready member's revision is not known: NOSPACE stays until it is" };
  const revision = Math.min(...(revisions as number[]));
  return { actions: [{ kind: "compact", revision, endpoints }], clearing: "compacting" };
}

// Compacted: held while the data in use fills the quota, else defragmented while a database on disk
// does, else disarmed.
function afterCompaction(input: AlarmInput, endpoints: readonly string[]): AlarmPlan {
  const { jobs } = input;
  const fill = fullest(input.members);
  if (typeof fill === "string") return { actions: [], held: fill };
  if (fill.inUse > MAX_FILL) {
    const again = input.now - (jobs.compactedAt ?? input.now) >= COMPACT_AGAIN_AFTER_MS;
    return {
      actions: again ? [{ kind: "clean", why: "too full" }] : [],
      held: `${fill.inUseMember} uses ${percent(fill.inUse)} of its quota with data in use after compaction: defragmenting cannot clear NOSPACE; delete objects, or raise etcd.quota`,
    };
  }
  if (fill.size <= MAX_FILL) return { actions: [{ kind: "disarm", endpoints }], clearing: "disarming" };
  if (jobs.defrag === "Complete")
    return {
      actions: [],
      clearing: "defragmented",
      held: `defragmented, but ${fill.sizeMember}'s database still fills ${percent(fill.size)} of its quota`,
    };
  return { actions: [{ kind: "defrag", endpoints }], clearing: "defragmenting" };
}

// The fullest database on disk and the most data in use, as shares of their quotas; or why they
// are not known.
function fullest(
  members: readonly EtcdMemberView[],
): { size: number; sizeMember: string; inUse: number; inUseMember: string } | string {
  let out = { size: 0, sizeMember: "", inUse: 0, inUseMember: "" };
  for (const m of members) {
    if (m.ready !== "True") continue;
    if (m.dbSize === undefined || m.dbInUse === undefined || m.quota === undefined || m.quota <= 0)
      return `${m.name}'s database size or quota is not known: NOSPACE stays until it is`;
    const size = m.dbSize / m.quota;
    const inUse = m.dbInUse / m.quota;
    if (size > out.size) out = { ...out, size, sizeMember: m.name };
    if (inUse > out.inUse) out = { ...out, inUse, inUseMember: m.name };
  }
  return out;
}

function percent(share: number): string {
  return `${Math.round(share * 1000) / 10}%`;
}
