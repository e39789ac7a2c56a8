import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { JsonMap } from "../../src/apimachinery/json.js";
import type { PlacementSpec } from "../../src/model/types.js";
import { poolNode } from "../../src/render/place-resources.js";
import { scheduleWorkload } from "../../src/schedule/schedule.js";
import type { ScheduleDecision } from "../../src/schedule/types.js";
import { type CountedWorkload, summarizeCapacity } from "../../src/sync/cluster-capacity.js";
import { type ClusterInput, cluster, problem } from "../helpers/scheduling.js";

// The workload the helper's problems schedule, as a capacity reading counts its pods.
const WEB: CountedWorkload = {
  identity: "apps/Deployment/shop/web",
  namespace: "shop",
  selector: { matchLabels: { app: "web" } },
};
const DYNAMIC: PlacementSpec = {
  replicaScheduling: { type: "Divided", weightPreference: { dynamicWeight: "AvailableReplicas" } },
};

const node = (name: string, cpu: number): JsonMap => ({
  metadata: { name },
  status: {
    allocatable: { cpu: String(cpu), memory: "64Gi", pods: "110" },
    conditions: [{ type: "Ready", status: "True" }],
  },
});

const webPod = (nodeName: string | undefined, cpu: string): JsonMap => ({
  metadata: { name: `web-${Math.random()}`, namespace: "shop", labels: { app: "web" } },
  spec: {
    ...(nodeName ? { nodeName } : {}),
    containers: [{ name: "web", resources: { requests: { cpu } } }],
  },
  status: { phase: nodeName ? "Running" : "Pending" },
});

const otherPod = (nodeName: string, cpu: string): JsonMap => ({
  metadata: { name: `other-${Math.random()}`, namespace: "shop", labels: { app: "other" } },
  spec: { nodeName, containers: [{ name: "other", resources: { requests: { cpu } } }] },
  status: { phase: "Running" },
});

const TEMPLATE = { spec: { containers: [{ name: "web", resources: { requests: { cpu: "1" } } }] } };

// A member as its capacity reading records it, with the web workload's pods counted.
function readMember(name: string, nodes: JsonMap[], pods: JsonMap[], counted = true): ClusterInput {
  const capacity = summarizeCapacity(nodes, pods, counted ? [WEB] : undefined);
  return cluster(name, {
    nodes: capacity.pools.map(poolNode),
    ...(capacity.running ? { running: new Map(Object.entries(capacity.running)) } : {}),
  });
}

function decide(
  placement: PlacementSpec,
  clusters: ClusterInput[],
  replicas: number,
  current: Record<string, number>,
  template: unknown = TEMPLATE,
): ScheduleDecision {
  const base = problem(placement, clusters, replicas);
  const result = scheduleWorkload({
    ...base,
    workload: { ...base.workload, podTemplate: template },
    current,
  });
  if (!result.ok) throw new Error(result.error);
  return result.decision;
}

// The issue's fleet: 8, 24 and 16 one-CPU nodes' worth; web runs a 2, b 6 (4 started, 2 not yet bound), c 4.
function readMidRollout(counted = true): ClusterInput[] {
  return [
    readMember("a", [node("a1", 8)], [webPod("a1", "1"), webPod("a1", "1")], counted),
    readMember(
      "b",
      [node("b1", 8), node("b2", 8), node("b3", 8)],
      [
        ...["b1", "b1", "b2", "b2"].map((n) => webPod(n, "1")),
        webPod(undefined, "1"),
        webPod(undefined, "1"),
      ],
      counted,
    ),
    readMember(
      "c",
      [node("c1", 8), node("c2", 8)],
      ["c1", "c1", "c2", "c2"].map((n) => webPod(n, "1")),
      counted,
    ),
  ];
}

const MILLI = { "250m": 250, "500m": 500, "1": 1000, "2": 2000 } as const;
type Request = keyof typeof MILLI;

interface RandomMember {
  readonly nodes: readonly { readonly cpu: number; readonly others: readonly Request[] }[];
  readonly started: number;
  readonly pending: number;
}

// A member whose other apps' pods fill its nodes first (as far as they fit), then web's replicas as
// its scheduler binds them, the rest Pending; read as a capacity reading would. `holds`: web's
// replicas its nodes can hold at most.
function readRandomMember(name: string, member: RandomMember, request: Request) {
  const nodes: JsonMap[] = [];
  const pods: JsonMap[] = [];
  let holds = 0;
  let started = 0;
  for (const [j, spec] of member.nodes.entries()) {
    const nodeName = `${name}-n${j}`;
    nodes.push(node(nodeName, spec.cpu));
    let free = spec.cpu * 1000;
    for (const other of spec.others) {
      if (MILLI[other] > free) continue;
      pods.push(otherPod(nodeName, other));
      free -= MILLI[other];
    }
    const fits = Math.floor(free / MILLI[request]);
    holds += fits;
    const here = Math.min(fits, member.started - started);
    for (let k = 0; k < here; k++) pods.push(webPod(nodeName, request));
    started += here;
  }
  for (let k = 0; k < member.pending; k++) pods.push(webPod(undefined, request));
  return { cluster: readMember(name, nodes, pods), current: started + member.pending, holds };
}

describe("room a capacity reading leaves a workload", () => {
  it("adds back only the pods the reading counted, so no cluster is planned past its allocatable", () => {
    const decision = decide(DYNAMIC, readMidRollout(), 60, { a: 2, b: 6, c: 4 });
    expect(decision.clusters).toEqual({ a: 8, b: 24, c: 16 });
    expect(decision.unschedulable).toBe(12);
    expect(decision.diagnosis.unschedulableReason).toBe(
      "3/3 clusters available; 12 replicas unschedulable: the selected clusters fit 48 in all (cpu)",
    );
    expect(decision.diagnosis.room).toEqual({
      a: { holds: 8, by: "cpu" },
      b: { holds: 24, by: "cpu" },
      c: { holds: 16, by: "cpu" },
    });
  });

  it("adds back the decision's counts for a reading that did not count pods (one from before)", () => {
    const decision = decide(DYNAMIC, readMidRollout(false), 60, { a: 2, b: 6, c: 4 });
    // b: 20 free on its nodes plus the 6 the decision gives it, though only 4 were running.
    expect(decision.clusters).toEqual({ a: 8, b: 26, c: 16 });
    expect(decision.unschedulable).toBe(10);
  });

  it("lets a cluster keep replicas it cannot hold but gives it no more: failover moves them, after its grace", () => {
    // b is full: its six CPUs hold the 4 running replicas and another app's 2; 2 of its 6 wait unbound.
    const full = readMember(
      "b",
      [node("b1", 6)],
      [
        ...[1, 2, 3, 4].map(() => webPod("b1", "1")),
        otherPod("b1", "2"),
        webPod(undefined, "1"),
        webPod(undefined, "1"),
      ],
    );
    const roomy = readMember("a", [node("a1", 16)], []);
    // The total unchanged: nothing moves (Steady); a scale-up goes where there is room.
    expect(decide(DYNAMIC, [roomy, full], 6, { b: 6 }).clusters).toEqual({ b: 6 });
    const grown = decide(DYNAMIC, [roomy, full], 10, { b: 6 });
    expect(grown.clusters).toEqual({ a: 4, b: 6 });
    expect(grown.diagnosis.room).toEqual({ a: { holds: 16, by: "cpu" }, b: { holds: 6, by: "cpu" } });
  });

  it.each([
    ["maxReplicas below the room", { maxReplicas: 3 }, { holds: 3, by: "maxReplicas" }],
    ["maxReplicas above the room", { maxReplicas: 20 }, { holds: 8, by: "cpu" }],
    ["maxReplicas at the room", { maxReplicas: 8 }, { holds: 8, by: "cpu" }],
  ])("names what bounds a cluster's share: %s", (_case, limit, room) => {
    const placement: PlacementSpec = {
      replicaScheduling: {
        ...DYNAMIC.replicaScheduling,
        clusterLimits: [{ targetCluster: { clusterNames: ["a"] }, ...limit }],
      },
    };
    const decision = decide(placement, [readMember("a", [node("a1", 8)], [])], 30, {});
    expect(decision.diagnosis.room?.a).toEqual(room);
  });

  it("never grows a cluster past what its nodes hold, for readings taken mid-rollout", () => {
    const requests = Object.keys(MILLI) as Request[];
    const memberArb = fc.record({
      nodes: fc.array(
        fc.record({
          cpu: fc.integer({ min: 1, max: 16 }),
          others: fc.array(fc.constantFrom(...requests), { maxLength: 6 }),
        }),
        { minLength: 1, maxLength: 4 },
      ),
      started: fc.integer({ min: 0, max: 40 }),
      pending: fc.integer({ min: 0, max: 8 }),
    });
    fc.assert(
      fc.property(
        fc.array(memberArb, { minLength: 1, maxLength: 4 }),
        fc.constantFrom(...requests),
        fc.integer({ min: 0, max: 200 }),
        fc.constantFrom<PlacementSpec>(
          DYNAMIC,
          { replicaScheduling: { type: "Divided" } },
          { replicaScheduling: { type: "Divided", divisionPreference: "Aggregated" } },
          { replicaScheduling: { type: "Divided", avoidDisruption: true } },
        ),
        (members, request, total, placement) => {
          const clusters: ClusterInput[] = [];
          const current: Record<string, number> = {};
          const holds: Record<string, number> = {};
          for (const [i, member] of members.entries()) {
            const name = `m${i}`;
            const read = readRandomMember(name, member, request);
            clusters.push(read.cluster);
            current[name] = read.current;
            holds[name] = read.holds;
          }
          const template = {
            spec: { containers: [{ name: "web", resources: { requests: { cpu: request } } }] },
          };
          const decision = decide(placement, clusters, total, current, template);
          // A cluster keeps what it was given (failover moves what stays Unschedulable); it never grows past its nodes.
          for (const [name, replicas] of Object.entries(decision.clusters))
            expect(replicas, `${name} holds ${holds[name]}`).toBeLessThanOrEqual(
              Math.max(holds[name] ?? 0, current[name] ?? 0),
            );
        },
      ),
      { numRuns: 300 },
    );
  });
});
