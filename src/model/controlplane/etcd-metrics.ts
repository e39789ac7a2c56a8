/** What gitfleet reads of one etcd member's Prometheus metrics. */
export interface EtcdMetrics {
  /** The member's own ID (hex), from etcd_server_id{server_id}. */
  readonly id?: string;
  readonly leader?: boolean;
  readonly hasLeader?: boolean;
  /** etcd_mvcc_db_total_size_in_bytes, etcd_mvcc_db_total_size_in_use_in_bytes, etcd_server_quota_backend_bytes. */
  readonly dbSize?: number;
  readonly dbInUse?: number;
  readonly quota?: number;
  /** etcd_debugging_mvcc_current_revision: the newest revision of its key-value store. */
  readonly revision?: number;
}

/** The most lines of a member's metrics read: etcd reports a few thousand. */
export const MAX_METRIC_LINES = 50_000;

const ID = /^etcd_server_id\{server_id="([0-9a-f]{1,16})"\} 1(?:\.0+)?$/;

/**
 * Reads the gauges gitfleet records from a member's /metrics text (Prometheus exposition format).
 * Untrusted: a line that does not read as the gauge is skipped, numbers must be finite and not
 * negative, and at most MAX_METRIC_LINES lines are looked at. Pure.
 */
export function readEtcdMetrics(text: string): EtcdMetrics {
  const found: { -readonly [K in keyof EtcdMetrics]: EtcdMetrics[K] } = {};
  const lines = text.split("\n", MAX_METRIC_LINES);
  for (const line of lines) {
    if (line.startsWith("#") || !line.startsWith("etcd_")) continue;
    const id = ID.exec(line);
    if (id) {
      found.id = id[1] as string;
      continue;
    }
    const [name = "", value = "", extra] = line.split(" ");
    const number = Number(value);
    const field = GAUGES[name];
    if (extra !== undefined || value === "" || !Number.isFinite(number) || number < 0 || !field) continue;
    if (field === "leader" || field === "hasLeader") found[field] = number === 1;
    else found[field] = number;
  }
  return found;
}

// The gauges read, by metric name.
const GAUGES: Readonly<Record<string, Exclude<keyof EtcdMetrics, "id">>> = {
  etcd_server_is_leader: "leader",
  etcd_server_has_leader: "hasLeader",
  etcd_mvcc_db_total_size_in_bytes: "dbSize",
  etcd_mvcc_db_total_size_in_use_in_bytes: "dbInUse",
  etcd_server_quota_backend_bytes: "quota",
  etcd_debugging_mvcc_current_revision: "revision",
};

/** The alarm a member's /health names ("ALARM NOSPACE" → NOSPACE), if any. */
export function alarmOf(healthText: string): string | undefined {
  return /ALARM ([A-Z]{1,32})/.exec(healthText)?.[1];
}
