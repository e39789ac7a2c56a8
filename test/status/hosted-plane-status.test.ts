import { describe, expect, it } from "vitest";
import { asMap } from "../../src/apimachinery/json.js";
import type { EtcdRecord } from "../../src/model/controlplane/credential-record.js";
import { hostedCredentialsRecord } from "../../src/status/hosted-plane-status.js";

/** What the status branch records of a replicated etcd's pass. */
describe("a replicated etcd in the status branch", () => {
  const MiB = 2 ** 20;
  const etcd: EtcdRecord = {
    etcd: "gitfleet-cp-pc-1/etcd",
    members: {
      "etcd-1": { ready: false, notReadySince: "2026-12-06T01:00:00.000Z", id: "a1" },
      "etcd-0": {
        ready: true,
        id: "a0",
        leader: true,
        dbSize: 3.5 * MiB,
        dbInUse: 1.4 * MiB,
        quota: 2048 * MiB,
      },
    },
    replacing: { member: "etcd-1", step: "adding" },
    requests: { "disk-swap": "Replacing", older: "Done" },
    did: ["adding etcd-1 back to the etcd"],
    errors: [],
    moving: true,
  };

  it("names each member (sizes in whole MiB), the replacement's step and where each request stands", () => {
    const record = hostedCredentialsRecord({ "pc-1": { records: [], etcd } });
    expect(record).toEqual({
      "pc-1": {
        credentials: {},
        etcd: {
          name: "gitfleet-cp-pc-1/etcd",
          members: {
            "etcd-0": { ready: true, id: "a0", leader: true, dbSizeMiB: 4, dbInUseMiB: 1, quotaMiB: 2048 },
            "etcd-1": { ready: false, notReadySince: "2026-12-06T01:00:00.000Z", id: "a1" },
          },
          replacing: "etcd-1: adding",
          requests: { "disk-swap": "Replacing", older: "Done" },
        },
      },
    });
  });

  it("says where a NOSPACE alarm's clearing stands, and why the alarm stays", () => {
    const alarm = {
      clearing: "defragmented",
      held: "defragmented, but etcd-0's database still fills 95% of its quota",
    };
    const record = hostedCredentialsRecord({ "pc-1": { records: [], etcd: { ...etcd, alarm } } });
    const written = asMap(asMap(record["pc-1"]).etcd);
    expect([written.clearing, written.alarmHeld]).toEqual(["NOSPACE: defragmented", alarm.held]);
  });

  it("says nothing of requests when there are none", () => {
    const { requests: _, ...without } = etcd;
    const record = hostedCredentialsRecord({ "pc-1": { records: [], etcd: without } });
    expect(JSON.stringify(record)).not.toContain("requests");
  });
});
