import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FencedError } from "../../src/controller/leadership/leader-lease.js";
import { preferredShard, ShardLeases, shardLeaseName } from "../../src/controller/leadership/shard-leases.js";
import { MemberClient } from "../../src/kube/member-client.js";
import { simulatedKubeconfig } from "../../src/sim/kubeconfig.js";
import { type SimulatedMember, startMember } from "../../src/sim/member-server.js";
import { clientConfig, until } from "../helpers/member.js";

/**
 * The shards' Leases as processes campaign for them (each Lease elected in a thread of its own, on a
 * simulated management cluster over HTTP): at a start every process gets a shard before any gets a
 * second; a shard given up is taken by a process that holds one already.
 */
let management: SimulatedMember;

beforeAll(async () => {
  management = await startMember({ name: "management" });
  await new MemberClient("management", clientConfig(management)).raw("POST", "/api/v1/namespaces", {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name: "gitfleet-system" },
  });
});
afterAll(() => management.close());

const TIMINGS = { leaseDurationMs: 1500, renewDeadlineMs: 1000, retryPeriodMs: 200 };

function candidate(identity: string, shards: number) {
  const gained: number[] = [];
  const released: number[] = [];
  const lost: number[] = [];
  const leases = new ShardLeases(
    {
      kubeconfig: simulatedKubeconfig([management]),
      namespace: "gitfleet-system",
      lease: "gitfleet",
      identity,
      timings: TIMINGS,
      logLevel: "silent",
      shards,
    },
    {
      gained: (shard) => gained.push(shard),
      lost: (shard) => lost.push(shard),
      released: (shard) => released.push(shard),
    },
  );
  return { leases, gained, released, lost };
}

describe("preferredShard", () => {
  it("is the same for an identity every time, in range, and spread over the shards", () => {
    const counts = [0, 0, 0, 0];
    for (let i = 0; i < 400; i++) {
      const shard = preferredShard(`gitfleet-7d9f_${i.toString(16)}`, 4);
      expect(preferredShard(`gitfleet-7d9f_${i.toString(16)}`, 4)).toBe(shard);
      counts[shard] = (counts[shard] as number) + 1;
    }
    for (const count of counts) expect(count).toBeGreaterThan(60);
    expect(preferredShard("only", 1)).toBe(0);
  });
});

describe("ShardLeases", () => {
  it("one shard each at a start; a shard released is taken over by the other process; a replica back gets its share", async () => {
    const a = candidate("holder-a", 2);
    const b = candidate("holder-b", 2);
    try {
      await until(
        () => (a.leases.holding().size === 1 && b.leases.holding().size === 1 ? true : undefined),
        10_000,
      );
      const [ofA] = [...a.leases.holding()] as [number];
      const [ofB] = [...b.leases.holding()] as [number];
      expect(ofA).not.toBe(ofB);
      // A holder's fence passes for its own shard only.
      expect(() => a.leases.fence(ofA)).not.toThrow();
      expect(() => a.leases.fence(ofB)).toThrow(FencedError);
      // The Lease object names its holder.
      const lease = (await new MemberClient("management", clientConfig(management)).raw(
        "GET",
        `/apis/coordination.k8s.io/v1/namespaces/gitfleet-system/leases/${shardLeaseName("gitfleet", ofB)}`,
      )) as { spec: { holderIdentity: string } };
      expect(lease.spec.holderIdentity).toBe("holder-b");
      // b stops: its shard is released, and a — holding one already — takes it after waiting its turn.
      await b.leases.release();
      await until(() => (a.leases.holding().size === 2 ? true : undefined), 10_000);
      expect(new Set(a.gained)).toEqual(new Set([0, 1]));
      // A replica comes back (a restart, a rolling update's new pod): no shard is free, so it asks a
      // for one, and a — above its share — stops writing to it and gives it up.
      const c = candidate("holder-c", 2);
      try {
        await until(() => (c.leases.holding().size === 1 ? true : undefined), 15_000);
        const [ofC] = [...c.leases.holding()] as [number];
        expect([...a.leases.holding()]).toEqual([1 - ofC]);
        expect(() => a.leases.fence(ofC)).toThrow(FencedError);
        // a gave it up: released it when asked or, when a renewal of it lapsed under load first, lost it.
        await until(() => (a.released.includes(ofC) || a.lost.includes(ofC) ? true : undefined), 5_000);
      } finally {
        await c.leases.release();
      }
    } finally {
      await Promise.all([a.leases.release(), b.leases.release()]);
    }
  }, 40_000);
});
