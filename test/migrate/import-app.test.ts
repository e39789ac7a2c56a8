import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import type { JsonMap } from "../../src/apimachinery/json.js";
import { importApp } from "../../src/migrate/import-app.js";
import { liveTemplate } from "../../src/migrate/live-template.js";

const server = {
  uid: "u-1",
  resourceVersion: "42",
  generation: 3,
  creationTimestamp: "2026-01-01T00:00:00Z",
  managedFields: [{ manager: "kubectl-create" }],
};

describe("liveTemplate", () => {
  it.each<[string, JsonMap, unknown]>([
    [
      "a Service without its allocated addresses and node ports",
      {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: "web", namespace: "shop", ...server },
        spec: {
          type: "NodePort",
          clusterIP: "10.0.0.7",
          clusterIPs: ["10.0.0.7"],
          ports: [{ port: 80, nodePort: 30080 }],
        },
        status: { loadBalancer: {} },
      },
      {
        template: {
          apiVersion: "v1",
          kind: "Service",
          metadata: { name: "web" },
          spec: { type: "NodePort", ports: [{ port: 80 }] },
        },
      },
    ],
    [
      "a headless Service keeps clusterIP: None",
      {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: "db", namespace: "shop" },
        spec: { clusterIP: "None", clusterIPs: ["None"] },
      },
      {
        template: {
          apiVersion: "v1",
          kind: "Service",
          metadata: { name: "db" },
          spec: { clusterIP: "None", clusterIPs: ["None"] },
        },
      },
    ],
    [
      "a claim without its bound volume, the binder's annotations and Kubernetes' finalizers",
      {
        apiVersion: "v1",
        kind: "PersistentVolumeClaim",
        metadata: {
          name: "data",
          namespace: "other",
          annotations: { "pv.kubernetes.io/bind-completed": "yes", "team.example.com/owner": "db" },
          finalizers: ["kubernetes.io/pvc-protection", "example.com/keep"],
        },
        spec: { volumeName: "pvc-1", resources: { requests: { storage: "1Gi" } } },
      },
      {
        template: {
          apiVersion: "v1",
          kind: "PersistentVolumeClaim",
          metadata: {
            name: "data",
            namespace: "other",
            annotations: { "team.example.com/owner": "db" },
            finalizers: ["example.com/keep"],
          },
          spec: { resources: { requests: { storage: "1Gi" } } },
        },
      },
    ],
    [
      "a Deployment's pod template exactly as it runs, last-applied and revision annotations dropped",
      {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: {
          name: "web",
          namespace: "shop",
          annotations: {
            "deployment.kubernetes.io/revision": "4",
            "kubectl.kubernetes.io/last-applied-configuration": "{}",
          },
          labels: {},
        },
        spec: {
          replicas: 2,
          template: {
            metadata: { creationTimestamp: null, annotations: { "kubectl.kubernetes.io/restartedAt": "t" } },
            spec: { dnsPolicy: "ClusterFirst" },
          },
        },
      },
      {
        template: {
          apiVersion: "apps/v1",
          kind: "Deployment",
          metadata: { name: "web" },
          spec: {
            replicas: 2,
            template: {
              metadata: { annotations: { "kubectl.kubernetes.io/restartedAt": "t" } },
              spec: { dnsPolicy: "ClusterFirst" },
            },
          },
        },
      },
    ],
    [
      "a ServiceAccount without its token Secrets",
      {
        apiVersion: "v1",
        kind: "ServiceAccount",
        metadata: { name: "app", namespace: "shop" },
        secrets: [{ name: "app-token" }],
        imagePullSecrets: [{ name: "pull" }],
      },
      {
        template: {
          apiVersion: "v1",
          kind: "ServiceAccount",
          metadata: { name: "app" },
          imagePullSecrets: [{ name: "pull" }],
        },
      },
    ],
    [
      "a name a member made up to reach outside the app directory",
      { kind: "ConfigMap", metadata: { name: "../../clusters/x" } },
      {
        skipped:
          'not a valid object name: "../../clusters/x" may not be "." or ".." or contain \'/\' or \'%\'',
      },
    ],
    [
      "an object without a name",
      { kind: "ConfigMap", metadata: {} },
      { skipped: "not a valid object name: it has no name" },
    ],
    [
      "an owned object",
      {
        kind: "ReplicaSet",
        metadata: { name: "web-1", ownerReferences: [{ kind: "Deployment", name: "web" }] },
      },
      { skipped: "owned by Deployment web" },
    ],
    [
      "an object gitfleet manages",
      { kind: "ConfigMap", metadata: { name: "c", labels: { "app.kubernetes.io/managed-by": "gitfleet" } } },
      { skipped: "already managed by gitfleet" },
    ],
    [
      "the namespace's CA bundle",
      { kind: "ConfigMap", metadata: { name: "kube-root-ca.crt" } },
      { skipped: "made by Kubernetes in every namespace" },
    ],
    [
      "the default ServiceAccount",
      { kind: "ServiceAccount", metadata: { name: "default" } },
      { skipped: "made by Kubernetes in every namespace" },
    ],
  ])("%s", (_name, live, expected) => {
    expect(liveTemplate(live, "shop")).toEqual(expected);
  });

  it("never takes a Secret, whose values would go to Git", () => {
    const result = liveTemplate(
      { apiVersion: "v1", kind: "Secret", metadata: { name: "db" }, data: { p: "c2VjcmV0" } },
      "shop",
    );
    expect(result).toEqual({ skipped: expect.stringContaining("a Secret's values never go to Git") });
  });
});

const deployment = (name: string, replicas: number, image = "app:1"): JsonMap => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name, namespace: "shop", uid: `${name}-${replicas}` },
  spec: { replicas, template: { spec: { containers: [{ name, image }] } } },
});

describe("importApp", () => {
  it("divides a workload whose clusters run different counts by weights equal to the counts, and patches other differences", () => {
    const result = importApp({
      app: "web",
      namespace: "shop",
      clusters: [
        { cluster: "a", objects: [deployment("web", 2)] },
        { cluster: "b", objects: [deployment("web", 5, "app:2")] },
        { cluster: "c", objects: [] },
      ],
    });
    expect(result.clusters).toEqual(["a", "b"]);
    expect([...result.files.keys()]).toEqual([
      "apps/web/app.yaml",
      "apps/web/deployment-web.yaml",
      "migrations/web.yaml",
      "overrides/web-deployment-web.yaml",
      "placements/web-deployment-web.yaml",
    ]);
    expect(parse(result.files.get("apps/web/deployment-web.yaml") as string).spec.replicas).toBe(7);
    expect(
      parse(result.files.get("placements/web-deployment-web.yaml") as string).spec.replicaScheduling,
    ).toEqual({
      type: "Divided",
      divisionPreference: "Weighted",
      weightPreference: {
        staticWeightList: [
          { targetCluster: { clusterNames: ["a"] }, weight: 2 },
          { targetCluster: { clusterNames: ["b"] }, weight: 5 },
        ],
      },
    });
    expect(parse(result.files.get("overrides/web-deployment-web.yaml") as string).spec.overrideRules).toEqual(
      [
        {
          targetCluster: { clusterNames: ["b"] },
          overriders: {
            jsonPatch: [{ op: "replace", path: "/spec/template/spec/containers/0/image", value: "app:2" }],
          },
        },
      ],
    );
  });

  it("leaves out of a division a cluster that runs none of the workload", () => {
    const result = importApp({
      app: "web",
      namespace: "shop",
      clusters: [
        { cluster: "a", objects: [deployment("web", 0)] },
        { cluster: "b", objects: [deployment("web", 3)] },
      ],
    });
    const placement = parse(result.files.get("placements/web-deployment-web.yaml") as string);
    expect(placement.spec.clusterAffinity).toEqual({ clusterNames: ["b"] });
  });

  it("gives the same files whatever order the members listed their objects in (property)", () => {
    const objects = [
      deployment("web", 2),
      deployment("api", 3),
      { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c" }, data: { k: "v" } },
    ];
    const reference = importApp({
      app: "shop",
      namespace: "shop",
      clusters: [
        { cluster: "a", objects },
        { cluster: "b", objects },
      ],
    });
    fc.assert(
      fc.property(
        fc.shuffledSubarray(objects, { minLength: 3, maxLength: 3 }),
        fc.shuffledSubarray(objects, { minLength: 3, maxLength: 3 }),
        (x, y) => {
          const result = importApp({
            app: "shop",
            namespace: "shop",
            clusters: [
              { cluster: "a", objects: x },
              { cluster: "b", objects: y },
            ],
          });
          expect(result.files).toEqual(reference.files);
        },
      ),
    );
  });
});
