import { describe, expect, it } from "vitest";
import type { JsonMap } from "../../src/apimachinery/json.js";
import { CapacityReadings } from "../../src/kube/read-capacity.js";
import { capacityRecord, readCapacityRecord } from "../../src/model/node-capacity.js";
import {
  addPods,
  type RecordedFree,
  readNodes,
  settleCapacity,
  summarizeCapacity,
} from "../../src/sync/cluster-capacity.js";

const node = (name: string, ready: boolean, allocatable: Record<string, string>): JsonMap => ({
  metadata: { name },
  status: { allocatable, conditions: [{ type: "Ready", status: ready ? "True" : "False" }] },
});

const pod = (nodeName: string | undefined, phase: string, requests: Record<string, string>[]): JsonMap => ({
  metadata: { name: "p" },
  spec: {
    ...(nodeName ? { nodeName } : {}),
    containers: requests.map((r) => ({ name: "c", resources: { requests: r } })),
  },
  status: { phase },
});

describe("a member's capacity summary", () => {
  const nodes = [
    node("a", true, { cpu: "4", memory: "16Gi", pods: "110" }),
    node("b", true, { cpu: "4", memory: "16Gi", pods: "110" }),
    node("c", false, { cpu: "8", memory: "32Gi", pods: "110" }),
  ];
  const freeOf = (capacity: ReturnType<typeof summarizeCapacity>, ready = true) =>
    capacity.pools.filter((p) => p.ready === ready).map((p) => [p.count, p.free]);

  it.each([
    ["no pods", [], [[2, { cpu: 4, memory: 16 * 2 ** 30, pods: 110 }]]],
    [
      // 3.5 cores free is recorded as 3.4 (steps of 0.2); 108 pods as 105 (steps of 5).
      "a running pod's containers summed, rounded down to the node's step",
      [pod("a", "Running", [{ cpu: "250m", memory: "256Mi" }, { cpu: "250m" }])],
      [
        [1, { cpu: 3.4, memory: Math.floor(15.2 * 2 ** 30), pods: 105 }],
        [1, { cpu: 4, memory: 16 * 2 ** 30, pods: 110 }],
      ],
    ],
    [
      "a pending pod bound to a node",
      [pod("b", "Pending", [{ cpu: "1" }])],
      [
        [1, { cpu: 3, memory: 16 * 2 ** 30, pods: 105 }],
        [1, { cpu: 4, memory: 16 * 2 ** 30, pods: 110 }],
      ],
    ],
    [
      "a pod not bound yet",
      [pod(undefined, "Pending", [{ cpu: "1" }])],
      [[2, { cpu: 4, memory: 16 * 2 ** 30, pods: 110 }]],
    ],
    [
      "finished pods",
      [pod("a", "Succeeded", [{ cpu: "1" }]), pod("a", "Failed", [{ cpu: "1" }])],
      [[2, { cpu: 4, memory: 16 * 2 ** 30, pods: 110 }]],
    ],
  ])("%s", (_case, pods, free) => {
    const summary = summarizeCapacity(nodes, pods);
    expect(freeOf(summary)).toEqual(free);
    // Only Ready nodes count in the totals.
    expect(summary.allocatable).toEqual({ cpu: 8, memory: 32 * 2 ** 30, pods: 220 });
    expect([summary.nodes, summary.readyNodes]).toEqual([3, 2]);
    expect(freeOf(summary, false)).toEqual([[1, { cpu: 8, memory: 32 * 2 ** 30, pods: 110 }]]);
  });

  it("keeps labels, taints and cordons apart, and drops per-node labels", () => {
    const labelled = (name: string, labels: Record<string, string>, spec: JsonMap = {}): JsonMap => ({
      ...node(name, true, { cpu: "4", pods: "110" }),
      metadata: { name, labels: { "kubernetes.io/hostname": name, ...labels } },
      spec,
    });
    const summary = summarizeCapacity(
      [
        labelled("n1", { zone: "a" }),
        labelled("n2", { zone: "a" }),
        labelled("n3", { zone: "b" }),
        labelled("n4", { zone: "a" }, { taints: [{ key: "gpu", value: "true", effect: "NoSchedule" }] }),
        labelled("n5", { zone: "a" }, { unschedulable: true }),
      ],
      [],
    );
    expect(summary.pools.map((p) => [p.count, p.labels, p.taints, p.unschedulable])).toEqual([
      [2, { zone: "a" }, [], false],
      [1, { zone: "a" }, [{ key: "gpu", value: "true", effect: "NoSchedule" }], false],
      [1, { zone: "b" }, [], false],
      [1, { zone: "a" }, [], true],
    ]);
  });

  it("is recorded and read back as it was, bounded", () => {
    const summary = summarizeCapacity(nodes, [
      pod("a", "Running", [{ cpu: "100m", memory: "1Mi" }, { cpu: "200m" }]),
    ]);
    const record = capacityRecord(summary);
    expect(record).toMatchObject({ nodes: 3, readyNodes: 2, cpu: { allocatable: 8, requested: 0.4 } });
    expect(readCapacityRecord(JSON.parse(JSON.stringify(record)))).toEqual(summary);
    expect(readCapacityRecord({ pools: [{ count: -1, allocatable: {}, free: {} }, "x"] })?.pools).toEqual([]);
    expect(readCapacityRecord({ nodes: 3 })).toBeUndefined();
  });
});

describe("recorded free amounts", () => {
  const one = [node("a", true, { cpu: "10", pods: "100" })];
  const busy = (cpu: string) => [pod("a", "Running", [{ cpu }])];
  const settle = (cpu: string, recorded?: RecordedFree) => {
    const readings = readNodes(one);
    addPods(readings, busy(cpu));
    return settleCapacity(readings, recorded);
  };

  it.each([
    // Steps of 0.5 cores; 1 pod of 100 pods is within a step of 5.
    ["noise under a step keeps the record", "2", "2400m", 8],
    ["noise the other way keeps it", "2", "1600m", 8],
    ["a full step down records anew", "2", "2500m", 7.5],
    ["a full step up records anew", "2", "1500m", 8.5],
  ])("%s", (_case, first, second, free) => {
    const before = settle(first);
    expect(before.capacity.pools[0]?.free.cpu).toBe(8);
    expect(settle(second, before.recorded).capacity.pools[0]?.free.cpu).toBe(free);
  });
});

describe("capacity readings", () => {
  const member = (listed: string[]) => ({
    cluster: "east",
    pages: async (_apiVersion: string, kind: string, _options: unknown, each: (items: JsonMap[]) => void) => {
      listed.push(kind);
      each(kind === "Node" ? [node(`n${listed.length}`, true, { cpu: String(listed.length) })] : []);
      return true;
    },
  });

  it("list a member's nodes and pods again only once the last reading is older than the interval", async () => {
    let now = 0;
    const listed: string[] = [];
    const readings = new CapacityReadings(() => now);
    const cpu = async (intervalMs: number) =>
      (await readings.read(member(listed), intervalMs))?.allocatable.cpu;
    expect(await cpu(30_000)).toBe(1);
    now = 29_999;
    expect(await cpu(30_000)).toBe(1);
    expect(listed).toEqual(["Node", "Pod"]);
    now = 30_000;
    expect(await cpu(30_000)).toBe(3);
    expect(await cpu(0)).toBe(5);
    expect(listed).toHaveLength(6);
  });

  it("keep the last good reading when one fails", async () => {
    const readings = new CapacityReadings(() => 0);
    expect((await readings.read(member([]), 0))?.allocatable.cpu).toBe(1);
    const failing = { cluster: "east", pages: async () => Promise.reject(new Error("down")) };
    expect((await readings.read(failing, 0))?.allocatable.cpu).toBe(1);
  });
});
