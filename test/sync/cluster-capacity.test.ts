import { describe, expect, it } from "vitest";
import type { JsonMap } from "../../src/apimachinery/json.js";
import { CapacityReadings } from "../../src/kube/read-capacity.js";
import { capacityRecord, MAX_RUNNING, readCapacityRecord } from "../../src/model/node-capacity.js";
import {
  addPods,
  type CountedWorkload,
  countedWorkloads,
  MAX_COUNTED_WORKLOADS,
  type RecordedFree,
  readNodes,
  settleCapacity,
  summarizeCapacity,
  WorkloadIndex,
} from "../../src/sync/cluster-capacity.js";
import type { DesiredObject } from "../../src/sync/desired-objects.js";

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

describe("a workload's pods counted by a reading", () => {
  const web: CountedWorkload = {
    identity: "apps/Deployment/shop/web",
    namespace: "shop",
    selector: {
      matchLabels: { app: "web" },
      matchExpressions: [{ key: "tier", operator: "NotIn", values: ["canary"] }],
    },
  };
  const api: CountedWorkload = {
    identity: "apps/Deployment/shop/api",
    namespace: "shop",
    selector: { matchLabels: { app: "api" } },
  };
  const labelled = (
    nodeName: string | undefined,
    namespace: string,
    labels: Record<string, string>,
    phase = "Running",
  ): JsonMap => ({
    metadata: { name: "p", namespace, labels },
    spec: {
      ...(nodeName ? { nodeName } : {}),
      containers: [{ name: "c", resources: { requests: { cpu: "1" } } }],
    },
    status: { phase },
  });
  const nodes = [
    node("a", true, { cpu: "8", pods: "110" }),
    node("b", false, { cpu: "8", pods: "110" }),
    { ...node("c", true, { cpu: "8", pods: "110" }), spec: { unschedulable: true } },
  ];

  it.each([
    [
      "a bound pod its selector matches",
      [labelled("a", "shop", { app: "web" })],
      { "apps/Deployment/shop/web": 1 },
    ],
    [
      "two workloads' pods apart",
      [labelled("a", "shop", { app: "web" }), labelled("a", "shop", { app: "api" })],
      { "apps/Deployment/shop/api": 1, "apps/Deployment/shop/web": 1 },
    ],
    ["a pod of another namespace", [labelled("a", "blog", { app: "web" })], {}],
    ["a pod its expressions leave out", [labelled("a", "shop", { app: "web", tier: "canary" })], {}],
    ["a pod not bound yet", [labelled(undefined, "shop", { app: "web" }, "Pending")], {}],
    ["a finished pod", [labelled("a", "shop", { app: "web" }, "Succeeded")], {}],
    ["a pod on a NotReady node", [labelled("b", "shop", { app: "web" })], {}],
    ["a pod on a cordoned node", [labelled("c", "shop", { app: "web" })], {}],
  ])("%s", (_case, pods, running) => {
    expect(summarizeCapacity(nodes, pods, [web, api]).running).toEqual(running);
  });

  it("is absent from a reading that counted no workloads, and recorded and read back, bounded", () => {
    const pods = [labelled("a", "shop", { app: "web" })];
    expect(summarizeCapacity(nodes, pods).running).toBeUndefined();
    const summary = summarizeCapacity(nodes, pods, [web]);
    const record = capacityRecord(summary);
    expect(record.running).toEqual({ "apps/Deployment/shop/web": 1 });
    expect(readCapacityRecord(JSON.parse(JSON.stringify(record)))).toEqual(summary);
    const hostile = {
      ...record,
      running: {
        "apps/Deployment/shop/web": 2,
        "../../etc/passwd": 1,
        "apps/Deployment//cluster-scoped": 1,
        "apps/Deployment/shop/negative": -1,
        "apps/Deployment/shop/fraction": 1.5,
        "apps/Deployment/shop/text": "3",
      },
    };
    expect(readCapacityRecord(hostile)?.running).toEqual({ "apps/Deployment/shop/web": 2 });
    const many = Object.fromEntries(
      Array.from({ length: MAX_RUNNING + 1 }, (_, i) => [`apps/Deployment/shop/w${i}`, 1]),
    );
    expect(Object.keys(readCapacityRecord({ ...record, running: many })?.running ?? {})).toHaveLength(
      MAX_RUNNING,
    );
  });

  it("counts at most MAX_COUNTED_WORKLOADS workloads, each with a pod template and a selector", () => {
    const desired = (name: string, spec: JsonMap, namespace: string | null = "shop") => ({
      identity: `apps/Deployment/${namespace ?? ""}/${name}`,
      object: {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name, ...(namespace ? { namespace } : {}) },
        spec,
      },
    });
    const template = { metadata: { labels: { app: "x" } }, spec: { containers: [] } };
    const picked = countedWorkloads([
      desired("web", { selector: { matchLabels: { app: "web" } }, template }),
      desired("no-selector", { template }),
      desired("empty-selector", { selector: {}, template }),
      desired("no-template", { selector: { matchLabels: { app: "x" } } }),
      desired("cluster-wide", { selector: { matchLabels: { app: "x" } }, template }, null),
    ] as unknown as DesiredObject[]);
    expect(picked.map((w) => w.identity)).toEqual(["apps/Deployment/shop/web"]);
    const lots = Array.from({ length: MAX_COUNTED_WORKLOADS + 1 }, (_, i) =>
      desired(`w${i}`, { selector: { matchLabels: { app: `w${i}` } }, template }),
    ) as unknown as DesiredObject[];
    expect(countedWorkloads(lots)).toHaveLength(MAX_COUNTED_WORKLOADS);
  });
});

describe("a node's record, kept whole", () => {
  const web: CountedWorkload = {
    identity: "apps/Deployment/shop/web",
    namespace: "shop",
    selector: { matchLabels: { app: "web" } },
  };
  const one = [node("a", true, { cpu: "10", pods: "100" })];
  const webPods = (n: number, cpu = "100m") =>
    Array.from({ length: n }, () => ({
      metadata: { name: "w", namespace: "shop", labels: { app: "web" } },
      spec: { nodeName: "a", containers: [{ name: "c", resources: { requests: { cpu } } }] },
      status: { phase: "Running" },
    }));
  const settle = (pods: JsonMap[], recorded?: RecordedFree, workloads = [web]) => {
    const readings = readNodes(one);
    const index = new WorkloadIndex(workloads);
    addPods(readings, pods, index);
    return settleCapacity(readings, recorded, index.key);
  };

  it("keeps the free amounts and the pods counted with them while the node moves less than a step", () => {
    const first = settle(webPods(2));
    // Two more pods of 100m: 0.2 cores, under a step of 0.5: the record, counts too, stays as it was.
    const second = settle(webPods(4), first.recorded);
    expect(second.capacity.pools[0]?.free.cpu).toBe(9.5);
    expect(second.capacity.running).toEqual({ "apps/Deployment/shop/web": 2 });
    // Six more: a full step; both are recorded afresh, together.
    const third = settle(webPods(10), second.recorded);
    expect(third.capacity.pools[0]?.free.cpu).toBe(9);
    expect(third.capacity.running).toEqual({ "apps/Deployment/shop/web": 10 });
  });

  it("is recorded afresh when the workloads counted change", () => {
    const first = settle(webPods(2), undefined, []);
    expect(first.capacity.running).toEqual({});
    const second = settle(webPods(2), first.recorded, [web]);
    expect(second.capacity.running).toEqual({ "apps/Deployment/shop/web": 2 });
  });
});
