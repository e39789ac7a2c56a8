import { describe, expect, it } from "vitest";
import {
  describeFit,
  estimateFreeReplicas,
  fitDetail,
  podRequirements,
} from "../../src/schedule/estimator.js";
import type { NodeState } from "../../src/schedule/types.js";
import { cluster } from "../helpers/scheduling.js";

const template = (spec: Record<string, unknown>) => ({ metadata: {}, spec });
const web = podRequirements(
  template({ containers: [{ name: "web", resources: { requests: { cpu: "500m", memory: "1Gi" } } }] }),
);
const node = (fields: Partial<NodeState> = {}): NodeState => ({
  allocatable: { cpu: "4", memory: "8Gi", pods: 110 },
  requested: { cpu: "1", memory: "2Gi", pods: 10 },
  ...fields,
});

describe("capacity estimator", () => {
  it.each<[string, NodeState[], number]>([
    ["the tightest resource decides: cpu 3/0.5 = 6, memory 6Gi/1Gi = 6", [node()], 6],
    [
      "summed over nodes, floor per node (not over the cluster sum)",
      [node({ requested: { cpu: "3700m", pods: 0 } }), node({ requested: { cpu: "3700m", pods: 0 } })],
      0,
    ],
    ["the pod count limits too", [node({ requested: { pods: 108 } })], 2],
    [
      "cordoned and NotReady nodes count for nothing",
      [node({ unschedulable: true }), node({ ready: false }), node()],
      6,
    ],
    [
      "an untolerated node taint excludes the node",
      [node({ taints: [{ key: "dedicated", value: "db", effect: "NoSchedule" }] }), node()],
      6,
    ],
    ["PreferNoSchedule taints do not", [node({ taints: [{ key: "spot", effect: "PreferNoSchedule" }] })], 6],
  ])("%s", (_name, nodes, expected) => {
    expect(estimateFreeReplicas(cluster("a", { nodes }), web, undefined)).toBe(expected);
  });

  it("needs an extended resource the node must have, and honours node selectors and required affinity", () => {
    const gpuPod = podRequirements(
      template({
        nodeSelector: { accelerator: "a100" },
        tolerations: [{ key: "nvidia.com/gpu", operator: "Exists", effect: "NoSchedule" }],
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [{ matchExpressions: [{ key: "gen", operator: "Gt", values: ["3"] }] }],
            },
          },
        },
        containers: [{ name: "t", resources: { requests: { cpu: "1", "nvidia.com/gpu": 1 } } }],
      }),
    );
    const gpuNode = (labels: Record<string, string>, gpus: number) =>
      node({
        labels,
        taints: [{ key: "nvidia.com/gpu", value: "present", effect: "NoSchedule" }],
        allocatable: { cpu: "32", memory: "256Gi", pods: 110, "nvidia.com/gpu": gpus },
      });
    const nodes = [
      gpuNode({ accelerator: "a100", gen: "4" }, 8),
      gpuNode({ accelerator: "a100", gen: "3" }, 8),
      gpuNode({ accelerator: "t4", gen: "9" }, 4),
      node({ labels: { accelerator: "a100", gen: "5" } }),
    ];
    expect(estimateFreeReplicas(cluster("a", { nodes }), gpuPod, undefined)).toBe(8);
  });

  it("uses the larger of the containers' sum and the biggest init container, plus overhead", () => {
    const pod = podRequirements(
      template({
        initContainers: [{ name: "migrate", resources: { requests: { cpu: "2" } } }],
        containers: [
          { name: "a", resources: { requests: { cpu: "500m", memory: "100Mi" } } },
          { name: "b", resources: { requests: { cpu: "500m" } } },
        ],
        overhead: { cpu: "250m" },
      }),
    );
    expect(pod.requests).toEqual(
      new Map([
        ["cpu", 2250],
        ["memory", 104857600],
      ]),
    );
  });

  it("falls back to the observed free count without nodes, and to unknown (unlimited)", () => {
    expect(estimateFreeReplicas(cluster("a"), web, 7)).toBe(7);
    expect(estimateFreeReplicas(cluster("a"), web, undefined)).toBeUndefined();
  });

  it("without nodes, uses a cluster-wide summary as one node (ignoring node selectors, as Karmada's general estimator does)", () => {
    const summary = {
      allocatable: { cpu: "100", memory: "400Gi", pods: 1000 },
      requested: { cpu: "90", memory: "100Gi", pods: 500 },
    };
    const pinned = podRequirements(
      template({
        nodeSelector: { zone: "a" },
        containers: [{ name: "w", resources: { requests: { cpu: "500m" } } }],
      }),
    );
    expect(estimateFreeReplicas(cluster("a", { summary }), pinned, 3)).toBe(20);
  });

  it("is unknown (unlimited) when nothing bounds the pod: no pod count and no requests", () => {
    expect(
      estimateFreeReplicas(
        cluster("a", { nodes: [{ allocatable: { cpu: "4" } }] }),
        podRequirements(undefined),
        undefined,
      ),
    ).toBeUndefined();
  });

  it("a pod without requests is limited only by pod slots", () => {
    expect(
      estimateFreeReplicas(cluster("a", { nodes: [node()] }), podRequirements(undefined), undefined),
    ).toBe(100);
  });
});

describe("what bounds a cluster's room (the dashboard's line)", () => {
  const pod = podRequirements({
    spec: { containers: [{ name: "c", resources: { requests: { cpu: "1", memory: "4Gi" } } }] },
  });
  const node = (cpu: number, memory: number, more: Partial<NodeState> = {}): NodeState => ({
    allocatable: { cpu: 16, memory: 64 * 2 ** 30, pods: 110 },
    free: { cpu, memory: memory * 2 ** 30, pods: 110 },
    ...more,
  });
  it.each([
    ["cpu bounds six nodes", [node(2, 64, { count: 5 }), node(4, 64)], "fits 14 more: cpu on 6 nodes"],
    ["memory bounds most", [node(16, 8, { count: 3 }), node(1, 64)], "fits 7 more: memory on 4 nodes"],
    ["one node", [node(3, 64)], "fits 3 more: cpu on 1 node"],
    ["full", [node(0, 64, { count: 2 })], "fits none: cpu full"],
    [
      "no node it may use",
      [
        node(16, 64, { taints: [{ key: "gpu", effect: "NoSchedule" }] }),
        node(16, 64, { unschedulable: true }),
      ],
      "fits none: no node it may use (2 nodes tainted, cordoned, NotReady or unmatched)",
    ],
  ])("%s", (_case, nodes, text) => {
    expect(describeFit(fitDetail(nodes, pod))).toBe(text);
  });
});
