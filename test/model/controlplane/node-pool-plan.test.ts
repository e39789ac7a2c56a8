import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type PoolAction,
  type PoolNode,
  planNodePool,
  sameVersion,
} from "../../../src/model/controlplane/node-pool-plan.js";
import { type ResolvedNodePool, resolveNodePools } from "../../../src/model/controlplane/node-pools.js";
import { countOf } from "../../../src/model/count-or-percent.js";
import type { NodePoolSpec } from "../../../src/model/types.js";

const NOW = Date.parse("2026-12-05T12:00:00Z");
const OLD = "v1.36.1";
const NEW = "v1.36.3";
const MINUTE = 60_000;

function pool(spec: Partial<NodePoolSpec> = {}, apiServer = NEW): ResolvedNodePool {
  return resolveNodePools(
    [{ name: "workers", replicas: 4, kubeletVersion: NEW, ...spec }],
    apiServer,
  )[0] as ResolvedNodePool;
}

function node(name: string, over: Partial<PoolNode> = {}): PoolNode {
  return {
    name,
    uid: `uid-${name}`,
    kubeletVersion: OLD,
    ready: "True",
    readySince: NOW - 60 * MINUTE,
    told: undefined,
    upgradeStarted: undefined,
    ...over,
  };
}

const fleet = (n: number, over: Partial<PoolNode> = {}) =>
  Array.from({ length: n }, (_, i) => node(`w-${i}`, over));

// "cordon w-0", "drain w-0 v1.36.3", "drain w-1 v1.36.3 told" (its annotation names the version
// already), … in the order the plan gives them.
function steps(actions: readonly PoolAction[]): string[] {
  return actions.map((a) =>
    a.kind === "drain"
      ? `drain ${a.node} ${a.version}${a.told ? " told" : ""}`
      : a.kind === "uncordon"
        ? `uncordon ${a.node} ${a.version}`
        : `${a.kind} ${a.node}`,
  );
}

describe("a node pool's gray kubelet upgrade", () => {
  it.each<[string, number | string, number, string[]]>([
    ["one at a time by default", 1, 4, ["w-0"]],
    ["two at a time", 2, 4, ["w-0", "w-1"]],
    ["50% of four: two", "50%", 4, ["w-0", "w-1"]],
    ["49% of four rounds down to one", "49%", 4, ["w-0"]],
    ["75% of four: three", "75%", 4, ["w-0", "w-1", "w-2"]],
    ["0% never stops an upgrade: one", "0%", 4, ["w-0"]],
    ["more than the pool: all of it", 9, 3, ["w-0", "w-1", "w-2"]],
  ])("starts nodes in name order within maxUnavailable: %s", (_name, maxUnavailable, n, started) => {
    const plan = planNodePool(pool({ upgrade: { maxUnavailable } }), fleet(n), NEW, NOW);
    expect(steps(plan.actions)).toEqual(started.flatMap((w) => [`cordon ${w}`, `drain ${w} ${NEW}`]));
    expect(plan.upgrading).toEqual(started);
    expect(plan.upToDate).toBe(0);
  });

  it("counts NotReady nodes against maxUnavailable: one NotReady node of four leaves no room for one", () => {
    const nodes = [...fleet(3), node("w-3", { ready: "Unknown", readySince: NOW - 1000 })];
    expect(planNodePool(pool(), nodes, NEW, NOW).actions).toEqual([]);
    expect(steps(planNodePool(pool({ upgrade: { maxUnavailable: 2 } }), nodes, NEW, NOW).actions)).toEqual([
      "cordon w-0",
      `drain w-0 ${NEW}`,
    ]);
  });

  it("keeps draining and telling a node in flight, and starts no other", () => {
    const nodes = [node("w-0", { upgradeStarted: NOW - 5000 }), ...fleet(4).slice(1)];
    const plan = planNodePool(pool(), nodes, NEW, NOW);
    expect(steps(plan.actions)).toEqual([`drain w-0 ${NEW}`]);
    expect(plan.upgrading).toEqual(["w-0"]);
  });

  it("uncordons a node once it reports the version Ready, and starts the next in the same pass", () => {
    const nodes = [
      node("w-0", { upgradeStarted: NOW - 5000, kubeletVersion: NEW, told: NEW }),
      ...fleet(4).slice(1),
    ];
    const plan = planNodePool(pool(), nodes, NEW, NOW);
    expect(steps(plan.actions)).toEqual([`uncordon w-0 ${NEW}`, "cordon w-1", `drain w-1 ${NEW}`]);
    expect(plan.upToDate).toBe(1);
  });

  it("does not uncordon a node at the version that is not Ready yet", () => {
    const nodes = [node("w-0", { upgradeStarted: NOW - 5000, kubeletVersion: NEW, ready: "False" })];
    expect(steps(planNodePool(pool({ replicas: 1 }), nodes, NEW, NOW).actions)).toEqual([`drain w-0 ${NEW}`]);
  });

  it("leaves alone a node it did not cordon that already runs the version", () => {
    const nodes = fleet(2, { kubeletVersion: NEW });
    const plan = planNodePool(pool(), nodes, NEW, NOW);
    expect(plan.actions).toEqual([]);
    expect(plan.upToDate).toBe(2);
    expect(plan.held).toBeUndefined();
  });

  it("moves a node newer than the pool's version back to it (a rollback)", () => {
    const plan = planNodePool(pool({ kubeletVersion: OLD }), fleet(1, { kubeletVersion: NEW }), NEW, NOW);
    expect(steps(plan.actions)).toEqual(["cordon w-0", `drain w-0 ${OLD}`]);
  });

  it.each<[string, number, boolean]>([
    ["just inside the progress deadline", 10 * MINUTE - 1, false],
    ["at it", 10 * MINUTE, false],
    ["just past it", 10 * MINUTE + 1, true],
  ])("a node upgrading %s is stalled only past it, and keeps its place", (_name, elapsed, stalled) => {
    const nodes = [node("w-0", { upgradeStarted: NOW - elapsed, told: NEW }), ...fleet(4).slice(1)];
    const plan = planNodePool(pool(), nodes, NEW, NOW);
    expect(Object.keys(plan.stalled)).toEqual(stalled ? ["w-0"] : []);
    if (stalled) expect(plan.stalled["w-0"]).toContain("progressDeadline 600s");
    expect(steps(plan.actions)).toEqual([`drain w-0 ${NEW} told`]);
  });

  it("tells a node in flight its version once: a node told an older one is told again", () => {
    const nodes = [
      node("w-0", { upgradeStarted: NOW - 5000, told: NEW }),
      node("w-1", { upgradeStarted: NOW - 5000, told: OLD }),
    ];
    const plan = planNodePool(pool({ upgrade: { maxUnavailable: 2 } }), nodes, NEW, NOW);
    expect(steps(plan.actions)).toEqual([`drain w-0 ${NEW} told`, `drain w-1 ${NEW}`]);
  });

  it.each<[string, string | undefined, string | undefined]>([
    [
      "an API server older than the pool's version",
      OLD,
      "would be newer than the API server, which reports v1.36.1",
    ],
    ["an API server that reports no version", undefined, "the API server's version is not known yet"],
    ["an API server at the version", NEW, undefined],
    ["an API server newer than it", "v1.37.0", undefined],
    ["a vendor build of the version", "v1.36.3+vendor.1", undefined],
  ])("holds the pool behind %s", (_name, apiServer, held) => {
    const nodes = [node("w-0", { upgradeStarted: NOW - 5000 }), ...fleet(4).slice(1)];
    const plan = planNodePool(pool(), nodes, apiServer, NOW);
    if (held === undefined) expect(plan.held).toBeUndefined();
    else expect(plan.held).toContain(held);
    // Held: nothing starts and the node in flight is not told; else it goes on.
    expect(steps(plan.actions)).toEqual(held ? [] : [`drain w-0 ${NEW}`]);
  });
});

describe("a node pool's repair", () => {
  const notReady = (name: string, forMs: number) => node(name, { ready: "Unknown", readySince: NOW - forMs });

  it.each<[string, number, boolean]>([
    ["just under notReadyFor", 5 * MINUTE - 1, false],
    ["exactly notReadyFor", 5 * MINUTE, true],
    ["past it", 5 * MINUTE + 1, true],
  ])("removes a node NotReady for %s only from then on", (_name, forMs, removed) => {
    const nodes = [...fleet(4).slice(0, 3), notReady("w-3", forMs)];
    const plan = planNodePool(pool({ kubeletVersion: OLD }), nodes, NEW, NOW);
    expect(steps(plan.actions)).toEqual(removed ? ["remove w-3"] : []);
    expect(plan.nodes).toBe(removed ? 3 : 4);
    expect(plan.missing).toBe(removed ? 1 : 0);
    if (removed) expect(plan.actions[0]).toMatchObject({ uid: "uid-w-3", notReadyForMs: forMs });
  });

  it("removes a node whose Ready condition is False as one that is Unknown", () => {
    const nodes = [node("w-0", { ready: "False", readySince: NOW - 6 * MINUTE }), ...fleet(4).slice(1)];
    expect(steps(planNodePool(pool({ kubeletVersion: OLD }), nodes, NEW, NOW).actions)).toEqual([
      "remove w-0",
    ]);
  });

  it.each<[string, number | string, number, boolean]>([
    ["two of five at 40% (two allowed)", "40%", 2, true],
    ["three of five at 40%", "40%", 3, false],
    ["two of five at a count of 2", 2, 2, true],
    ["three of five at a count of 2", 2, 3, false],
    ["one of five at 0", 0, 1, false],
  ])("repairs %s only within maxUnhealthy", (_name, maxUnhealthy, failing, repaired) => {
    const nodes = Array.from({ length: 5 }, (_, i) =>
      i < failing ? notReady(`w-${i}`, 6 * MINUTE) : node(`w-${i}`, { kubeletVersion: OLD }),
    );
    const plan = planNodePool(
      pool({ kubeletVersion: OLD, replicas: 5, repair: { maxUnhealthy } }),
      nodes,
      NEW,
      NOW,
    );
    expect(plan.actions.filter((a) => a.kind === "remove")).toHaveLength(repaired ? failing : 0);
    if (!repaired) expect(plan.repairHeld).toContain(`${failing} of 5 nodes have been NotReady`);
    expect(countOf(maxUnhealthy, 5, 0) >= failing).toBe(repaired);
  });

  it("removes nothing when repair is disabled", () => {
    const nodes = [notReady("w-0", 60 * MINUTE)];
    const plan = planNodePool(pool({ kubeletVersion: OLD, repair: { enabled: false } }), nodes, NEW, NOW);
    expect(plan.actions).toEqual([]);
  });

  it("removes a node that died while upgrading, and the next one starts", () => {
    const nodes = [
      node("w-0", { upgradeStarted: NOW - 20 * MINUTE, ready: "Unknown", readySince: NOW - 6 * MINUTE }),
      ...fleet(4).slice(1),
    ];
    const plan = planNodePool(pool(), nodes, NEW, NOW);
    expect(steps(plan.actions)).toEqual(["remove w-0", "cordon w-1", `drain w-1 ${NEW}`]);
    expect(plan.stalled).toEqual({});
  });
});

describe("whether a pool is moving (the host is looked at again soon)", () => {
  const notReady = (name: string, forMs: number) => node(name, { ready: "Unknown", readySince: NOW - forMs });
  it.each<[string, Partial<NodePoolSpec>, PoolNode[], string | undefined, boolean]>([
    ["every node at the version", {}, fleet(2, { kubeletVersion: NEW }), NEW, false],
    ["a node starting its upgrade", {}, fleet(2), NEW, true],
    ["a node upgrading within its deadline", {}, [node("w-0", { upgradeStarted: NOW - 1000 })], NEW, true],
    ["only a stalled node", {}, [node("w-0", { upgradeStarted: NOW - 11 * MINUTE })], NEW, false],
    ["a pool held by the API server", {}, fleet(2), OLD, false],
    [
      "a NotReady node repair will remove",
      { kubeletVersion: OLD },
      [notReady("w-0", 1000), node("w-1", { kubeletVersion: OLD })],
      NEW,
      true,
    ],
    [
      "a NotReady node with repair off",
      { kubeletVersion: OLD, repair: { enabled: false } },
      [notReady("w-0", 1000), node("w-1", { kubeletVersion: OLD })],
      NEW,
      false,
    ],
    [
      "NotReady nodes past maxUnhealthy",
      { kubeletVersion: OLD, repair: { maxUnhealthy: 0 } },
      [notReady("w-0", 6 * MINUTE)],
      NEW,
      false,
    ],
  ])("%s", (_name, spec, nodes, apiServer, moving) => {
    expect(planNodePool(pool(spec), nodes, apiServer, NOW).moving).toBe(moving);
  });
});

describe("sameVersion", () => {
  it.each<[string | undefined, string, boolean]>([
    ["v1.36.3", "v1.36.3", true],
    ["v1.36.3+k3s1", "v1.36.3", true],
    ["v1.36.3-eks-1a2b", "v1.36.3", true],
    ["v1.36.3-rc.1", "v1.36.3", false],
    ["v1.36.2", "v1.36.3", false],
    [undefined, "v1.36.3", false],
    ["garbage", "v1.36.3", false],
  ])("%s reported against %s: %s", (reported, target, same) => {
    expect(sameVersion(reported, target)).toBe(same);
  });
});

// A machine agent that does as it is told: a node told a version runs it Ready on the next pass.
function agentStep(nodes: readonly PoolNode[], actions: readonly PoolAction[], now: number): PoolNode[] {
  const removed = new Set(actions.filter((a) => a.kind === "remove").map((a) => a.node));
  return nodes
    .filter((n) => !removed.has(n.name))
    .map((n) => {
      let next = { ...n };
      for (const a of actions.filter((x) => x.node === n.name)) {
        if (a.kind === "cordon") next = { ...next, upgradeStarted: now };
        if (a.kind === "drain") next = { ...next, told: a.version };
        if (a.kind === "uncordon") next = { ...next, upgradeStarted: undefined };
      }
      return next.told === undefined ? next : { ...next, kubeletVersion: next.told };
    });
}

describe("property: a gray upgrade stays within maxUnavailable and finishes", () => {
  it("never has more nodes upgrading than maxUnavailable allows, and brings every node to the version", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 12 }),
        fc.oneof(
          fc.integer({ min: 1, max: 6 }),
          fc.integer({ min: 0, max: 100 }).map((p) => `${p}%`),
        ),
        fc.array(fc.boolean(), { minLength: 12, maxLength: 12 }),
        (n, maxUnavailable, already) => {
          const resolved = pool({ replicas: n, upgrade: { maxUnavailable } });
          let nodes = fleet(n).map((x, i) => (already[i] ? { ...x, kubeletVersion: NEW } : x));
          const bound = countOf(maxUnavailable, n);
          for (let pass = 0; pass < 2 * n + 2; pass++) {
            const plan = planNodePool(resolved, nodes, NEW, NOW + pass * 1000);
            expect(plan.upgrading.length).toBeLessThanOrEqual(bound);
            expect(plan.actions.filter((a) => a.kind === "remove")).toEqual([]);
            nodes = agentStep(nodes, plan.actions, NOW + pass * 1000);
          }
          const last = planNodePool(resolved, nodes, NEW, NOW + 10 * n * 1000);
          expect(last.upToDate).toBe(n);
          expect(last.upgrading).toEqual([]);
          expect(nodes.every((x) => x.upgradeStarted === undefined)).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });
});
