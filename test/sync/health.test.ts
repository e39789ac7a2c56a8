import { describe, expect, it } from "vitest";
import type { JsonMap } from "../../src/apimachinery/json.js";
import type { HealthStatus } from "../../src/model/health.js";
import { assessHealth, worstHealth } from "../../src/sync/health.js";

const deployment = (spec: JsonMap, status: JsonMap, generation = 2): JsonMap => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "web", generation },
  spec,
  status,
});

const cases: [string, JsonMap | undefined, HealthStatus, RegExp?][] = [
  ["absent", undefined, "Missing", /not found/],
  [
    "deployment not observed",
    deployment(
      { replicas: 3 },
      { observedGeneration: 1, updatedReplicas: 3, availableReplicas: 3, replicas: 3 },
    ),
    "Progressing",
    /observe/,
  ],
  [
    "deployment updating",
    deployment(
      { replicas: 3 },
      { observedGeneration: 2, updatedReplicas: 1, replicas: 3, availableReplicas: 3 },
    ),
    "Progressing",
    /1 of 3 replicas updated/,
  ],
  [
    "deployment old replicas left",
    deployment(
      { replicas: 3 },
      { observedGeneration: 2, updatedReplicas: 3, replicas: 4, availableReplicas: 3 },
    ),
    "Progressing",
    /1 old replicas/,
  ],
  [
    "deployment waiting for availability",
    deployment(
      { replicas: 3 },
      { observedGeneration: 2, updatedReplicas: 3, replicas: 3, availableReplicas: 2 },
    ),
    "Progressing",
    /2 of 3 updated replicas available/,
  ],
  [
    "deployment rolled out",
    deployment(
      { replicas: 3 },
      { observedGeneration: 2, updatedReplicas: 3, replicas: 3, availableReplicas: 3 },
    ),
    "Healthy",
  ],
  [
    "deployment past its deadline",
    deployment(
      { replicas: 3 },
      {
        observedGeneration: 2,
        updatedReplicas: 3,
        conditions: [
          { type: "Progressing", status: "False", reason: "ProgressDeadlineExceeded", message: "slow" },
        ],
      },
    ),
    "Degraded",
    /deadline/,
  ],
  ["deployment scaled to zero", deployment({ replicas: 0 }, { observedGeneration: 2 }), "Healthy"],
  [
    "statefulset short of ready replicas",
    {
      apiVersion: "apps/v1",
      kind: "StatefulSet",
      metadata: { generation: 1 },
      spec: { replicas: 3 },
      status: { observedGeneration: 1, readyReplicas: 2, updatedReplicas: 3 },
    },
    "Progressing",
    /2 of 3 replicas ready/,
  ],
  [
    "statefulset with a partition",
    {
      apiVersion: "apps/v1",
      kind: "StatefulSet",
      metadata: { generation: 1 },
      spec: { replicas: 3, updateStrategy: { type: "RollingUpdate", rollingUpdate: { partition: 2 } } },
      status: {
        observedGeneration: 1,
        readyReplicas: 3,
        updatedReplicas: 1,
        currentRevision: "a",
        updateRevision: "b",
      },
    },
    "Healthy",
  ],
  [
    "daemonset rolling",
    {
      apiVersion: "apps/v1",
      kind: "DaemonSet",
      metadata: { generation: 1 },
      status: {
        observedGeneration: 1,
        desiredNumberScheduled: 4,
        updatedNumberScheduled: 2,
        numberAvailable: 4,
      },
    },
    "Progressing",
    /2 of 4 nodes updated/,
  ],
  [
    "replicaset failing",
    {
      apiVersion: "apps/v1",
      kind: "ReplicaSet",
      metadata: { generation: 1 },
      spec: { replicas: 2 },
      status: {
        observedGeneration: 1,
        conditions: [{ type: "ReplicaFailure", status: "True", message: "quota" }],
      },
    },
    "Degraded",
    /quota/,
  ],
  [
    "job failed",
    {
      apiVersion: "batch/v1",
      kind: "Job",
      status: { conditions: [{ type: "Failed", status: "True", reason: "BackoffLimitExceeded" }] },
    },
    "Degraded",
    /BackoffLimitExceeded/,
  ],
  [
    "job running",
    { apiVersion: "batch/v1", kind: "Job", status: { succeeded: 1 } },
    "Progressing",
    /1 completions/,
  ],
  [
    "job complete",
    { apiVersion: "batch/v1", kind: "Job", status: { conditions: [{ type: "Complete", status: "True" }] } },
    "Healthy",
  ],
  [
    "pvc pending",
    { apiVersion: "v1", kind: "PersistentVolumeClaim", status: { phase: "Pending" } },
    "Progressing",
  ],
  ["pvc bound", { apiVersion: "v1", kind: "PersistentVolumeClaim", status: { phase: "Bound" } }, "Healthy"],
  ["pvc lost", { apiVersion: "v1", kind: "PersistentVolumeClaim", status: { phase: "Lost" } }, "Degraded"],
  [
    "load balancer without an address",
    { apiVersion: "v1", kind: "Service", spec: { type: "LoadBalancer" }, status: {} },
    "Progressing",
    /load balancer/,
  ],
  [
    "load balancer with an address",
    {
      apiVersion: "v1",
      kind: "Service",
      spec: { type: "LoadBalancer" },
      status: { loadBalancer: { ingress: [{ ip: "10.0.0.1" }] } },
    },
    "Healthy",
  ],
  ["cluster IP service", { apiVersion: "v1", kind: "Service", spec: { type: "ClusterIP" } }, "Healthy"],
  [
    "namespace terminating",
    { apiVersion: "v1", kind: "Namespace", status: { phase: "Terminating" } },
    "Progressing",
  ],
  [
    "crd established",
    {
      apiVersion: "apiextensions.k8s.io/v1",
      kind: "CustomResourceDefinition",
      status: { conditions: [{ type: "Established", status: "True" }] },
    },
    "Healthy",
  ],
  [
    "crd not established",
    { apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition", status: {} },
    "Progressing",
  ],
  ["configmap", { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c" } }, "Healthy"],
  [
    "being deleted",
    {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "c", deletionTimestamp: "2026-01-01T00:00:00Z" },
    },
    "Progressing",
    /deleted/,
  ],
];

describe("built-in health rules", () => {
  it.each(cases)("%s → %s", (_name, live, status, reason) => {
    const health = assessHealth(live);
    expect(health.status).toBe(status);
    if (reason) expect(health.reason).toMatch(reason);
  });
});

describe("a ResourceInterpreter's health rules", () => {
  const interpreter = {
    statusPaths: { observedGeneration: "status.observedGeneration" },
    health: {
      rules: [
        {
          field: "status.updatedReadyReplicas",
          operator: "GreaterThanOrEqual" as const,
          valueFrom: "spec.replicas",
        },
      ],
    },
  };
  const cloneSet = (status: JsonMap): JsonMap => ({
    apiVersion: "apps.kruise.io/v1alpha1",
    kind: "CloneSet",
    metadata: { generation: 3 },
    spec: { replicas: 4 },
    status,
  });

  it.each([
    [{ observedGeneration: 2, updatedReadyReplicas: 4 }, "Progressing", /observe/],
    [
      { observedGeneration: 3, updatedReadyReplicas: 3 },
      "Progressing",
      /updatedReadyReplicas is 3, wants GreaterThanOrEqual 4/,
    ],
    [{ observedGeneration: 3, updatedReadyReplicas: 4 }, "Healthy", undefined],
  ] as const)("%j → %s", (status, expected, reason) => {
    const health = assessHealth(cloneSet(status), interpreter);
    expect(health.status).toBe(expected);
    if (reason) expect(health.reason).toMatch(reason);
  });

  it("checks a ready condition", () => {
    const withCondition = { health: { readyCondition: { type: "Ready" } } };
    const live = (status: string): JsonMap => ({
      apiVersion: "example.com/v1",
      kind: "Thing",
      status: { conditions: [{ type: "Ready", status }] },
    });
    expect(assessHealth(live("False"), withCondition)).toEqual({
      status: "Progressing",
      reason: "condition Ready is False",
    });
    expect(assessHealth(live("True"), withCondition).status).toBe("Healthy");
  });
});

describe("worstHealth", () => {
  it("orders Healthy < Progressing < Unknown < Missing < Degraded", () => {
    const h = (status: HealthStatus) => ({ status, reason: status });
    expect(worstHealth([])).toEqual({ status: "Healthy" });
    expect(worstHealth([h("Healthy"), h("Missing"), h("Progressing")]).status).toBe("Missing");
    expect(worstHealth([h("Unknown"), h("Degraded"), h("Missing")]).status).toBe("Degraded");
    expect(worstHealth([h("Progressing"), h("Unknown")]).status).toBe("Unknown");
  });
});
