import { compareStrings } from "../file-tree.js";
import type { ResolvedEtcd } from "./hosted-control-plane.js";

/** One member of a replicated etcd as the host shows it: its pod, and what its own metrics say. */
export interface EtcdMemberView {
  /** The member's name, its pod's: `<etcd>-<ordinal>`. */
  readonly name: string;
  /** Its pod's uid; undefined while the pod does not exist. */
  readonly podUid: string | undefined;
  /** The pod's Ready condition; Unknown when it has none or there is no pod. */
  readonly ready: "True" | "False" | "Unknown";
  /** Since when (ms) the pod has had that readiness: the condition's lastTransitionTime, else its creation. */
  readonly readySince: number;
  /** Its etcd member ID (hex), as its metrics say; undefined when they could not be read. */
  readonly id?: string | undefined;
  readonly leader?: boolean | undefined;
  /** The database's size on disk, the part in use, and the quota (bytes). */
  readonly dbSize?: number | undefined;
  readonly dbInUse?: number | undefined;
  readonly quota?: number | undefined;
  /** The newest revision of its key-value store. */
  readonly revision?: number | undefined;
  /** An alarm its /health reports (NOSPACE, CORRUPT). */
  readonly alarm?: string | undefined;
}

/** Where a replacement's Jobs stand (they are the replacement's memory between passes). */
export type JobPhase = "Running" | "Complete" | "Failed";

/** A replacement under way, as its Jobs in the host say. */
export interface ReplacementView {
  readonly member: string;
  /** The member ID removed: the one the member had. */
  readonly id: string;
  readonly remove: JobPhase;
  readonly add?: JobPhase | undefined;
  /** The uid of the member's pod that was deleted with its volume (recorded before deleting it). */
  readonly wipedPod?: string | undefined;
  /** The EtcdMemberReplacement that asked for it; undefined when the member was NotReady too long. */
  readonly request?: string | undefined;
}

/** An EtcdMemberReplacement of the fleet repo: replace this member once, Ready or not. */
export interface ReplacementRequest {
  readonly name: string;
  readonly member: string;
}

/** Where a request stands: carried out, being carried out, or waiting (for another replacement, or held). */
export type RequestState = "Done" | "Replacing" | "Waiting";

export interface EtcdMembersInput {
  readonly etcd: Pick<ResolvedEtcd, "name" | "replicas" | "repair">;
  readonly members: readonly EtcdMemberView[];
  /** The member IDs last seen, by member (the host's ConfigMap <etcd>-members). */
  readonly knownIds: Readonly<Record<string, string>>;
  /** Whether that ConfigMap tells members started on an empty volume to join (initial-cluster-state existing). */
  readonly joinExisting: boolean;
  readonly replacement: ReplacementView | undefined;
  /** The fleet repo's EtcdMemberReplacements of this etcd. */
  readonly requests: readonly ReplacementRequest[];
  /** The requests carried out, as the host's ConfigMap <etcd>-members records them. */
  readonly done: readonly string[];
  /** A leadership move's Job, when there is one: the member it moves leadership from, and its phase. */
  readonly leaderMove?: { readonly member: string; readonly phase: JobPhase } | undefined;
  readonly now: number;
}

/** What to do to a replicated etcd in this pass. */
export type EtcdAction =
  /** Write what is known of the members into the host's ConfigMap <etcd>-members. */
  | {
      readonly kind: "record";
      readonly ids: Readonly<Record<string, string>>;
      readonly joinExisting: boolean;
      /** The requests carried out (only those still in the fleet repo), sorted. */
      readonly done: readonly string[];
    }
  /** Run `etcdctl member remove <id>` against the ready members. */
  | {
      readonly kind: "remove";
      readonly member: string;
      readonly id: string;
      readonly endpoints: readonly string[];
      /** The EtcdMemberReplacement it is for, if one asked. */
      readonly request?: string | undefined;
    }
  /** Run `etcdctl member add <member>` with its peer URL against the ready members. */
  | {
      readonly kind: "add";
      readonly member: string;
      readonly id: string;
      readonly endpoints: readonly string[];
      readonly request?: string | undefined;
    }
  /**
   * Run `etcdctl move-leader <toId>` against the ready members: the member to replace leads the etcd,
   * and is removed only once another leads it (so its removal costs no election).
   */
  | {
      readonly kind: "moveLeader";
      readonly member: string;
      readonly id: string;
      readonly to: string;
      readonly toId: string;
      readonly endpoints: readonly string[];
      readonly request?: string | undefined;
    }
  /** Delete a leadership move's Job that completed while the member still leads: the next pass moves it again. */
  | { readonly kind: "forgetMove"; readonly member: string; readonly id: string }
  /** Record the pod's uid on the replacement, then delete the member's volume claim and that pod. */
  | { readonly kind: "wipe"; readonly member: string; readonly id: string; readonly podUid: string }
  /** The member is back, Ready: remove the replacement's Jobs. */
  | { readonly kind: "finish"; readonly member: string; readonly id: string };

/** One etcd's pass: what to do, and what the status branch says of it. */
export interface EtcdMembersPlan {
  readonly actions: readonly EtcdAction[];
  /** The member being replaced and its step, when one is. */
  readonly replacing?: { readonly member: string; readonly step: string } | undefined;
  /** Why a member that needs replacing is not (quorum, an unknown ID, a failed Job). */
  readonly held?: string | undefined;
  /** Members and how long each has been NotReady, for the status (ms). */
  readonly notReady: Readonly<Record<string, number>>;
  /** Each EtcdMemberReplacement of this etcd, by name, and where it stands. */
  readonly requests: Readonly<Record<string, RequestState>>;
  /** A replacement is under way or a member is NotReady: look again soon. */
  readonly moving: boolean;
}

/** The most members of `replicas` that may be down with the etcd still keeping quorum. */
export function quorumOf(replicas: number): number {
  return Math.floor(replicas / 2) + 1;
}

/**
 * Plans one pass over a replicated etcd's members. Pure.
 *
 * - **One member**: only how long it has been NotReady; it is never replaced or recorded.
 * - **Record**: each member's ID as its own metrics report it is kept in the host (the next pass, and a
 *   controller restarted, know which ID a member that stops answering had); once every member has
 *   reported one the etcd has formed, and members that start on an empty volume are told to join it
 *   (initial-cluster-state existing) instead of forming a new one.
 * - **Replace** a member NotReady for `repair.notReadyFor`, one at a time, only when the ready others
 *   keep quorum and its ID is known: remove it from the etcd, add it back under its name, then delete
 *   its volume claim and pod so that the StatefulSet starts it on a new, empty volume, from which it
 *   catches up with the others. Each step is a Job (remove, add) or a write recorded on the add Job
 *   before it is made, so a pass that stops halfway is taken up by the next. A failed Job holds the
 *   replacement, named in the status, until it is deleted.
 * - **Leadership first**: a Ready member to replace that leads the etcd hands leadership to another
 *   Ready member (`etcdctl move-leader`, a Job) before it is removed, so the removal costs no election.
 * - **Replace on request**: an EtcdMemberReplacement of the fleet repo replaces its member the same
 *   way, Ready or not and whether repair is on or not, under the same rules, after any member due for
 *   repair. Once the member is back, every request for it is recorded as done in the host (before its
 *   Jobs go, so a pass that stops in between never replaces it twice); a done request is not carried
 *   out again while its file stays.
 */
export function planEtcdMembers(input: EtcdMembersInput): EtcdMembersPlan {
  const { members, now } = input;
  const notReady: Record<string, number> = {};
  for (const m of members) if (m.ready !== "True") notReady[m.name] = Math.max(0, now - m.readySince);
  // One member has no others to be replaced through, and nothing to record for them.
  if (input.etcd.replicas < 2) return { actions: [], notReady, requests: {}, moving: false };
  const names = new Set(input.requests.map((r) => r.name));
  const done = new Set(input.done.filter((name) => names.has(name)));
  const step = input.replacement
    ? continueReplacement(input, input.replacement)
    : startReplacement(input, notReady, done);
  // A member back after its replacement: every request for it was carried out.
  const finished = step.actions.find((a) => a.kind === "finish")?.member;
  for (const request of input.requests) if (request.member === finished) done.add(request.name);
  const record = recordAction(input, [...done].sort(compareStrings));
  const requests = requestStates(input.requests, done, step.replacing?.member);
  return {
    actions: [...(record ? [record] : []), ...step.actions],
    ...(step.replacing ? { replacing: step.replacing } : {}),
    ...(step.held ? { held: step.held } : {}),
    notReady,
    requests,
    moving:
      step.replacing !== undefined ||
      Object.keys(notReady).length > 0 ||
      Object.values(requests).some((state) => state !== "Done"),
  };
}

type Step = Pick<EtcdMembersPlan, "replacing" | "held"> & { readonly actions: EtcdAction[] };

// Each request by name: done, its member being replaced, or waiting.
function requestStates(
  requests: readonly ReplacementRequest[],
  done: ReadonlySet<string>,
  replacing: string | undefined,
): Record<string, RequestState> {
  const states: Record<string, RequestState> = {};
  for (const { name, member } of [...requests].sort((a, b) => compareStrings(a.name, b.name)))
    states[name] = done.has(name) ? "Done" : member === replacing ? "Replacing" : "Waiting";
  return states;
}

// The IDs members report now over those last seen, whether the etcd has formed, and the requests done.
function recordAction(input: EtcdMembersInput, done: readonly string[]): EtcdAction | undefined {
  const ids: Record<string, string> = { ...input.knownIds };
  for (const m of input.members) if (m.id !== undefined && m.ready === "True") ids[m.name] = m.id;
  const formed = memberNames(input.etcd).every((name) => ids[name] !== undefined);
  const joinExisting = input.joinExisting || formed;
  const same =
    joinExisting === input.joinExisting &&
    JSON.stringify(sorted(ids)) === JSON.stringify(sorted(input.knownIds)) &&
    JSON.stringify(done) === JSON.stringify([...input.done].sort(compareStrings));
  return same ? undefined : { kind: "record", ids: sorted(ids), joinExisting, done };
}

// What starts a replacement: a member NotReady past repair.notReadyFor (with a request for it, if
// any), else the first request not done.
function nextCandidate(
  input: EtcdMembersInput,
  notReady: Readonly<Record<string, number>>,
  done: ReadonlySet<string>,
): { readonly member: string; readonly request?: string | undefined } | undefined {
  const { etcd } = input;
  const pending = input.requests
    .filter((r) => !done.has(r.name))
    .sort((a, b) => compareStrings(a.name, b.name));
  const due = etcd.repair.enabled
    ? Object.entries(notReady)
        .filter(([, ms]) => ms >= etcd.repair.notReadyForMs)
        .map(([name]) => name)
        .sort(compareStrings)
    : [];
  const member = due[0];
  if (member !== undefined) return { member, request: pending.find((r) => r.member === member)?.name };
  const [first] = pending;
  return first ? { member: first.member, request: first.name } : undefined;
}

function startReplacement(
  input: EtcdMembersInput,
  notReady: Readonly<Record<string, number>>,
  done: ReadonlySet<string>,
): Step {
  const { etcd, members } = input;
  const next = nextCandidate(input, notReady, done);
  if (next === undefined) return { actions: [] };
  const { member, request } = next;
  const why = request
    ? `EtcdMemberReplacement ${request} asks to replace ${member}`
    : `${member} is NotReady`;
  const ready = members.filter((m) => m.ready === "True" && m.name !== member);
  const quorum = quorumOf(etcd.replicas);
  if (ready.length < quorum)
    return {
      actions: [],
      held: `${why}, but only ${ready.length} other member${ready.length === 1 ? " is" : "s are"} Ready and the etcd of ${etcd.replicas} needs ${quorum} to replace one`,
    };
  const id = input.knownIds[member];
  if (id === undefined)
    return {
      actions: [],
      held: `${why}, and its member ID was never seen (it never reported Ready): it is not replaced`,
    };
  if (members.some((m) => m.name === member && m.ready === "True" && m.leader === true))
    return moveLeadership(input, { member, id, request, why }, ready);
  return {
    actions: [
      { kind: "remove", member, id, endpoints: ready.map((m) => m.name), ...(request ? { request } : {}) },
    ],
    replacing: { member, step: "removing" },
  };
}

// The member to replace leads the etcd: hand leadership to the first other Ready member whose ID is
// known, by a Job; the removal starts once the member's metrics say it no longer leads.
function moveLeadership(
  input: EtcdMembersInput,
  { member, id, request, why }: { member: string; id: string; request: string | undefined; why: string },
  ready: readonly EtcdMemberView[],
): Step {
  const replacing = { member, step: "moving leadership" };
  const to = ready
    .map((m) => ({ name: m.name, id: m.id ?? input.knownIds[m.name] }))
    .find((m): m is { name: string; id: string } => m.id !== undefined);
  if (to === undefined)
    return {
      actions: [],
      held: `${why}, but it leads the etcd and no other Ready member's ID is known to hand leadership to`,
    };
  const phase = input.leaderMove?.member === member ? input.leaderMove.phase : undefined;
  if (phase === "Failed")
    return {
      actions: [],
      replacing: { member, step: "moving leadership failed" },
      held: `replacing ${member}: the move-leader Job failed; delete the etcd's replacement Jobs (gitfleet.io/etcd-replacement=${member}) to start again`,
    };
  if (phase === "Running") return { actions: [], replacing };
  if (phase === "Complete") return { actions: [{ kind: "forgetMove", member, id }], replacing };
  return {
    actions: [
      {
        kind: "moveLeader",
        member,
        id,
        to: to.name,
        toId: to.id,
        endpoints: [member, ...ready.map((m) => m.name)],
        ...(request ? { request } : {}),
      },
    ],
    replacing,
  };
}

function continueReplacement(input: EtcdMembersInput, replacement: ReplacementView): Step {
  const { member, id } = replacement;
  const pod = input.members.find((m) => m.name === member);
  const ready = input.members.filter((m) => m.ready === "True" && m.name !== member).map((m) => m.name);
  const failed = (job: string) => ({
    actions: [],
    replacing: { member, step: `${job} failed` },
    held: `replacing ${member}: the ${job} Job failed; delete the etcd's replacement Jobs (gitfleet.io/etcd-replacement=${member}) to start again`,
  });
  if (replacement.remove === "Failed") return failed("member remove");
  if (replacement.remove === "Running") return { actions: [], replacing: { member, step: "removing" } };
  if (replacement.add === undefined)
    return ready.length === 0
      ? {
          actions: [],
          replacing: { member, step: "removed" },
          held: `replacing ${member}: no other member is Ready to add it back through`,
        }
      : {
          actions: [
            {
              kind: "add",
              member,
              id,
              endpoints: ready,
              ...(replacement.request ? { request: replacement.request } : {}),
            },
          ],
          replacing: { member, step: "adding" },
        };
  if (replacement.add === "Failed") return failed("member add");
  if (replacement.add === "Running") return { actions: [], replacing: { member, step: "adding" } };
  // Added: its old pod and volume go (once — a pod with another uid is the new one).
  if (
    pod?.podUid !== undefined &&
    (replacement.wipedPod === undefined || replacement.wipedPod === pod.podUid)
  )
    return {
      actions: [{ kind: "wipe", member, id, podUid: pod.podUid }],
      replacing: { member, step: "starting on a new volume" },
    };
  if (pod?.ready === "True")
    return { actions: [{ kind: "finish", member, id }], replacing: { member, step: "joined" } };
  return { actions: [], replacing: { member, step: "starting on a new volume" } };
}

/** The members a StatefulSet of `replicas` has: <name>-0 … */
export function memberNames(etcd: Pick<ResolvedEtcd, "name" | "replicas">): string[] {
  return Array.from({ length: etcd.replicas }, (_, i) => `${etcd.name}-${i}`);
}

function sorted(ids: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(ids).sort(([a], [b]) => compareStrings(a, b)));
}
