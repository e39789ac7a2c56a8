import type { PlacementSpec } from "../src/model/types.js";
import { scheduleWorkload } from "../src/schedule/schedule.js";
import type { ClusterState, NodeState, SchedulingProblem } from "../src/schedule/types.js";
import { measure, printMeasurements } from "./measure.js";

/**
 * Benchmark: 10,000 Divided workloads over 500 clusters of 50 nodes each, with the node-level
 * estimator. Prints decisions per second and memory; asserts nothing. Target: the batch under 5 s.
 */
const WORKLOADS = Number(process.env.BENCH_WORKLOADS ?? 10_000);
const CLUSTERS = Number(process.env.BENCH_CLUSTERS ?? 500);
const NODES = Number(process.env.BENCH_NODES ?? 50);
const REGIONS = ["us-east", "us-west", "eu-west", "eu-central", "ap-south"];

// A small deterministic generator, so every run schedules the same problems.
let seed = 42;
const random = () => {
  seed = (seed * 1103515245 + 12345) % 2147483648;
  return seed / 2147483648;
};

function makeNodes(): NodeState[] {
  return Array.from({ length: NODES }, (_, i) => ({
    name: `node-${i}`,
    allocatable: { cpu: "32", memory: "128Gi", pods: 110 },
    requested: {
      cpu: `${Math.floor(random() * 30000)}m`,
      memory: `${Math.floor(random() * 120)}Gi`,
      pods: Math.floor(random() * 100),
    },
    labels: { "node.kubernetes.io/instance-type": i % 5 === 0 ? "highmem" : "general" },
  }));
}

const nodeLists = Array.from({ length: CLUSTERS }, makeNodes);
const baseClusters: ClusterState[] = nodeLists.map((nodes, c) => ({
  name: `cluster-${String(c).padStart(4, "0")}`,
  labels: { env: c % 10 === 0 ? "staging" : "prod", shard: `s${c % 8}` },
  provider: ["aws", "gcp", "azure", "idc"][c % 4] ?? "idc",
  region: REGIONS[c % REGIONS.length] ?? "us-east",
  zone: "",
  taints: c % 50 === 0 ? [{ key: "gpu", value: "true", effect: "NoSchedule" }] : [],
  unschedulable: c % 97 === 0,
  ready: c % 89 !== 0,
  nodes,
}));

const shapes = Array.from({ length: 20 }, (_, i) => ({
  spec: {
    containers: [
      {
        name: "main",
        resources: { requests: { cpu: `${100 + i * 50}m`, memory: `${128 * (1 + (i % 8))}Mi` } },
      },
    ],
  },
}));

const placements: PlacementSpec[] = [
  {
    clusterAffinity: { labelSelector: { matchLabels: { env: "prod" } } },
    replicaScheduling: { type: "Divided", weightPreference: { dynamicWeight: "AvailableReplicas" } },
  },
  {
    spreadConstraints: [
      { spreadByField: "region", minGroups: 2 },
      { spreadByField: "cluster", maxGroups: 20 },
    ],
    replicaScheduling: { type: "Divided", weightPreference: { dynamicWeight: "AvailableReplicas" } },
  },
  {
    clusterAffinity: {
      fieldSelector: {
        matchExpressions: [{ key: "region", operator: "In", values: ["us-east", "eu-west"] }],
      },
    },
    replicaScheduling: {
      type: "Divided",
      weightPreference: {
        staticWeightList: [
          { targetCluster: { labelSelector: { matchLabels: { shard: "s1" } } }, weight: 3 },
          { targetCluster: {}, weight: 1 },
        ],
      },
    },
  },
  { maxClusters: 5, replicaScheduling: { type: "Divided", divisionPreference: "Aggregated" } },
  {
    replicaScheduling: {
      type: "Divided",
      avoidDisruption: true,
      clusterLimits: [
        { targetCluster: { labelSelector: { matchLabels: { env: "staging" } } }, maxReplicas: 2 },
      ],
    },
  },
];

const generated = measure("generate 10k problems", () =>
  Array.from({ length: WORKLOADS }, (_, w): SchedulingProblem => {
    const held = Math.floor(random() * CLUSTERS);
    return {
      workload: {
        namespace: `team-${w % 50}`,
        name: `app-${w}`,
        uid: `uid-${w}`,
        podTemplate: shapes[w % shapes.length],
      },
      replicas: 1 + Math.floor(random() * 200),
      placement: placements[w % placements.length] ?? {},
      // One set of cluster states for the whole batch, as a reconcile builds it; counts are per workload.
      clusters: baseClusters,
      current: {
        [baseClusters[held]?.name ?? ""]: 1 + (w % 5),
        [baseClusters[(held + 7) % CLUSTERS]?.name ?? ""]: 1 + (w % 5),
      },
    };
  }),
);

let unschedulable = 0;
let placed = 0;
const run = measure(`schedule ${WORKLOADS} workloads`, () => {
  for (const problem of generated.result) {
    const result = scheduleWorkload(problem);
    if (!result.ok) throw new Error(result.error);
    unschedulable += result.decision.unschedulable;
    placed += Object.values(result.decision.clusters).reduce((a, b) => a + b, 0);
  }
});
printMeasurements(
  `schedule: ${WORKLOADS} Divided workloads, ${CLUSTERS} clusters × ${NODES} nodes (estimator on)`,
  [generated.measurement, run.measurement],
);
const perSecond = (WORKLOADS / run.measurement.milliseconds) * 1000;
process.stdout.write(
  `  decisions per second ${perSecond.toFixed(0)}; replicas placed ${placed}, unschedulable ${unschedulable}\n`,
);
