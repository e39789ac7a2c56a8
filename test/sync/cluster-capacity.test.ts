import { describe, expect, it } from "vitest";
import { CapacityReadings } from "../../src/kube/read-capacity.js";
import type { JsonMap } from "../../src/model/json.js";
import { capacityRecord, summarizeCapacity } from "../../src/sync/cluster-capacity.js";

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
    node("b", true, { cpu: "3500m", memory: "8Gi", pods: "110" }),
    node("c", false, { cpu: "8", memory: "32Gi", pods: "110" }),
  ];

  it.each([
    ["no pods", [], { cpu: 0, memory: 0, pods: 0 }],
    [
      "a running pod's containers summed",
      [pod("a", "Running", [{ cpu: "250m", memory: "256Mi" }, { cpu: "250m" }])],
      { cpu: 0.5, memory: 268435456, pods: 1 },
    ],
    ["a pending pod bound to a node", [pod("b", "Pending", [{ cpu: "1" }])], { cpu: 1, memory: 0, pods: 1 }],
    ["a pod not bound yet", [pod(undefined, "Pending", [{ cpu: "1" }])], { cpu: 0, memory: 0, pods: 0 }],
    [
      "finished pods",
      [pod("a", "Succeeded", [{ cpu: "1" }]), pod("a", "Failed", [{ cpu: "1" }])],
      { cpu: 0, memory: 0, pods: 0 },
    ],
    ["a pod on a NotReady node", [pod("c", "Running", [{ cpu: "2" }])], { cpu: 0, memory: 0, pods: 0 }],
  ])("%s", (_case, pods, requested) => {
    const summary = summarizeCapacity(nodes, pods);
    expect(summary.requested).toEqual(requested);
    // Only Ready nodes offer capacity.
    expect(summary.allocatable).toEqual({ cpu: 7.5, memory: 24 * 2 ** 30, pods: 220 });
    expect([summary.nodes, summary.readyNodes]).toEqual([3, 2]);
  });

  it("is recorded in cores and bytes, without floating-point noise", () => {
    const summary = summarizeCapacity(nodes, [
      pod("a", "Running", [{ cpu: "100m", memory: "1Mi" }, { cpu: "200m" }]),
    ]);
    expect(summary.requested.cpu).not.toBe(0.3); // 0.1 + 0.2
    expect(capacityRecord(summary)).toEqual({
      nodes: 3,
      readyNodes: 2,
      cpu: { allocatable: 7.5, requested: 0.3 },
      memory: { allocatable: 24 * 2 ** 30, requested: 2 ** 20 },
      pods: { allocatable: 220, requested: 1 },
    });
  });
});

describe("capacity readings", () => {
  it("list a member's nodes and pods again only once the last reading is older than the interval", async () => {
    let now = 0;
    const listed: string[] = [];
    const member = {
      cluster: "east",
      list: async (_apiVersion: string, kind: string) => {
        listed.push(kind);
        return kind === "Node" ? [node(`n${listed.length}`, true, { cpu: String(listed.length) })] : [];
      },
    };
    const readings = new CapacityReadings(() => now);
    const cpu = async (intervalMs: number) => (await readings.read(member, intervalMs))?.allocatable.cpu;
    expect(await cpu(30_000)).toBe(1);
    now = 29_999;
    expect(await cpu(30_000)).toBe(1);
    expect(listed).toEqual(["Node", "Pod"]);
    now = 30_000;
    expect(await cpu(30_000)).toBe(3);
    expect(await cpu(0)).toBe(5);
    expect(listed).toHaveLength(6);
  });
});
