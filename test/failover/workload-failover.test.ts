import { describe, expect, it } from "vitest";
import {
  applicationFailover,
  type FailoverRecord,
  type FailoverSubject,
  failoverConstraints,
  placementDigest,
  replacementsReady,
  settleFailover,
} from "../../src/failover/workload-failover.js";
import type { ObservedReplicas } from "../../src/model/observed-state.js";
import type { PlacementSpec } from "../../src/model/types.js";
import type { ScheduleDecision } from "../../src/schedule/types.js";

// One workload's failover around its scheduling, at its thresholds: each comparison that decides a
// cap, a move, a kept replica or a wake-up is tried at, just before and just after its boundary.

const NOW = Date.parse("2026-12-05T12:00:00.000Z");
const iso = (ms: number) => new Date(ms).toISOString();
const DIVIDED: PlacementSpec = { replicaScheduling: { type: "Divided" } };
const APPLICATION: PlacementSpec = {
  ...DIVIDED,
  failover: { application: { unschedulableSeconds: 60, degradedSeconds: 120, coolDownSeconds: 300 } },
};
const TAINT = "untolerated taint {gitfleet.io/unreachable:NoExecute}";

const seen = (desired: number, more: Partial<ObservedReplicas> = {}): ObservedReplicas => ({
  desired,
  ready: desired,
  unschedulable: 0,
  ...more,
});

function subject(given: {
  current: Record<string, number>;
  observed?: Record<string, ObservedReplicas>;
  placement?: PlacementSpec;
  record?: FailoverRecord;
  divided?: boolean;
  now?: number;
}): FailoverSubject {
  return {
    record: given.record,
    placement: given.placement ?? APPLICATION,
    current: given.current,
    observed: new Map(Object.entries(given.observed ?? {})),
    now: given.now ?? NOW,
    divided: given.divided ?? true,
  };
}

const decision = (
  clusters: Record<string, number>,
  unschedulable = 0,
  filtered: Record<string, string> = {},
): ScheduleDecision => ({
  clusters,
  unschedulable,
  diagnosis: { summary: "", filtered, frozen: {}, notSelected: {}, selected: Object.keys(clusters) },
});

const record = (more: Partial<FailoverRecord> = {}): FailoverRecord => ({
  movedOff: [],
  keeping: [],
  capped: [],
  ...more,
});

describe("placementDigest", () => {
  it("is eight hex digits, and differs when the Placement does", () => {
    expect(placementDigest(DIVIDED)).toMatch(/^[0-9a-f]{8}$/);
    expect(placementDigest({})).toMatch(/^[0-9a-f]{8}$/);
    expect(placementDigest(APPLICATION)).not.toBe(placementDigest(DIVIDED));
    // A hash below 0x10000000 keeps its leading zero.
    expect(placementDigest({ priority: 160 })).toBe("06a0d2d4");
  });
});

describe("applicationFailover", () => {
  it.each([
    ["the Placement's own settings", APPLICATION, APPLICATION.failover?.application],
    [
      "Aggregated divides by capacity: the defaults",
      { replicaScheduling: { divisionPreference: "Aggregated" } },
      {},
    ],
    [
      "dynamic weights by available replicas: the defaults",
      { replicaScheduling: { weightPreference: { dynamicWeight: "AvailableReplicas" } } },
      {},
    ],
    [
      "static weights: none",
      { replicaScheduling: { weightPreference: { staticWeightList: [] } } },
      undefined,
    ],
    ["no scheduling: none", {}, undefined],
  ] as [string, PlacementSpec, unknown][])("%s", (_name, placement, expected) => {
    expect(applicationFailover(placement)).toEqual(expected);
  });
});

describe("failoverConstraints", () => {
  it.each([
    ["a cap cooling down one millisecond more holds", NOW + 1, { a: 2 }],
    ["a cap whose cool-down ends now is gone", NOW, {}],
    ["a cap that ended a millisecond ago is gone", NOW - 1, {}],
  ])("%s", (_name, until, caps) => {
    const constraints = failoverConstraints(
      subject({
        current: { a: 2 },
        record: record({ capped: [{ cluster: "a", replicas: 2, reason: "r", until: iso(until) }] }),
      }),
    );
    expect(constraints.caps).toEqual(caps);
    expect(constraints.keepCurrent).toBe(false);
  });

  it.each([
    ["Unschedulable for exactly unschedulableSeconds: capped", 60_000, [{ cluster: "a", replicas: 5 }]],
    ["a millisecond longer: capped", 60_001, [{ cluster: "a", replicas: 5 }]],
    ["a millisecond short: not yet", 59_999, []],
  ])("%s", (_name, pendingFor, caps) => {
    const constraints = failoverConstraints(
      subject({
        current: { a: 8, b: 2 },
        observed: {
          a: seen(8, { ready: 5, unschedulable: 3, unschedulableSince: NOW - pendingFor }),
          b: seen(2),
        },
      }),
    );
    expect(constraints.newCaps.map(({ cluster, replicas }) => ({ cluster, replicas }))).toEqual(caps);
    // A new cap keeps the current counts, whether or not the workload failed over before.
    expect(constraints.keepCurrent).toBe(caps.length > 0);
    if (caps.length > 0)
      expect(constraints.newCaps[0]).toMatchObject({
        reason: `3 replicas Unschedulable for ${Math.round(pendingFor / 1000)}s`,
        until: iso(NOW + 300_000),
      });
  });

  it.each([
    ["no pod Unschedulable, though a time is recorded", seen(8, { unschedulableSince: NOW - 600_000 })],
    ["no time recorded", seen(8, { ready: 5, unschedulable: 3 })],
    [
      "an observation of another count than the one asked for now",
      seen(6, { ready: 3, unschedulable: 3, unschedulableSince: NOW - 600_000 }),
    ],
  ])("no cap when %s", (_name, observation) => {
    expect(failoverConstraints(subject({ current: { a: 8 }, observed: { a: observation } })).newCaps).toEqual(
      [],
    );
  });

  it("caps at zero, never below, when more are Unschedulable than asked for", () => {
    const constraints = failoverConstraints(
      subject({
        current: { a: 2 },
        observed: { a: seen(2, { ready: 0, unschedulable: 5, unschedulableSince: NOW - 600_000 }) },
      }),
    );
    expect(constraints.caps).toEqual({ a: 0 });
  });

  it("keeps the lower of a cap cooling down and a new one", () => {
    const constraints = failoverConstraints(
      subject({
        current: { a: 8 },
        observed: { a: seen(8, { ready: 5, unschedulable: 3, unschedulableSince: NOW - 600_000 }) },
        record: record({ capped: [{ cluster: "a", replicas: 3, reason: "r", until: iso(NOW + 1000) }] }),
      }),
    );
    expect(constraints.caps).toEqual({ a: 3 });
  });

  it("takes no cap for a Duplicated workload", () => {
    const constraints = failoverConstraints(
      subject({
        divided: false,
        current: { a: 8 },
        observed: { a: seen(8, { ready: 5, unschedulable: 3, unschedulableSince: NOW - 600_000 }) },
      }),
    );
    expect(constraints).toEqual({ keepCurrent: false, caps: {}, newCaps: [] });
  });

  it("keeps the current counts while the record's Placement is this one", () => {
    const same = failoverConstraints(
      subject({ current: { a: 2 }, record: record({ placement: placementDigest(APPLICATION) }) }),
    );
    const changed = failoverConstraints(
      subject({ current: { a: 2 }, record: record({ placement: placementDigest(DIVIDED) }) }),
    );
    expect([same.keepCurrent, changed.keepCurrent]).toEqual([true, false]);
  });
});

describe("degraded pods", () => {
  const stuck = (since: number, more: Partial<ObservedReplicas> = {}) =>
    seen(4, { ready: 1, degraded: 3, degradedReason: "CrashLoopBackOff", degradedSince: since, ...more });
  const caps = (s: FailoverSubject) =>
    failoverConstraints(s).newCaps.map(({ cluster, replicas, reason }) => ({ cluster, replicas, reason }));

  it.each([
    ["stuck for exactly degradedSeconds", 120_000, 1],
    ["a millisecond longer", 120_001, 1],
    ["a millisecond short", 119_999, 0],
  ])("%s", (_name, stuckFor, expected) => {
    const result = caps(
      subject({ current: { a: 4, b: 2 }, observed: { a: stuck(NOW - stuckFor), b: seen(2) } }),
    );
    expect(result).toHaveLength(expected);
  });

  it("caps at what runs, says why, and cools down for coolDownSeconds", () => {
    const s = subject({ current: { a: 4, b: 2 }, observed: { a: stuck(NOW - 200_000), b: seen(2) } });
    expect(failoverConstraints(s).newCaps).toEqual([
      {
        cluster: "a",
        replicas: 1,
        reason: "3 replicas CrashLoopBackOff for 200s",
        until: iso(NOW + 300_000),
      },
    ]);
  });

  it("says degraded when the member gave no reason", () => {
    const s = subject({
      current: { a: 4, b: 2 },
      observed: { a: stuck(NOW - 200_000, { degradedReason: "" }), b: seen(2) },
    });
    expect(caps(s)).toEqual([{ cluster: "a", replicas: 1, reason: "3 replicas degraded for 200s" }]);
  });

  it.each([
    ["no other cluster holds replicas", { a: 4 }, { a: stuck(0) }, 0],
    ["another cluster holds replicas, all ready", { a: 4, b: 2 }, { a: stuck(0), b: seen(2) }, 1],
    ["another is not ready yet", { a: 4, b: 2 }, { a: stuck(0), b: seen(2, { ready: 1 }) }, 0],
    ["another is degraded too (a bad image everywhere)", { a: 4, b: 2 }, { a: stuck(0), b: stuck(0) }, 0],
    ["another's object asks for none yet", { a: 4, b: 2 }, { a: stuck(0), b: seen(0) }, 0],
    ["another is not observed", { a: 4, b: 2 }, { a: stuck(0) }, 0],
    [
      "a cluster asked for none does not count, whatever it reports",
      { a: 4, b: 0, c: 2 },
      { a: stuck(0), c: seen(2) },
      1,
    ],
  ] as [string, Record<string, number>, Record<string, ObservedReplicas>, number][])(
    "healthy elsewhere? %s",
    (_name, current, observed, expected) => {
      expect(caps(subject({ current, observed }))).toHaveLength(expected);
    },
  );

  it.each([
    ["a cluster asked for none", { a: 0, b: 2 }, stuck(0, { desired: 0 }), 0],
    ["an observation of another count", { a: 5, b: 2 }, stuck(0), 0],
    ["a member HPA's count, whatever gitfleet asks for", { a: 5, b: 2 }, stuck(0, { scaledByHpa: true }), 1],
  ] as [string, Record<string, number>, ObservedReplicas, number][])("%s", (_name, current, a, expected) => {
    const result = caps(subject({ current, observed: { a, b: seen(2) } }));
    expect(result).toHaveLength(expected);
    // Where a member HPA owns the count, the cap is what runs there.
    if (expected > 0) expect(result[0]?.replicas).toBe(1);
  });

  it("needs the Placement's own application failover (capacity division alone does not move degraded pods)", () => {
    const s = subject({
      placement: { replicaScheduling: { divisionPreference: "Aggregated" } },
      current: { a: 4, b: 2 },
      observed: { a: stuck(0), b: seen(2) },
    });
    expect(failoverConstraints(s).newCaps).toEqual([]);
  });
});

describe("settleFailover", () => {
  const settle = (s: FailoverSubject, d: ScheduleDecision) => settleFailover(s, failoverConstraints(s), d);
  const digest = placementDigest(APPLICATION);

  it("records a NoExecute move with its exact count and keeps the old replicas Gracefully", () => {
    const s = subject({ current: { a: 3, b: 1 } });
    const out = settle(s, decision({ a: 0, b: 4 }, 0, { a: TAINT }));
    expect(out.record?.movedOff).toEqual([{ cluster: "a", replicas: 3, reason: TAINT, at: iso(NOW) }]);
    expect(out.record?.keeping).toEqual([
      { cluster: "a", replicas: 3, purgeMode: "Gracefully", until: iso(NOW + 600_000) },
    ]);
    expect(out.record?.placement).toBe(digest);
    expect([...out.kept]).toEqual([["a", 3]]);
  });

  it.each([
    ["a filter that is no NoExecute taint", { a: "not in clusterNames" }],
    ["a cluster that held nothing", { c: TAINT }],
  ])("records no move for %s", (_name, filtered) => {
    const s = subject({ current: { a: 3, b: 1, c: 0 } });
    const out = settle(s, decision({ a: 0, b: 4, c: 0 }, 0, filtered));
    expect(out.record).toBeUndefined();
    expect(out.kept.size).toBe(0);
  });

  it("records a capped cluster's move and no other cluster's", () => {
    // a is capped (Unschedulable long enough); c loses replicas for another reason (a person's change).
    const s = subject({
      current: { a: 8, b: 2, c: 4 },
      observed: {
        a: seen(8, { ready: 5, unschedulable: 3, unschedulableSince: NOW - 600_000 }),
        b: seen(2),
        c: seen(4),
      },
    });
    const out = settle(s, decision({ a: 5, b: 7, c: 2 }));
    expect(out.record?.movedOff).toEqual([
      { cluster: "a", replicas: 3, reason: "3 replicas Unschedulable for 600s", at: iso(NOW) },
    ]);
  });

  it("records no move where a new cap did not lower the count", () => {
    const s = subject({
      current: { a: 8, b: 2 },
      observed: { a: seen(8, { ready: 5, unschedulable: 3, unschedulableSince: NOW - 600_000 }), b: seen(2) },
    });
    const out = settle(s, decision({ a: 8, b: 2 }));
    expect(out.record?.movedOff).toEqual([]);
    expect(out.record?.capped).toHaveLength(1);
  });

  it("keeps the ten newest moves", () => {
    const old = Array.from({ length: 10 }, (_, i) => ({
      cluster: `x${i}`,
      replicas: 1,
      reason: "r",
      at: iso(i),
    }));
    const s = subject({ current: { a: 3, b: 1 }, record: record({ placement: digest, movedOff: old }) });
    const moved = settle(s, decision({ a: 0, b: 4 }, 0, { a: TAINT })).record?.movedOff ?? [];
    expect(moved.map((m) => m.cluster)).toEqual([...old.slice(1).map((m) => m.cluster), "a"]);
  });

  it("carries the preserved labels while the moves stand, and drops them when the Placement changes", () => {
    const preserved = [{ from: "a", to: ["b"], labels: { leader: "a" }, at: iso(NOW - 1000) }];
    const standing = settle(
      subject({ current: { b: 4 }, record: record({ placement: digest, preserved }) }),
      decision({ b: 4 }),
    );
    expect(standing.record?.preserved).toEqual(preserved);
    const changed = settle(
      subject({ current: { b: 4 }, record: record({ placement: "00000000", preserved }) }),
      decision({ b: 4 }),
    );
    expect(changed.record).toBeUndefined();
  });

  it.each([
    ["one millisecond left", NOW + 1, 1],
    ["ending now", NOW, 0],
  ])("keeps a cap in the record while it cools down: %s", (_name, until, count) => {
    const s = subject({
      current: { a: 2 },
      record: record({ capped: [{ cluster: "a", replicas: 2, reason: "r", until: iso(until) }] }),
    });
    const out = settle(s, decision({ a: 2 }));
    expect(out.record?.capped ?? []).toHaveLength(count);
    // A cap alone keeps the record, though nothing moved and the Placement is not recorded.
    if (count > 0) expect(out.record?.placement).toBeUndefined();
  });

  it("keeps another cluster's cooling cap beside a new one", () => {
    const s = subject({
      current: { a: 8, b: 2 },
      observed: { a: seen(8, { ready: 5, unschedulable: 3, unschedulableSince: NOW - 600_000 }), b: seen(2) },
      record: record({ capped: [{ cluster: "b", replicas: 2, reason: "earlier", until: iso(NOW + 1000) }] }),
    });
    const capped = settle(s, decision({ a: 5, b: 2 }, 3)).record?.capped ?? [];
    expect(capped.map((c) => [c.cluster, c.replicas])).toEqual([
      ["b", 2],
      ["a", 5],
    ]);
  });

  it("replaces a cooling cap with the new one on the same cluster", () => {
    const s = subject({
      current: { a: 8, b: 2 },
      observed: { a: seen(8, { ready: 5, unschedulable: 3, unschedulableSince: NOW - 600_000 }), b: seen(2) },
      record: record({ capped: [{ cluster: "a", replicas: 6, reason: "earlier", until: iso(NOW + 1000) }] }),
    });
    const capped = settle(s, decision({ a: 5, b: 5 })).record?.capped ?? [];
    expect(capped.map((c) => [c.cluster, c.replicas, c.reason])).toEqual([
      ["a", 5, "3 replicas Unschedulable for 600s"],
    ]);
  });

  it("keeps kept replicas in the record after the Placement changed (Gracefully, not yet ready elsewhere)", () => {
    const s = subject({
      current: { a: 0, b: 4 },
      observed: { b: seen(4, { ready: 1 }) },
      record: record({
        placement: "00000000",
        keeping: [{ cluster: "a", replicas: 3, purgeMode: "Gracefully", until: iso(NOW + 1000) }],
      }),
    });
    const out = settle(s, decision({ a: 0, b: 4 }));
    expect(out.record).toEqual({ movedOff: [], keeping: s.record?.keeping, capped: [] });
    expect(out.wakeAt).toBe(NOW + 1000);
  });

  describe("which old replicas stay", () => {
    const withPurge = (mode: "Gracefully" | "Directly" | "Never"): PlacementSpec => ({
      ...DIVIDED,
      failover: { cluster: { purgeMode: mode } },
    });

    it.each([
      ["Divided, Gracefully", withPurge("Gracefully"), true, 0, ["a"]],
      ["Divided, Never", withPurge("Never"), true, 0, ["a"]],
      ["Divided, Directly", withPurge("Directly"), true, 0, []],
      ["Duplicated, Gracefully: the other copies already run", withPurge("Gracefully"), false, 0, []],
      ["Duplicated, Never", withPurge("Never"), false, 0, ["a"]],
      ["Duplicated, Gracefully, with replicas unplaced", withPurge("Gracefully"), false, 1, ["a"]],
      ["Divided, Directly, with replicas unplaced", withPurge("Directly"), true, 1, ["a"]],
    ] as [string, PlacementSpec, boolean, number, string[]][])(
      "%s",
      (_name, placement, divided, unplaced, kept) => {
        const s = subject({ placement, divided, current: { a: 3, b: 3 } });
        const out = settle(s, decision({ a: 0, b: divided ? 6 - unplaced : 3 }, unplaced, { a: TAINT }));
        expect([...out.kept.keys()]).toEqual(kept);
      },
    );

    it("keeps Directly's replicas as Directly while replicas are unplaced", () => {
      const s = subject({ placement: withPurge("Directly"), current: { a: 3, b: 3 } });
      const out = settle(s, decision({ a: 0, b: 5 }, 1, { a: TAINT }));
      expect(out.record?.keeping).toEqual([{ cluster: "a", replicas: 3, purgeMode: "Directly" }]);
    });

    it("records what left a tainted cluster the decision did not empty", () => {
      const s = subject({ current: { a: 3, b: 3 } });
      const out = settle(s, decision({ a: 1, b: 5 }, 0, { a: TAINT }));
      expect(out.record?.movedOff).toEqual([{ cluster: "a", replicas: 2, reason: TAINT, at: iso(NOW) }]);
    });

    it("shrinks nothing while a move leaves replicas unplaced, without changing a kept cluster's mode", () => {
      const s = subject({ placement: withPurge("Never"), current: { a: 3, b: 2, c: 1, d: 2 } });
      // a moves; b shrinks, as nowhere takes the replicas; c grows; d stays as it is.
      const out = settle(s, decision({ a: 0, b: 1, c: 3, d: 2 }, 2, { a: TAINT }));
      expect(out.record?.keeping).toEqual([
        { cluster: "a", replicas: 3, purgeMode: "Never" },
        { cluster: "b", replicas: 2, purgeMode: "Gracefully", until: iso(NOW + 600_000) },
      ]);
    });

    it("keeps nothing for replicas a person took away, even when some are unplaced", () => {
      const s = subject({ current: { a: 3, b: 2 } });
      const out = settle(s, decision({ a: 1, b: 2 }, 2));
      expect(out.kept.size).toBe(0);
    });
  });

  describe("when kept replicas go", () => {
    const kept = (purgeMode: "Gracefully" | "Directly" | "Never", until?: number) => ({
      cluster: "a",
      replicas: 3,
      purgeMode,
      ...(until !== undefined ? { until: iso(until) } : {}),
    });
    const keepingAfter = (
      k: ReturnType<typeof kept>,
      d: ScheduleDecision,
      b: ObservedReplicas,
      placementRecorded = digest,
    ) =>
      settle(
        subject({
          current: { a: 0, b: 6 },
          observed: { b },
          record: record({ placement: placementRecorded, keeping: [k] }),
        }),
        d,
      ).record?.keeping ?? [];

    it.each([
      ["the decision gives the cluster as many again", decision({ a: 3, b: 3 }), []],
      ["the decision gives it one fewer", decision({ a: 2, b: 4 }), ["a"]],
    ])("Never: %s", (_name, d, left) => {
      const out = keepingAfter(kept("Never"), d, seen(d.clusters.b ?? 0, { ready: 0 }));
      expect(out.map((k) => k.cluster)).toEqual(left);
    });

    it.each([
      [
        "Never stays while the Placement is the one it moved under, ready or not",
        kept("Never"),
        digest,
        0,
        ["a"],
      ],
      ["Never goes when the Placement changes", kept("Never"), "00000000", 0, []],
      [
        "Gracefully stays while replicas are unplaced, though the rest are ready",
        kept("Gracefully", NOW + 1000),
        digest,
        1,
        ["a"],
      ],
      ["Directly stays while replicas are unplaced", kept("Directly"), digest, 1, ["a"]],
      ["Directly goes once every replica is placed, ready or not", kept("Directly"), digest, 0, []],
      ["Gracefully goes when its grace period ends now", kept("Gracefully", NOW), digest, 0, []],
    ] as [string, ReturnType<typeof kept>, string, number, string[]][])(
      "%s",
      (_name, k, placement, unplaced, left) => {
        const ready = k.purgeMode !== "Directly";
        const out = keepingAfter(
          k,
          decision({ a: 0, b: 6 - unplaced }, unplaced),
          seen(6 - unplaced, ready ? {} : { ready: 0 }),
          placement,
        );
        expect(out.map((x) => x.cluster)).toEqual(left);
      },
    );
  });

  describe("when it wakes", () => {
    it.each([
      ["Unschedulable pods reach unschedulableSeconds in the future", NOW - 1000, true, NOW + 59_000],
      ["that moment is now: nothing left to wait for", NOW - 60_000, true, undefined],
      ["that moment is past", NOW - 120_000, true, undefined],
      ["a Duplicated workload never waits for its pods", NOW - 1000, false, undefined],
    ])("%s", (_name, since, divided, wake) => {
      // An observation of another count: no cap is taken, only the deadline is watched.
      const s = subject({
        divided,
        current: { a: 8 },
        observed: { a: seen(6, { ready: 3, unschedulable: 3, unschedulableSince: since }) },
      });
      expect(settle(s, decision({ a: 8 })).wakeAt).toBe(wake);
    });

    it("ignores a time left from pods that are no longer Unschedulable", () => {
      const s = subject({ current: { a: 8 }, observed: { a: seen(8, { unschedulableSince: NOW - 1000 }) } });
      expect(settle(s, decision({ a: 8 })).wakeAt).toBeUndefined();
    });

    it("wakes when a cap's cool-down ends", () => {
      const s = subject({
        current: { a: 2 },
        record: record({ capped: [{ cluster: "a", replicas: 2, reason: "r", until: iso(NOW + 5000) }] }),
      });
      expect(settle(s, decision({ a: 2 })).wakeAt).toBe(NOW + 5000);
    });

    it("wakes when degraded pods will have been stuck long enough", () => {
      const s = subject({
        current: { a: 4 },
        observed: { a: seen(4, { ready: 1, degraded: 3, degradedSince: NOW - 20_000 }) },
      });
      expect(settle(s, decision({ a: 4 })).wakeAt).toBe(NOW + 100_000);
    });
  });
});

describe("replacementsReady", () => {
  const observed = (entries: Record<string, ObservedReplicas>) => new Map(Object.entries(entries));

  it.each([
    ["every other cluster runs its count, ready", { a: 2, b: 2, c: 3 }, { b: seen(2), c: seen(3) }, true],
    [
      "the cluster itself and those asked for none are not looked at",
      { a: 2, b: 0, c: 3 },
      { c: seen(3) },
      true,
    ],
    ["one is not ready yet", { a: 2, c: 3 }, { c: seen(3, { ready: 2 }) }, false],
    ["one still runs the old count, all ready", { a: 2, c: 3 }, { c: seen(2, { ready: 3 }) }, false],
    ["one is not observed", { a: 2, c: 3 }, {}, false],
    [
      "a member HPA owns one's count: all of its replicas ready",
      { a: 2, c: 3 },
      { c: seen(5, { scaledByHpa: true }) },
      true,
    ],
    [
      "a member HPA's replicas not all ready",
      { a: 2, c: 3 },
      { c: seen(5, { ready: 4, scaledByHpa: true }) },
      false,
    ],
  ] as [string, Record<string, number>, Record<string, ObservedReplicas>, boolean][])(
    "%s",
    (_name, clusters, seenBy, ready) => {
      expect(replacementsReady("a", observed(seenBy), decision(clusters))).toBe(ready);
    },
  );
});
