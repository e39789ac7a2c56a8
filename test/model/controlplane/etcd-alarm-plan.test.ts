import { describe, expect, it } from "vitest";
import {
  type AlarmJobs,
  COMPACT_AGAIN_AFTER_MS,
  MAX_FILL,
  planEtcdAlarms,
} from "../../../src/model/controlplane/etcd-alarm-plan.js";
import type { EtcdMemberView } from "../../../src/model/controlplane/etcd-member-plan.js";

const QUOTA = 1000;
const NOW = Date.parse("2026-12-06T05:00:00Z");

// A Ready member whose database fills `size` of its quota (on disk) and `inUse` of it with live data.
function member(name: string, size: number, inUse: number, alarm?: string, revision = 500): EtcdMemberView {
  return {
    name,
    podUid: `uid-${name}`,
    ready: "True",
    readySince: 0,
    id: "a",
    dbSize: size * QUOTA,
    dbInUse: inUse * QUOTA,
    quota: QUOTA,
    revision,
    ...(alarm ? { alarm } : {}),
  };
}

const full = (size: number, inUse: number) => [
  member("etcd-0", size, inUse, "NOSPACE", 512),
  member("etcd-1", size, inUse, "NOSPACE", 510),
  member("etcd-2", 0.1, 0.1, "NOSPACE", 511),
];

const plan = (members: readonly EtcdMemberView[], jobs: AlarmJobs, now = NOW) =>
  planEtcdAlarms({ enabled: true, members, jobs, now });

// "compact 510 via etcd-0,etcd-1,etcd-2", "defrag via …", "clean (cleared)".
function steps(result: ReturnType<typeof planEtcdAlarms>): string[] {
  return result.actions.map((a) =>
    a.kind === "clean"
      ? `clean (${a.why})`
      : `${a.kind}${a.kind === "compact" ? ` ${a.revision}` : ""} via ${a.endpoints.join(",")}`,
  );
}

const ALL = "etcd-0,etcd-1,etcd-2";
const COMPACTED: AlarmJobs = { compact: "Complete", compactedAt: NOW - 1000 };

describe("clearing a NOSPACE alarm", () => {
  it.each<[string, EtcdMemberView[], AlarmJobs, string[], string | undefined]>([
    ["no alarm, no Jobs", [member("etcd-0", 1, 0.5)], {}, [], undefined],
    [
      "no alarm, the last clearing's Jobs left",
      [member("etcd-0", 0.2, 0.2)],
      { disarm: "Complete" },
      ["clean (cleared)"],
      undefined,
    ],
    ["CORRUPT only: never cleared", [member("etcd-0", 0.2, 0.2, "CORRUPT")], {}, [], undefined],
    [
      "NOSPACE: the history is compacted first, to the lowest revision",
      full(1, 1),
      {},
      [`compact 510 via ${ALL}`],
      "compacting",
    ],
    ["a compaction running: wait", full(1, 1), { compact: "Running" }, [], "compacting"],
    [
      `compacted, data in use just past ${MAX_FILL}: held`,
      full(1, MAX_FILL + 0.001),
      COMPACTED,
      [],
      undefined,
    ],
    [
      `compacted, data in use at ${MAX_FILL}, the database past it: defragment`,
      full(1, MAX_FILL),
      COMPACTED,
      [`defrag via ${ALL}`],
      "defragmenting",
    ],
    [
      "a defragmentation running: wait",
      full(1, 0.5),
      { ...COMPACTED, defrag: "Running" },
      [],
      "defragmenting",
    ],
    [
      "defragmented, every database at the limit: disarm",
      full(MAX_FILL, 0.5),
      { ...COMPACTED, defrag: "Complete" },
      [`disarm via ${ALL}`],
      "disarming",
    ],
    [
      "compacted, a database just under the limit: disarm at once",
      full(MAX_FILL - 0.001, 0.5),
      COMPACTED,
      [`disarm via ${ALL}`],
      "disarming",
    ],
    [
      "defragmented, a database still just past the limit: held",
      full(MAX_FILL + 0.001, 0.5),
      { ...COMPACTED, defrag: "Complete" },
      [],
      "defragmented",
    ],
    [
      "a disarm running: wait",
      full(0.5, 0.5),
      { ...COMPACTED, defrag: "Complete", disarm: "Running" },
      [],
      "disarming",
    ],
    [
      "disarmed, and raised again: start over",
      full(0.5, 0.5),
      { ...COMPACTED, disarm: "Complete" },
      ["clean (raised again)"],
      "raised again",
    ],
    ["the compaction failed: held", full(1, 1), { compact: "Failed" }, [], "compact failed"],
    [
      "the defragmentation failed: held",
      full(1, 0.5),
      { ...COMPACTED, defrag: "Failed" },
      [],
      "defrag failed",
    ],
    ["the disarm failed: held", full(0.5, 0.5), { ...COMPACTED, disarm: "Failed" }, [], "disarm failed"],
  ])("%s", (_name, members, jobs, expected, clearing) => {
    const result = plan(members, jobs);
    expect(steps(result)).toEqual(expected);
    expect(result.clearing).toBe(clearing);
  });

  it.each<[string, number, string[]]>([
    ["just inside the wait", COMPACT_AGAIN_AFTER_MS - 1, []],
    ["at it", COMPACT_AGAIN_AFTER_MS, ["clean (too full)"]],
    ["just past it", COMPACT_AGAIN_AFTER_MS + 1, ["clean (too full)"]],
  ])("compacts again after a compaction that left too much data in use: %s", (_name, since, expected) => {
    const result = plan(full(1, 0.95), { compact: "Complete", compactedAt: NOW - since });
    expect(steps(result)).toEqual(expected);
    expect(result.held).toBe(
      "etcd-0 uses 95% of its quota with data in use after compaction: defragmenting cannot clear NOSPACE; delete objects, or raise etcd.quota",
    );
  });

  it.each<[string, EtcdMemberView[], AlarmJobs, string]>([
    [
      "a member whose size is not known",
      [member("etcd-0", 1, 0.5, "NOSPACE"), { ...member("etcd-1", 1, 0.5), dbSize: undefined }],
      COMPACTED,
      "etcd-1's database size or quota is not known: NOSPACE stays until it is",
    ],
    [
      "a quota of 0",
      [{ ...member("etcd-0", 1, 0.5, "NOSPACE"), quota: 0 }],
      COMPACTED,
      "etcd-0's database size or quota is not known: NOSPACE stays until it is",
    ],
    [
      "a member whose revision is not known",
      [member("etcd-0", 1, 1, "NOSPACE"), { ...member("etcd-1", 1, 1), revision: undefined }],
      {},
      "a Ready member's revision is not known: NOSPACE stays until it is",
    ],
    [
      "no member Ready",
      [{ ...member("etcd-0", 1, 0.5, "NOSPACE"), ready: "False" }],
      {},
      "etcd-0 raised NOSPACE, and no member is Ready to clear it through",
    ],
  ])("holds the alarm: %s", (_name, members, jobs, held) => {
    const result = plan(members, jobs);
    expect(result.actions).toEqual([]);
    expect(result.held).toBe(held);
  });

  it("clears through the Ready members only, and not at all with repair off", () => {
    const members = [
      ...full(1, 1).slice(0, 2),
      { ...member("etcd-2", 0.1, 0.1, undefined, 1), ready: "False" as const },
    ];
    expect(steps(plan(members, {}))).toEqual(["compact 510 via etcd-0,etcd-1"]);
    const off = planEtcdAlarms({ enabled: false, members, jobs: {}, now: NOW });
    expect(off.actions).toEqual([]);
    expect(off.held).toBe("etcd-0, etcd-1 raised NOSPACE; repair is off");
  });
});
