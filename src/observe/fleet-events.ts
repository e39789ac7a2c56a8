import { asList, asMap, type Json } from "../apimachinery/json.js";
import { readStatusYaml } from "../status/status-yaml.js";
import { CERTIFICATE_WARNING_MS } from "../sync/sync-result.js";
import { timelineEvent } from "./timeline.js";

/** What people are told about: each is a fact a status commit recorded. */
export const FLEET_EVENT_TYPES = [
  "sourceInvalid",
  "failover",
  "clusterNotReady",
  "clusterReady",
  "rolloutHalted",
  "pruneBlocked",
  "migrationBatchFailed",
  "migrationBatchSucceeded",
  "autoscale",
  "certificateExpiring",
  "etcdAlarm",
] as const;
export type FleetEventType = (typeof FLEET_EVENT_TYPES)[number];

/** One event, as every sink gets it. */
export interface FleetEvent {
  /** The same for the same fact however often it is derived: the idempotency key of every delivery. */
  readonly id: string;
  readonly type: FleetEventType;
  /** When the status commit recording it was written (ISO). */
  readonly time: string;
  /** One line for people. */
  readonly summary: string;
  readonly statusCommit: string;
  readonly sourceCommit?: string;
  readonly cluster?: string;
  readonly app?: string;
  readonly migration?: string;
  readonly batch?: string;
}

/** A status file a commit changed: its text before and after (undefined: absent). */
export interface StatusFileChange {
  readonly path: string;
  readonly before?: string | undefined;
  readonly after?: string | undefined;
}

/** A status commit: its id, time, message and the status files it changed. */
export interface StatusCommitChange {
  readonly commit: string;
  readonly time: string;
  readonly message: string;
  readonly files: readonly StatusFileChange[];
}

type Base = Pick<FleetEvent, "time" | "statusCommit" | "sourceCommit">;

/**
 * The events a status commit records, from its message (its event kind: an invalid source commit, a
 * failover, an autoscaling step) and from the status files it changed: a cluster's condition that
 * flipped, a prune newly blocked, an app's rollout newly halted in a cluster, a migration batch that
 * reached Failed or Succeeded, a hosted control plane's credential newly recorded that expires within
 * two weeks of the commit, an etcd member of a hosted control plane newly raising an alarm. Pure: the
 * same commit always gives the same events with the same ids.
 */
export function fleetEvents(change: StatusCommitChange): FleetEvent[] {
  const timeline = timelineEvent(change.commit, change.time, change.message);
  const source = timeline.sourceCommit;
  const base: Base = {
    time: change.time,
    statusCommit: change.commit,
    ...(source ? { sourceCommit: source } : {}),
  };
  const events: FleetEvent[] = [];
  const fromKind: Partial<Record<string, FleetEventType>> = {
    invalid: "sourceInvalid",
    failover: "failover",
    scale: "autoscale",
  };
  const type = fromKind[timeline.kind];
  if (type) events.push({ ...base, id: `${change.commit}/${type}`, type, summary: timeline.subject });
  for (const file of change.files) events.push(...fileEvents(file, base));
  return events;
}

function fileEvents(file: StatusFileChange, base: Base): FleetEvent[] {
  const cluster = /^status\/clusters\/([^/]+)\.yaml$/.exec(file.path)?.[1];
  if (cluster) return clusterEvents(cluster, file, base);
  const app = /^status\/apps\/(?:[0-9a-f]{2}\/)?([^/]+)\.yaml$/.exec(file.path)?.[1];
  if (app) return appEvents(app, file, base);
  const migration = /^status\/migrations\/([^/]+)\.yaml$/.exec(file.path)?.[1];
  if (migration) return migrationEvents(migration, file, base);
  return [];
}

const observedOf = (text: string | undefined) =>
  asMap(asMap(readStatusYaml(text) as Json | undefined).observed);

function clusterEvents(cluster: string, file: StatusFileChange, base: Base): FleetEvent[] {
  const before = observedOf(file.before);
  const after = observedOf(file.after);
  const events: FleetEvent[] = [];
  const wasReady = asMap(before.condition).ready;
  const ready = asMap(after.condition).ready;
  if (typeof ready === "boolean" && ready !== wasReady && (wasReady !== undefined || !ready)) {
    const type = ready ? "clusterReady" : "clusterNotReady";
    const why = text(asMap(after.condition).lastError) ?? text(asMap(after.condition).reason);
    events.push({
      ...base,
      id: `${base.statusCommit}/${type}/${cluster}`,
      type,
      cluster,
      summary: `${cluster} is ${ready ? "Ready" : "NotReady"}${!ready && why ? `: ${why}` : ""}`,
    });
  }
  const token = text(asMap(after.pruneBlocked).token);
  if (token && token !== text(asMap(before.pruneBlocked).token))
    events.push({
      ...base,
      id: `${base.statusCommit}/pruneBlocked/${cluster}/${token}`,
      type: "pruneBlocked",
      cluster,
      summary: `prune blocked in ${cluster}: ${asList(asMap(after.pruneBlocked).reasons).map(String).join("; ")}; allow it with ${token} in spec.pruning.allowPrune`,
    });
  events.push(...certificateEvents(cluster, before, after, base));
  events.push(...memberCredentialEvents(cluster, before, after, base));
  events.push(...etcdAlarmEvents(cluster, before, after, base));
  return events;
}

/**
 * An alarm an etcd member of a hosted control plane raises that the host's record did not have (a
 * member of a shared etcd is told once per cluster in it: each is refused writes alike). The hosted
 * cluster is told about, not failed over: it still answers reads and /readyz.
 */
function etcdAlarmEvents(
  host: string,
  before: Record<string, Json>,
  after: Record<string, Json>,
  base: Base,
): FleetEvent[] {
  const had = new Set(etcdAlarms(before).map((a) => `${a.cluster}/${a.member}/${a.alarm}`));
  return etcdAlarms(after)
    .filter((a) => !had.has(`${a.cluster}/${a.member}/${a.alarm}`))
    .map((a) => ({
      ...base,
      id: `${base.statusCommit}/etcdAlarm/${a.cluster}/${a.member}/${a.alarm}`,
      type: "etcdAlarm" as const,
      cluster: a.cluster,
      summary: `${a.cluster}: etcd ${a.etcd} (hosted on ${host}) member ${a.member} raised ${a.alarm}${ALARM_MEANS[a.alarm] ?? ""}`,
    }));
}

const ALARM_MEANS: Readonly<Record<string, string>> = {
  NOSPACE:
    ": its database reached its quota, and it refuses writes until space is freed (compact, defragment) and the alarm disarmed",
  CORRUPT:
    ": its data differs from the other members'; replace it (EtcdMemberReplacement) or restore the etcd",
};

function etcdAlarms(observed: Record<string, Json>) {
  return Object.entries(asMap(observed.hostedControlPlanes)).flatMap(([cluster, entry]) => {
    const etcd = asMap(asMap(entry).etcd);
    return Object.entries(asMap(etcd.members)).flatMap(([member, record]) => {
      // As the host's pass reads it off the member: an alarm's name, capital letters only.
      const alarm = text(asMap(record).alarm);
      return alarm && /^[A-Z]{1,32}$/.test(alarm)
        ? [{ cluster, etcd: text(etcd.name) ?? "", member, alarm }]
        : [];
    });
  });
}

// The member's own credential, when a sync first finds it expiring (or a renewed one still is).
function memberCredentialEvents(
  cluster: string,
  before: Record<string, Json>,
  after: Record<string, Json>,
  base: Base,
): FleetEvent[] {
  const now = asMap(after.credential);
  const then = asMap(before.credential);
  const fingerprint = text(now.fingerprint);
  const notAfter = text(now.notAfter);
  if (now.expiring !== true || !fingerprint || !notAfter) return [];
  if (then.expiring === true && text(then.fingerprint) === fingerprint) return [];
  return [
    {
      ...base,
      id: `${base.statusCommit}/certificateExpiring/${fingerprint}`,
      type: "certificateExpiring" as const,
      cluster,
      summary: `${cluster}: gitfleet's ${text(now.kind) === "token" ? "token" : "client certificate"} expires ${notAfter}; renew it (gitfleet join ${cluster})`,
    },
  ];
}

// Credentials of hosted control planes newly recorded (by fingerprint) that expire within two weeks.
function certificateEvents(
  host: string,
  before: Record<string, Json>,
  after: Record<string, Json>,
  base: Base,
): FleetEvent[] {
  const seen = new Set(credentialEntries(before).map((c) => c.fingerprint));
  const at = Date.parse(base.time);
  return credentialEntries(after)
    .filter((c) => !seen.has(c.fingerprint) && Date.parse(c.notAfter) - at < CERTIFICATE_WARNING_MS)
    .map((c) => ({
      ...base,
      id: `${base.statusCommit}/certificateExpiring/${c.fingerprint}`,
      type: "certificateExpiring" as const,
      cluster: c.cluster,
      summary: `${c.cluster}: ${c.name} (hosted on ${host}) expires ${c.notAfter}`,
    }));
}

function credentialEntries(observed: Record<string, Json>) {
  return Object.entries(asMap(observed.hostedControlPlanes)).flatMap(([cluster, entry]) =>
    Object.entries(asMap(asMap(entry).credentials)).flatMap(([name, record]) => {
      const fingerprint = text(asMap(record).fingerprint);
      const notAfter = text(asMap(record).notAfter);
      return fingerprint && notAfter && !Number.isNaN(Date.parse(notAfter))
        ? [{ cluster, name, fingerprint, notAfter }]
        : [];
    }),
  );
}

function appEvents(app: string, file: StatusFileChange, base: Base): FleetEvent[] {
  const before = observedOf(file.before);
  return Object.entries(observedOf(file.after)).flatMap(([cluster, entry]) => {
    const halted = text(asMap(entry).rollout);
    if (!halted?.startsWith("rollout halted") || text(asMap(before[cluster]).rollout) === halted) return [];
    return [
      {
        ...base,
        id: `${base.statusCommit}/rolloutHalted/${app}/${cluster}`,
        type: "rolloutHalted" as const,
        app,
        cluster,
        summary: `${app} in ${cluster}: ${halted}`,
      },
    ];
  });
}

function migrationEvents(migration: string, file: StatusFileChange, base: Base): FleetEvent[] {
  const states = (text: string | undefined) =>
    new Map(
      asList(asMap(readStatusYaml(text) as Json | undefined).batches).map((b) => [
        String(asMap(b).name),
        { state: String(asMap(b).state), reason: asMap(b).reason },
      ]),
    );
  const before = states(file.before);
  return [...states(file.after)].flatMap(([batch, { state, reason }]) => {
    if ((state !== "Failed" && state !== "Succeeded") || before.get(batch)?.state === state) return [];
    const type = state === "Failed" ? "migrationBatchFailed" : "migrationBatchSucceeded";
    const why = text(reason);
    return [
      {
        ...base,
        id: `${base.statusCommit}/${type}/${migration}/${batch}`,
        type,
        migration,
        batch,
        summary: `migration ${migration}, batch ${batch}: ${state}${why ? ` (${why})` : ""}`,
      } satisfies FleetEvent,
    ];
  });
}

function text(value: Json | undefined): string | undefined {
  return typeof value === "string" && value !== "" ? value.slice(0, 500) : undefined;
}
