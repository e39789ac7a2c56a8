import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FencedError } from "../../src/controller/leadership/leader-lease.js";
import { LeaderElector, monotonicMs, timingsProblem } from "../../src/kube/leader-election.js";
import { readLeaseRecord } from "../../src/kube/lease-record.js";
import { MemberClient } from "../../src/kube/member-client.js";
import { createLogger } from "../../src/log/logger.js";
import { memberClientConfig } from "../../src/sim/kubeconfig.js";
import { type SimulatedMember, startMember } from "../../src/sim/member-server.js";

/**
 * Leader election over HTTP against the simulated member's Lease API (resourceVersion
 * compare-and-swap as a real API server does it), with short timings: one leader at a time, a takeover
 * only after the leader stopped counting itself leading (the fence), a release handed over at once,
 * and a round relayed from a standby to the leader.
 */
const TIMINGS = { leaseDurationMs: 1500, renewDeadlineMs: 1000, retryPeriodMs: 200 };
const LEASE = "/apis/coordination.k8s.io/v1/namespaces/gitfleet-system/leases/gitfleet";
const logger = createLogger({ level: "silent" });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let member: SimulatedMember;
let client: MemberClient;

beforeAll(async () => {
  member = await startMember({ name: "management" });
  client = new MemberClient("management", memberClientConfig(member), { retries: 0, timeoutMs: 500 });
  await client.raw("POST", "/api/v1/namespaces", {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name: "gitfleet-system" },
  });
});
afterAll(async () => {
  await member.close();
});

interface Candidate {
  readonly elector: LeaderElector;
  readonly startedAt: number[];
  readonly stoppedAt: number[];
  readonly relayed: string[];
  readonly run: Promise<void>;
}

function candidate(identity: string): Candidate {
  const startedAt: number[] = [];
  const stoppedAt: number[] = [];
  const relayed: string[] = [];
  const elector = new LeaderElector({
    ...TIMINGS,
    api: client,
    namespace: "gitfleet-system",
    name: "gitfleet",
    identity,
    logger,
    onRelayed: (reason) => relayed.push(reason),
  });
  const run = elector.run({
    started: () => startedAt.push(monotonicMs()),
    stopped: () => stoppedAt.push(monotonicMs()),
  });
  return { elector, startedAt, stoppedAt, relayed, run };
}

async function until(what: string, done: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

describe("leader election on a Lease", () => {
  it("refuses timings an election cannot keep", () => {
    expect(timingsProblem(TIMINGS)).toBeUndefined();
    expect(timingsProblem({ ...TIMINGS, leaseDurationMs: 1000 })).toMatch(/lease duration must be longer/);
    expect(timingsProblem({ ...TIMINGS, renewDeadlineMs: 220 })).toMatch(/renew deadline/);
    expect(timingsProblem({ ...TIMINGS, retryPeriodMs: 0 })).toMatch(/retry period/);
  });

  it("elects one leader; a leader that stops renewing stops counting itself leading before another takes over", async () => {
    const a = candidate("a_1");
    const b = candidate("b_1");
    await until("a leader", () => a.startedAt.length + b.startedAt.length === 1);
    // Both keep campaigning for a while: still one leader, and the Lease names it. (A fixed wait: it
    // checks that nothing happens — no second leader — over a few retry periods.)
    await sleep(600);
    const [leader, standby] = a.startedAt.length === 1 ? [a, b] : [b, a];
    expect(standby.startedAt).toEqual([]);
    expect(leader.elector.leading).toBe(true);
    expect(standby.elector.leading).toBe(false);
    const lease = readLeaseRecord(await client.raw("GET", LEASE));
    expect(lease.holder).toBe(leader === a ? "a_1" : "b_1");
    expect(lease.durationSeconds).toBe(2);

    // The leader goes silent (as when paused or cut off): it stops renewing, without releasing.
    leader.elector.stop();
    let fencedAt = 0;
    await until("the leader's fence", () => {
      if (!leader.elector.leading && fencedAt === 0) fencedAt = monotonicMs();
      return standby.startedAt.length === 1;
    });
    expect(fencedAt).toBeGreaterThan(0);
    expect(fencedAt).toBeLessThan(standby.startedAt[0] as number);
    const taken = readLeaseRecord(await client.raw("GET", LEASE));
    expect(taken.holder).toBe(standby === a ? "a_1" : "b_1");
    expect(taken.transitions).toBe(1);

    // A standby passes a round on; the leader hears it at its next renewal, once.
    const third = candidate("c_1");
    await until("the third candidate's first read of the Lease", () => third.elector.holder !== undefined);
    await third.elector.relay("webhook:github");
    await until("the relayed round", () => standby.relayed.length === 1);
    // Heard once, not again at later renewals. (A fixed wait: it checks that nothing more arrives.)
    await sleep(600);
    expect(standby.relayed).toHaveLength(1);
    expect(standby.relayed[0]).toMatch(/^webhook:github /);

    // A release hands over without waiting for the lease to expire: the Lease names no holder (a
    // released Lease is taken at once: test/kube/lease-record.test.ts), unless the third took it already.
    standby.elector.stop();
    await standby.elector.release();
    expect(standby.elector.leading).toBe(false);
    expect(["", "c_1"]).toContain(readLeaseRecord(await client.raw("GET", LEASE)).holder);
    await until("the third candidate's lead", () => third.startedAt.length === 1);
    expect(readLeaseRecord(await client.raw("GET", LEASE))).toMatchObject({ holder: "c_1", transitions: 2 });
    third.elector.stop();
    await third.elector.release();
    await Promise.all([a.run, b.run, third.run]);
    expect(standby.stoppedAt).toEqual([]);
  });

  it("a member client behind a fence reads, and writes nothing", async () => {
    const fenced = new MemberClient("management", memberClientConfig(member), {
      retries: 0,
      beforeWrite: () => {
        throw new FencedError("replica-b does not hold the leader Lease: it writes nothing");
      },
    });
    const namespace = { apiVersion: "v1", kind: "Namespace", metadata: { name: "fenced" } };
    await expect(fenced.raw("POST", "/api/v1/namespaces", namespace)).rejects.toThrow(FencedError);
    await expect(fenced.apply(namespace, true)).rejects.toThrow(FencedError);
    await expect(
      fenced.get({ apiVersion: "v1", kind: "Namespace", namespace: undefined, name: "fenced" }),
    ).resolves.toBeUndefined();
    expect(
      await fenced.get({
        apiVersion: "v1",
        kind: "Namespace",
        namespace: undefined,
        name: "gitfleet-system",
      }),
    ).toBeDefined();
  });
});
