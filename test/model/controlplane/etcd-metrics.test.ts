import { describe, expect, it } from "vitest";
import { alarmOf, MAX_METRIC_LINES, readEtcdMetrics } from "../../../src/model/controlplane/etcd-metrics.js";

// As etcd 3.6 serves them (trimmed): the member's ID, leadership, database size and quota.
const SAMPLE = `# HELP etcd_server_id Server or member ID in hexadecimal format. 1 for 'server_id' label with current ID.
# TYPE etcd_server_id gauge
etcd_server_id{server_id="25351fad42b3c84c"} 1
etcd_mvcc_db_total_size_in_bytes 20480
etcd_mvcc_db_total_size_in_use_in_bytes 16384
etcd_network_active_peers{Local="25351fad42b3c84c",Remote="2737ecedbf2a9065"} 1
etcd_server_has_leader 1
etcd_server_is_leader 0
etcd_server_quota_backend_bytes 2.147483648e+09
etcd_debugging_mvcc_current_revision 4711
`;

describe("an etcd member's metrics", () => {
  it("reads the ID, leadership, sizes, quota and revision", () => {
    expect(readEtcdMetrics(SAMPLE)).toEqual({
      id: "25351fad42b3c84c",
      dbSize: 20480,
      dbInUse: 16384,
      hasLeader: true,
      leader: false,
      quota: 2147483648,
      revision: 4711,
    });
  });

  it.each<[string, string]>([
    ["a negative size", "etcd_mvcc_db_total_size_in_bytes -1"],
    ["a size that is not a number", "etcd_mvcc_db_total_size_in_bytes lots"],
    ["an infinite quota", "etcd_server_quota_backend_bytes +Inf"],
    ["a line with a timestamp and more", "etcd_server_is_leader 1 1700000000 x"],
    ["an ID that is not hex", 'etcd_server_id{server_id="zz; rm -rf"} 1'],
    ["an ID longer than 16 digits", 'etcd_server_id{server_id="25351fad42b3c84c0"} 1'],
    ["an ID whose gauge is 0", 'etcd_server_id{server_id="25351fad42b3c84c"} 0'],
    ["another metric with the same prefix", "etcd_server_is_leader_total 1"],
  ])("skips %s", (_name, line) => {
    expect(readEtcdMetrics(`${line}\n`)).toEqual({});
  });

  it(`reads no further than ${MAX_METRIC_LINES} lines`, () => {
    const filler = "x 1\n".repeat(MAX_METRIC_LINES - 1);
    expect(readEtcdMetrics(`${filler}etcd_server_is_leader 1\n`)).toEqual({ leader: true });
    expect(readEtcdMetrics(`${filler}x 1\netcd_server_is_leader 1\n`)).toEqual({});
  });

  it.each<[string, string | undefined]>([
    ['{"health":"false","reason":"ALARM NOSPACE"}', "NOSPACE"],
    ['{"health":"false","reason":"ALARM CORRUPT"}', "CORRUPT"],
    ['{"health":"true","reason":""}', undefined],
    ['{"health":"false","reason":"RAFT NO LEADER"}', undefined],
  ])("names the alarm /health reports: %s", (text, alarm) => {
    expect(alarmOf(text)).toBe(alarm);
  });
});
