import { describe, expect, it } from "vitest";
import {
  type LeaseRecord,
  microTime,
  nextLeaseStep,
  readLeaseRecord,
  releasedSpec,
  sameLeaseRecord,
} from "../../src/kube/lease-record.js";

/** client-go's tryAcquireOrRenew as a function of data: who may take, renew or must wait. */
const NOW = new Date("2026-12-02T10:00:05.123Z");
const record = (over: Partial<LeaseRecord>): LeaseRecord => ({
  holder: "b_1",
  durationSeconds: 15,
  acquireTime: "2026-12-02T09:00:00.000000Z",
  renewTime: "2026-12-02T10:00:00.000000Z",
  transitions: 3,
  resourceVersion: "41",
  relayed: undefined,
  ...over,
});

// What a candidate writes when it takes another's Lease: its own times, one more transition.
const TAKEN = {
  action: "acquire",
  spec: {
    holderIdentity: "a_1",
    leaseDurationSeconds: 15,
    acquireTime: "2026-12-02T10:00:05.123000Z",
    renewTime: "2026-12-02T10:00:05.123000Z",
    leaseTransitions: 4,
  },
} as const;

const cases = [
  {
    name: "another holder's claim observed 14.9 s ago stands",
    record: record({}),
    observedAtMs: 100,
    nowMs: 15_000,
    want: { action: "wait", holder: "b_1" },
  },
  {
    name: "another holder's claim observed 15 s ago has expired: taken, one more transition",
    record: record({}),
    observedAtMs: 100,
    nowMs: 15_100,
    want: TAKEN,
  },
  {
    name: "the claim's own duration counts, not the candidate's (a holder with a 60 s lease)",
    record: record({ durationSeconds: 60 }),
    observedAtMs: 0,
    nowMs: 30_000,
    want: { action: "wait", holder: "b_1" },
  },
  {
    name: "a released Lease (no holder) is taken at once",
    record: record({ holder: "", durationSeconds: 1 }),
    observedAtMs: 1000,
    nowMs: 1000,
    want: TAKEN,
  },
  {
    name: "the holder renews, keeping its acquire time and the transitions",
    record: record({ holder: "a_1" }),
    observedAtMs: 1000,
    nowMs: 1000,
    want: {
      action: "renew",
      spec: {
        holderIdentity: "a_1",
        leaseDurationSeconds: 15,
        acquireTime: "2026-12-02T09:00:00.000000Z",
        renewTime: "2026-12-02T10:00:05.123000Z",
        leaseTransitions: 3,
      },
    },
  },
] as const;

describe("the next step on a Lease", () => {
  it.each(cases)("$name", ({ record, observedAtMs, nowMs, want }) => {
    expect(
      nextLeaseStep({ record, identity: "a_1", durationSeconds: 15, observedAtMs, nowMs, now: NOW }),
    ).toEqual(want);
  });

  it("reads a Lease as the API server answers it, bounding what it keeps", () => {
    const read = readLeaseRecord({
      metadata: {
        resourceVersion: "7",
        annotations: { "gitfleet.io/relayed-trigger": "webhook:github 2026-12-02T10:00:00.000Z" },
      },
      spec: { holderIdentity: "x".repeat(1000), leaseDurationSeconds: 15, leaseTransitions: -4 },
    });
    expect(read.holder).toHaveLength(256);
    expect(read.transitions).toBe(0);
    expect(read.resourceVersion).toBe("7");
    expect(read.relayed).toBe("webhook:github 2026-12-02T10:00:00.000Z");
    expect(readLeaseRecord("not an object")).toMatchObject({
      holder: "",
      durationSeconds: 0,
      resourceVersion: "",
    });
  });

  it.each([
    ["holder", { holder: "c_1" }],
    ["renewTime", { renewTime: "2026-12-02T10:00:02.000000Z" }],
    ["acquireTime", { acquireTime: "2026-12-02T09:30:00.000000Z" }],
    ["transitions", { transitions: 4 }],
    ["durationSeconds", { durationSeconds: 16 }],
  ])("tells a record whose %s differs from the last one read", (_field, change) => {
    const a = record({});
    expect(sameLeaseRecord(a, { ...a, ...change })).toBe(false);
  });

  it("tells a renewal from the same record, and writes MicroTime with microseconds", () => {
    const a = record({});
    expect(sameLeaseRecord(a, { ...a, resourceVersion: "42" })).toBe(true);
    expect(sameLeaseRecord(a, { ...a, renewTime: "2026-12-02T10:00:02.000000Z" })).toBe(false);
    expect(sameLeaseRecord(undefined, a)).toBe(false);
    expect(microTime(new Date("2026-01-02T03:04:05.006Z"))).toBe("2026-01-02T03:04:05.006000Z");
    expect(releasedSpec(a, NOW)).toMatchObject({
      holderIdentity: "",
      leaseDurationSeconds: 1,
      leaseTransitions: 3,
    });
  });
});
