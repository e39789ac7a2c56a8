import { asList, asMap, type JsonMap } from "../apimachinery/json.js";
import { etcdMetricsPort } from "../manifests/controlplane/endpoints.js";
import {
  type AlarmStep,
  alarmJobName,
  ETCD_ALARM_LABEL,
  ETCD_MEMBER_ID_ANNOTATION,
  ETCD_REPLACEMENT_LABEL,
  ETCD_REPLACEMENT_STEP_LABEL,
  etcdAlarmJob,
  etcdMemberJob,
  REPLACEMENT_REQUEST_ANNOTATION,
  replacementJobName,
  WIPED_POD_ANNOTATION,
} from "../manifests/controlplane/etcd-member-jobs.js";
import {
  etcdMembersConfigMap,
  INITIAL_STATE_KEY,
  REPLACED_KEY,
} from "../manifests/controlplane/etcd-objects.js";
import type { EtcdMemberRecord, EtcdRecord } from "../model/controlplane/credential-record.js";
import {
  type AlarmAction,
  type AlarmJobs,
  type AlarmPlan,
  planEtcdAlarms,
} from "../model/controlplane/etcd-alarm-plan.js";
import {
  type EtcdAction,
  type EtcdMembersInput,
  type EtcdMembersPlan,
  type EtcdMemberView,
  type JobPhase,
  memberNames,
  planEtcdMembers,
  type ReplacementRequest,
  type ReplacementView,
} from "../model/controlplane/etcd-member-plan.js";
import { alarmOf, readEtcdMetrics } from "../model/controlplane/etcd-metrics.js";
import type { HostedControlPlane } from "../model/controlplane/hosted-control-plane.js";
import { compareStrings } from "../model/file-tree.js";
import { oneLine } from "../model/one-line.js";
import type { EtcdMemberReplacement } from "../model/types.js";
import { mapConcurrently } from "../util/map-concurrently.js";
import { CREDENTIALS_FIELD_MANAGER } from "./hosted-secrets.js";
import { MemberApiError, type MemberClient } from "./member-client.js";

/** How many etcds of one host are looked at at once. */
export const ETCD_PASSES = 8;

/**
 * Keeps an etcd of the host (dedicated or shared, once for all the control planes sharing it) whole,
 * after the host's sync: reads each member's pod and, through the host API server's pod proxy, its
 * own metrics and /health (ID, leader, database size and quota, alarms); clears a NOSPACE alarm
 * (model/controlplane/etcd-alarm-plan.ts); and, for a replicated etcd, records the IDs in the host's
 * ConfigMap <etcd>-members and replaces a member NotReady too long, or one an
 * EtcdMemberReplacement of `requests` names, as model/controlplane/etcd-member-plan.ts decides, by
 * Jobs that run etcdctl in the host. The actions are carried out in order and the pass stops at the
 * first that fails (the next pass plans again). Returns what the status branch records of the etcd;
 * never throws for a member that does not answer.
 */
export async function keepEtcdMembers(
  host: MemberClient,
  plane: HostedControlPlane,
  now: number,
  requests: readonly ReplacementRequest[] = [],
): Promise<EtcdRecord> {
  const { etcd } = plane;
  // A single member has no member records or replacement Jobs to read.
  const replicated = etcd.replicas > 1;
  const [pods, configMap, { replacement, leaderMove }, alarmJobs] = await Promise.all([
    etcdPods(host, plane),
    replicated
      ? host.get({
          apiVersion: "v1",
          kind: "ConfigMap",
          namespace: etcd.namespace,
          name: etcdMembersConfigMap(etcd.name),
        })
      : undefined,
    replicated ? replacementOf(host, plane) : { replacement: undefined, leaderMove: undefined },
    alarmJobsOf(host, plane),
  ]);
  const members = await Promise.all(
    memberNames(etcd).map((name) => memberView(host, plane, pods.get(name), name, now)),
  );
  const data = asMap(configMap?.data);
  const knownIds: Record<string, string> = {};
  for (const name of memberNames(etcd)) {
    const id = data[name];
    if (typeof id === "string" && /^[0-9a-f]{1,16}$/.test(id)) knownIds[name] = id;
  }
  const plan = planEtcdMembers({
    etcd,
    members,
    knownIds,
    joinExisting: data[INITIAL_STATE_KEY] === "existing",
    replacement,
    leaderMove,
    requests,
    done: doneRequests(data[REPLACED_KEY]),
    now,
  });
  const alarms = planEtcdAlarms({ enabled: etcd.repair.enabled, members, jobs: alarmJobs, now });
  const did: string[] = [];
  const errors: string[] = [];
  // Each plan's actions in order, stopping at the first that fails (the next pass plans again).
  const steps = [
    ...plan.actions.map((action) => ({ kind: action.kind, run: () => carryOut(host, plane, action) })),
    ...alarms.actions.map((action) => ({ kind: action.kind, run: () => clearAlarm(host, plane, action) })),
  ];
  for (const { kind, run } of steps) {
    try {
      const line = await run();
      if (line) did.push(line);
    } catch (error) {
      errors.push(`${kind}: ${oneLine(error instanceof Error ? error.message : String(error))}`);
      break;
    }
  }
  return etcdRecord(plane, members, plan, alarms, did, errors);
}

// The Jobs of a NOSPACE alarm's clearing, by step, and when the compaction completed.
async function alarmJobsOf(host: MemberClient, plane: HostedControlPlane): Promise<AlarmJobs> {
  const jobs = await listIn(host, "batch/v1", "Job", plane.etcd.namespace, ETCD_ALARM_LABEL);
  const job = (step: AlarmStep) => jobs.find((j) => asMap(j.metadata).name === alarmJobName(step));
  const phase = (step: AlarmStep) => {
    const found = job(step);
    return found ? jobPhase(found) : undefined;
  };
  const compactedAt = Date.parse(String(asMap(job("compact")?.status).completionTime ?? ""));
  return {
    compact: phase("compact"),
    ...(Number.isNaN(compactedAt) ? {} : { compactedAt }),
    defrag: phase("defrag"),
    disarm: phase("disarm"),
  };
}

const CLEAN_LINES = {
  cleared: "NOSPACE cleared: writes are taken again",
  "raised again": "NOSPACE raised again after its disarm: clearing it again",
  "too full": "NOSPACE stays: the data in use still fills the quota; compacting again",
} as const;

// Carries one step of a NOSPACE alarm's clearing out; the commit line for it.
async function clearAlarm(
  host: MemberClient,
  plane: HostedControlPlane,
  action: AlarmAction,
): Promise<string> {
  const namespace = plane.etcd.namespace;
  if (action.kind === "clean") {
    for (const step of ["compact", "defrag", "disarm"] as const)
      await deleteJob(host, namespace, alarmJobName(step));
    return CLEAN_LINES[action.why];
  }
  const revision = action.kind === "compact" ? action.revision : undefined;
  await createJob(host, etcdAlarmJob(plane, action.kind, action.endpoints, revision));
  if (action.kind === "compact")
    return `compacting the history up to revision ${action.revision} to clear NOSPACE`;
  return action.kind === "defrag"
    ? "defragmenting every member to clear NOSPACE"
    : "disarming NOSPACE: every database is within its quota";
}

function etcdRecord(
  plane: HostedControlPlane,
  members: readonly EtcdMemberView[],
  plan: EtcdMembersPlan,
  alarms: AlarmPlan,
  did: readonly string[],
  errors: readonly string[],
): EtcdRecord {
  const record = (m: EtcdMemberView): EtcdMemberRecord => ({
    ready: m.ready === "True",
    ...(m.ready !== "True" ? { notReadySince: new Date(m.readySince).toISOString() } : {}),
    ...(m.id !== undefined ? { id: m.id } : {}),
    ...(m.leader !== undefined ? { leader: m.leader } : {}),
    ...(m.dbSize !== undefined ? { dbSize: m.dbSize } : {}),
    ...(m.dbInUse !== undefined ? { dbInUse: m.dbInUse } : {}),
    ...(m.quota !== undefined ? { quota: m.quota } : {}),
    ...(m.alarm !== undefined ? { alarm: m.alarm } : {}),
  });
  return {
    etcd: `${plane.etcd.namespace}/${plane.etcd.name}`,
    members: Object.fromEntries(members.map((m) => [m.name, record(m)])),
    ...(plan.replacing ? { replacing: plan.replacing } : {}),
    ...(plan.held ? { held: plan.held } : {}),
    ...(Object.keys(plan.requests).length > 0 ? { requests: plan.requests } : {}),
    ...(alarms.clearing || alarms.held
      ? {
          alarm: {
            ...(alarms.clearing ? { clearing: alarms.clearing } : {}),
            ...(alarms.held ? { held: alarms.held } : {}),
          },
        }
      : {}),
    did,
    errors,
    moving: plan.moving || alarms.clearing !== undefined,
  };
}

/** The most request names <etcd>-members' `replaced` is read for. */
const MAX_DONE = 1000;

// The EtcdMemberReplacements carried out, as the host recorded them (names that do not read are left out).
function doneRequests(value: unknown): string[] {
  if (typeof value !== "string") return [];
  return value.split(",", MAX_DONE).filter((name) => /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/.test(name));
}

// The etcd's pods by name (only its StatefulSet's: <name>-<ordinal>).
async function etcdPods(host: MemberClient, plane: HostedControlPlane): Promise<Map<string, JsonMap>> {
  const { etcd } = plane;
  const names = new Set(memberNames(etcd));
  const pods = new Map<string, JsonMap>();
  const list = await listIn(host, "v1", "Pod", etcd.namespace, "app.kubernetes.io/component=etcd");
  for (const pod of list) {
    const name = String(asMap(pod.metadata).name ?? "");
    if (names.has(name)) pods.set(name, pod);
  }
  return pods;
}

// A member as its pod and its own metrics show it; a member that does not answer is its pod alone.
async function memberView(
  host: MemberClient,
  plane: HostedControlPlane,
  pod: JsonMap | undefined,
  name: string,
  now: number,
): Promise<EtcdMemberView> {
  if (!pod) return { name, podUid: undefined, ready: "Unknown", readySince: now };
  const metadata = asMap(pod.metadata);
  const condition = asList(asMap(pod.status).conditions)
    .map((c) => asMap(c))
    .find((c) => c.type === "Ready");
  const ready = condition?.status === "True" || condition?.status === "False" ? condition.status : "Unknown";
  const since = Date.parse(String(condition?.lastTransitionTime ?? metadata.creationTimestamp ?? ""));
  const view: EtcdMemberView = {
    name,
    podUid: String(metadata.uid ?? ""),
    ready,
    // A time that does not read is taken as now: a member is never replaced for a time it did not give.
    readySince: Number.isNaN(since) ? now : since,
  };
  if (ready !== "True") return view;
  const proxy = `/api/v1/namespaces/${plane.etcd.namespace}/pods/${name}:${etcdMetricsPort(plane.etcd)}/proxy`;
  // Both at once; /health answers 503 with the alarm when there is one.
  const [metrics, health] = await Promise.all([
    host
      .raw("GET", `${proxy}/metrics`)
      .then((text) => (typeof text === "string" ? readEtcdMetrics(text) : {}))
      .catch(() => ({})),
    host
      .raw("GET", `${proxy}/health`)
      .then((answer) => JSON.stringify(answer))
      .catch((error: unknown) => (error instanceof MemberApiError ? error.message : "")),
  ]);
  const alarm = alarmOf(health);
  return { ...view, ...metrics, ...(alarm ? { alarm } : {}) };
}

// The replacement under way, from its remove and add Jobs (the first member's, when there would be
// more), and the leadership move that precedes one, from its Job.
async function replacementOf(
  host: MemberClient,
  plane: HostedControlPlane,
): Promise<{ replacement: ReplacementView | undefined; leaderMove: EtcdMembersInput["leaderMove"] }> {
  const jobs = await listIn(host, "batch/v1", "Job", plane.etcd.namespace, ETCD_REPLACEMENT_LABEL);
  const labelsOf = (job: JsonMap) => asMap(asMap(job.metadata).labels);
  const moving = jobs
    .filter((job) => labelsOf(job)[ETCD_REPLACEMENT_STEP_LABEL] === "move-leader")
    .map((job) => ({ member: String(labelsOf(job)[ETCD_REPLACEMENT_LABEL]), phase: jobPhase(job) }))
    .sort((a, b) => compareStrings(a.member, b.member))[0];
  return { replacement: replacementFrom(jobs), leaderMove: moving };
}

function replacementFrom(jobs: readonly JsonMap[]): ReplacementView | undefined {
  const byMember = new Map<string, JsonMap[]>();
  for (const job of jobs) {
    const labels = asMap(asMap(job.metadata).labels);
    const member = labels[ETCD_REPLACEMENT_LABEL];
    const kind = labels[ETCD_REPLACEMENT_STEP_LABEL];
    if (typeof member !== "string" || (kind !== "remove" && kind !== "add")) continue;
    byMember.set(member, [...(byMember.get(member) ?? []), job]);
  }
  const [member] = [...byMember.keys()].sort(compareStrings);
  if (member === undefined) return undefined;
  const step = (name: string) =>
    byMember.get(member)?.find((j) => asMap(asMap(j.metadata).labels)[ETCD_REPLACEMENT_STEP_LABEL] === name);
  const remove = step("remove");
  const add = step("add");
  const id = asMap(asMap((remove ?? add)?.metadata).annotations)[ETCD_MEMBER_ID_ANNOTATION];
  if (typeof id !== "string") return undefined;
  const wiped = asMap(asMap(add?.metadata).annotations)[WIPED_POD_ANNOTATION];
  const request = asMap(asMap((remove ?? add)?.metadata).annotations)[REPLACEMENT_REQUEST_ANNOTATION];
  return {
    member,
    id,
    // Only an add Job left (the remove Job deleted by hand): the removal was done.
    remove: remove ? jobPhase(remove) : "Complete",
    ...(add ? { add: jobPhase(add) } : {}),
    ...(typeof wiped === "string" ? { wipedPod: wiped } : {}),
    ...(typeof request === "string" ? { request } : {}),
  };
}

// The objects of a kind in one namespace that a label selector picks (an etcd has a handful).
async function listIn(
  host: MemberClient,
  apiVersion: string,
  kind: string,
  namespace: string,
  labelSelector: string,
): Promise<JsonMap[]> {
  const out: JsonMap[] = [];
  await host.pages(apiVersion, kind, { namespace, labelSelector, limit: 100 }, (items) => {
    if (out.length < MAX_LISTED) out.push(...items.slice(0, MAX_LISTED - out.length));
  });
  return out;
}

/** The most pods or Jobs of one etcd's namespace a pass reads. */
const MAX_LISTED = 500;

function jobPhase(job: JsonMap): JobPhase {
  const status = asMap(job.status);
  const conditions = asList(status.conditions).map((c) => asMap(c));
  const is = (type: string) => conditions.some((c) => c.type === type && c.status === "True");
  if (is("Complete") || (typeof status.succeeded === "number" && status.succeeded > 0)) return "Complete";
  if (is("Failed")) return "Failed";
  return "Running";
}

// Writes what is known of the members into <etcd>-members.
async function record(
  host: MemberClient,
  { etcd }: HostedControlPlane,
  action: Extract<EtcdAction, { kind: "record" }>,
): Promise<void> {
  await host.apply(
    {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: {
        name: etcdMembersConfigMap(etcd.name),
        namespace: etcd.namespace,
        labels: { "app.kubernetes.io/component": "etcd" },
      },
      data: {
        ...action.ids,
        ...(action.joinExisting ? { [INITIAL_STATE_KEY]: "existing" } : {}),
        ...(action.done.length > 0 ? { [REPLACED_KEY]: action.done.join(",") } : {}),
      },
    },
    true,
    CREDENTIALS_FIELD_MANAGER,
  );
}

// Starts a replacement's remove or add Job (once: a Job already there is that step's).
async function startJob(
  host: MemberClient,
  plane: HostedControlPlane,
  action: Extract<EtcdAction, { kind: "remove" | "add" }>,
): Promise<string> {
  const { kind, member, id, endpoints, request } = action;
  await createJob(host, etcdMemberJob(plane, kind, member, id, endpoints, request));
  const why = request ? `as EtcdMemberReplacement ${request} asks` : "NotReady";
  return kind === "remove"
    ? `removing ${member} (member ${id}), ${why}, from the etcd to replace it`
    : `adding ${member} back to the etcd`;
}

// Creates a Job once: one already there (a pass before this one made it) is that step's.
async function createJob(host: MemberClient, job: JsonMap): Promise<void> {
  await host.create(job, CREDENTIALS_FIELD_MANAGER).catch((error: unknown) => {
    if (!(error instanceof MemberApiError && error.code === 409)) throw error;
  });
}

// Deletes a Job by name, the one read (by uid), when it is there.
async function deleteJob(host: MemberClient, namespace: string, name: string): Promise<void> {
  const address = { apiVersion: "batch/v1", kind: "Job", namespace, name };
  const live = await host.get(address);
  if (live) await host.delete(address, String(asMap(live.metadata).uid ?? ""));
}

// Carries one action out; the line the commit message gets for it, if any.
async function carryOut(
  host: MemberClient,
  plane: HostedControlPlane,
  action: EtcdAction,
): Promise<string | undefined> {
  const { etcd } = plane;
  const namespace = etcd.namespace;
  switch (action.kind) {
    case "record":
      await record(host, plane, action);
      return undefined;
    case "remove":
    case "add":
      return startJob(host, plane, action);
    case "moveLeader": {
      const { member, id, to, toId, endpoints, request } = action;
      await createJob(host, etcdMemberJob(plane, "move-leader", member, id, endpoints, request, toId));
      const why = request ? `, as EtcdMemberReplacement ${request} asks` : "";
      return `moving leadership from ${member} to ${to} (member ${toId}) before replacing it${why}`;
    }
    case "forgetMove":
      await deleteJob(host, namespace, replacementJobName(action.member, "move-leader", action.id));
      return `${action.member} leads the etcd again: moving leadership again`;
    case "wipe": {
      // The pod's uid goes on the add Job first: a pass that stops after it deletes only that pod.
      await host.mergePatch(
        {
          apiVersion: "batch/v1",
          kind: "Job",
          namespace,
          name: replacementJobName(action.member, "add", action.id),
        },
        { metadata: { annotations: { [WIPED_POD_ANNOTATION]: action.podUid } } },
        CREDENTIALS_FIELD_MANAGER,
      );
      const claim = {
        apiVersion: "v1",
        kind: "PersistentVolumeClaim",
        namespace,
        name: `data-${action.member}`,
      };
      const live = await host.get(claim);
      if (live) await host.delete(claim, String(asMap(live.metadata).uid ?? ""));
      await host.delete({ apiVersion: "v1", kind: "Pod", namespace, name: action.member }, action.podUid);
      return `starting ${action.member} on a new volume to join the etcd`;
    }
    case "finish":
      for (const step of ["move-leader", "remove", "add"] as const)
        await deleteJob(host, namespace, replacementJobName(action.member, step, action.id));
      return `${action.member} replaced: it joined the etcd and is Ready`;
  }
}

/**
 * Every etcd of the control planes `planes` (one pass per etcd, a shared one once; none of a control
 * plane stopped for a restore), by hosted cluster: what keepEtcdMembers recorded, or the error that
 * stopped its pass. An etcd's requests are the EtcdMemberReplacements naming any cluster whose data
 * it keeps.
 */
export async function keepHostedEtcds(
  host: MemberClient,
  planes: readonly HostedControlPlane[],
  now: number,
  replacements: readonly EtcdMemberReplacement[] = [],
): Promise<Map<string, EtcdRecord>> {
  const byEtcd = new Map<string, HostedControlPlane[]>();
  for (const plane of planes) {
    if (plane.stopped) continue;
    const key = `${plane.etcd.namespace}/${plane.etcd.name}`;
    byEtcd.set(key, [...(byEtcd.get(key) ?? []), plane]);
  }
  const out = new Map<string, EtcdRecord>();
  // ETCD_PASSES etcds at a time: each pass is a handful of reads (more with more members).
  await mapConcurrently([...byEtcd], ETCD_PASSES, async ([key, sharing]) => {
    const first = sharing[0] as HostedControlPlane;
    const clusters = new Set(sharing.map((plane) => plane.cluster));
    const requests = replacements
      .filter((r) => clusters.has(r.spec.cluster))
      .map((r) => ({ name: r.metadata.name, member: r.spec.member }));
    const record = await keepEtcdMembers(host, first, now, requests).catch(
      (error: unknown): EtcdRecord => ({
        etcd: key,
        members: {},
        did: [],
        errors: [oneLine(error instanceof Error ? error.message : String(error))],
        moving: false,
      }),
    );
    for (const plane of sharing) out.set(plane.cluster, record);
  });
  return out;
}
