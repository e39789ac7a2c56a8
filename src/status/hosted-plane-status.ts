import type { JsonMap } from "../apimachinery/json.js";
import type {
  CredentialRecord,
  EtcdMemberRecord,
  EtcdRecord,
  HostedCredentials,
  NodePoolRecord,
  ServingCsrRecord,
} from "../model/controlplane/credential-record.js";
import { compareStrings } from "../model/file-tree.js";

/**
 * What a host's pass over the control planes it runs says in the status branch and in commit
 * messages: per hosted cluster, its credentials (fingerprints and expiries, never a key), kubelet
 * serving CSRs, node pools and replicated etcd.
 */
export function hostedCredentialsRecord(credentials: HostedCredentials): JsonMap {
  const out: Record<string, JsonMap> = {};
  for (const [cluster, entry] of Object.entries(credentials).sort(([a], [b]) => compareStrings(a, b))) {
    if ("error" in entry) {
      out[cluster] = { error: entry.error };
      continue;
    }
    const records: Record<string, JsonMap> = {};
    for (const record of entry.records)
      records[`${record.namespace}/${record.name}`] = {
        fingerprint: record.fingerprint,
        ...(record.notAfter ? { notAfter: record.notAfter } : {}),
      };
    out[cluster] = {
      credentials: records,
      ...passErrors(entry),
      ...servingCsrsRecord(entry.servingCsrs ?? []),
      ...nodePoolsRecord(entry.nodePools ?? []),
      ...(entry.etcd ? { etcd: etcdRecord(entry.etcd) } : {}),
    };
  }
  return out;
}

// What part of a pass failed while the credentials were brought up to date: the join tokens, the
// backup store's Secret.
function passErrors(entry: { readonly joinError?: string; readonly backupStoreError?: string }): JsonMap {
  return {
    ...(entry.joinError ? { joinError: entry.joinError } : {}),
    ...(entry.backupStoreError ? { backupStoreError: entry.backupStoreError } : {}),
  };
}

// An etcd's members (sizes in whole MiB, so that the record changes when they grow by one,
// not at every write), and a replacement under way or held.
function etcdMemberRecord(m: EtcdMemberRecord): JsonMap {
  const mib = (key: string, bytes: number | undefined) =>
    bytes === undefined ? {} : { [key]: Math.round(bytes / 2 ** 20) };
  return {
    ready: m.ready,
    ...(m.notReadySince ? { notReadySince: m.notReadySince } : {}),
    ...(m.id ? { id: m.id } : {}),
    ...(m.leader ? { leader: true } : {}),
    ...mib("dbSizeMiB", m.dbSize),
    ...mib("dbInUseMiB", m.dbInUse),
    ...mib("quotaMiB", m.quota),
    ...(m.alarm ? { alarm: m.alarm } : {}),
  };
}

function etcdRecord(etcd: EtcdRecord): JsonMap {
  const members: Record<string, JsonMap> = {};
  for (const [name, m] of Object.entries(etcd.members).sort(([a], [b]) => compareStrings(a, b)))
    members[name] = etcdMemberRecord(m);
  return {
    name: etcd.etcd,
    members,
    ...(etcd.replacing ? { replacing: `${etcd.replacing.member}: ${etcd.replacing.step}` } : {}),
    ...(etcd.held ? { held: etcd.held } : {}),
    ...(etcd.requests ? { requests: { ...etcd.requests } } : {}),
    ...(etcd.alarm?.clearing ? { clearing: `NOSPACE: ${etcd.alarm.clearing}` } : {}),
    ...(etcd.alarm?.held ? { alarmHeld: etcd.alarm.held } : {}),
    ...(etcd.errors.length > 0 ? { errors: etcd.errors.slice(0, MAX_POOL_ERRORS_LISTED) } : {}),
  };
}

// Where each node pool's upgrade and repair stand.
function nodePoolsRecord(pools: readonly NodePoolRecord[]): JsonMap {
  if (pools.length === 0) return {};
  const record = (p: NodePoolRecord): JsonMap => ({
    kubeletVersion: p.kubeletVersion,
    nodes: p.nodes,
    upToDate: p.upToDate,
    ...(p.missing > 0 ? { missing: p.missing } : {}),
    ...(p.upgrading.length > 0 ? { upgrading: [...p.upgrading] } : {}),
    ...(Object.keys(p.stalled).length > 0 ? { stalled: { ...p.stalled } } : {}),
    ...(p.held ? { held: p.held } : {}),
    ...(p.repairHeld ? { repairHeld: p.repairHeld } : {}),
    ...(p.errors.length > 0 ? { errors: p.errors.slice(0, MAX_POOL_ERRORS_LISTED) } : {}),
  });
  return { nodePools: Object.fromEntries(pools.map((p) => [p.pool, record(p)])) };
}

// The kubelet serving CSRs a pass approved (by node) and left pending (with why), at most
// MAX_SERVING_CSRS_LISTED of each.
function servingCsrsRecord(csrs: readonly ServingCsrRecord[]): JsonMap {
  const approved = csrs.filter((c) => c.approved).slice(0, MAX_SERVING_CSRS_LISTED);
  const pending = csrs.filter((c) => !c.approved).slice(0, MAX_SERVING_CSRS_LISTED);
  return {
    ...(approved.length > 0
      ? { servingCsrsApproved: approved.map((c) => `${c.csr} (${c.node ?? ""})`) }
      : {}),
    ...(pending.length > 0
      ? { servingCsrsPending: Object.fromEntries(pending.map((c) => [c.csr, c.reason ?? ""])) }
      : {}),
  };
}

const MAX_SERVING_CSRS_LISTED = 20;

// How many of a node pool's failed actions one pass lists (one per node acted on, at most).
const MAX_POOL_ERRORS_LISTED = 20;

/** The commit message's lines for credentials a sync created, renewed or re-issued (kept ones say nothing). */
export function credentialLines(host: string, credentials: HostedCredentials | undefined): string[] {
  const lines: string[] = [];
  for (const [cluster, entry] of Object.entries(credentials ?? {}).sort(([a], [b]) => compareStrings(a, b))) {
    if ("error" in entry) {
      lines.push(`${host}: ${entry.error}`);
      continue;
    }
    lines.push(...(entry.nodePools ?? []).flatMap((pool) => nodePoolLines(host, cluster, pool)));
    lines.push(
      ...(entry.etcd?.did ?? []).map((line) => `${host}: etcd ${entry.etcd?.etcd} of ${cluster}: ${line}`),
    );
    const approved = (entry.servingCsrs ?? []).filter((c) => c.approved);
    if (approved.length > 0)
      lines.push(
        `${host}: serving certificates of ${cluster} approved for ${approved.map((c) => c.node).join(", ")}`,
      );
    lines.push(...recordLines(host, cluster, entry.records));
    if ((entry.restarted ?? []).length > 0)
      lines.push(
        `${host}: control plane of ${cluster} restarted on its replaced CAs: ${(entry.restarted ?? []).join(", ")}`,
      );
  }
  return lines;
}

// One line per action that touched a credential: created, renewed, re-issued.
function recordLines(host: string, cluster: string, records: readonly CredentialRecord[]): string[] {
  return (["created", "renewed", "reissued"] as const).flatMap((action) => {
    const touched = records.filter((r) => r.action === action);
    if (touched.length === 0) return [];
    const why = [...new Set(touched.map((r) => r.reason).filter((r) => r !== undefined))];
    return [
      `${host}: credentials of ${cluster} ${action}: ${touched.map((r) => r.name).join(", ")}${why.length > 0 ? ` (${why.join("; ")})` : ""}`,
    ];
  });
}

// "meta-1: node pool pc-1/workers: pc-1-workers-0 cordoned to upgrade to v1.36.3", one line per kind of step.
function nodePoolLines(host: string, cluster: string, pool: NodePoolRecord): string[] {
  const head = `${host}: node pool ${cluster}/${pool.pool}:`;
  const names = (nodes: readonly string[]) => nodes.join(", ");
  return [
    ...(pool.removed.length > 0
      ? [
          `${head} removed ${pool.removed.map((r) => `${r.node} (NotReady for ${Math.round(r.notReadyForMs / 1000)}s)`).join(", ")} for the provisioner to replace`,
        ]
      : []),
    ...(pool.cordoned.length > 0
      ? [`${head} ${names(pool.cordoned)} cordoned to upgrade to ${pool.kubeletVersion}`]
      : []),
    ...(pool.told.length > 0 ? [`${head} ${names(pool.told)} told to run ${pool.kubeletVersion}`] : []),
    ...(pool.uncordoned.length > 0
      ? [`${head} ${names(pool.uncordoned)} run ${pool.kubeletVersion} Ready, uncordoned`]
      : []),
  ];
}
