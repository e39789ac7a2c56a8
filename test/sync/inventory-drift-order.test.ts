import { describe, expect, it } from "vitest";
import type { JsonMap } from "../../src/apimachinery/json.js";
import { readEmittedYaml } from "../../src/render/yaml-reader.js";
import { admissionReady, applyPlan, phaseOf } from "../../src/sync/apply-order.js";
import { driftedPaths } from "../../src/sync/drift.js";
import {
  inventoryData,
  inventoryEntries,
  inventoryFromData,
  inventoryFromStatus,
  inventoryStatusText,
  textDigest,
} from "../../src/sync/inventory.js";

describe("inventory", () => {
  // Written as inventories were before entries were structured: they are still read.
  const inventory = inventoryFromData({
    inventory: [
      "apps/Deployment/shop/web apps/v1 web 1111 abcd",
      "/Namespace//shop v1 platform 2222 ef01",
      "not a line",
      "/ConfigMap/shop/pending v1 web - -",
    ].join("\n"),
  }).inventory;

  it("reads legacy lines, skips lines that do not parse, and keeps unknown uids empty", () => {
    expect([...inventory.keys()]).toEqual([
      "apps/Deployment/shop/web",
      "/Namespace//shop",
      "/ConfigMap/shop/pending",
    ]);
    expect(inventory.get("/Namespace//shop")).toEqual({
      identity: "/Namespace//shop",
      apiVersion: "v1",
      kind: "Namespace",
      namespace: undefined,
      name: "shop",
      app: "platform",
      uid: "2222",
      digest: "ef01",
    });
    expect(inventory.get("/ConfigMap/shop/pending")?.uid).toBe("");
  });

  it("round-trips through the ConfigMap and the status file, sorted, with its owner and prune base", () => {
    const record = { cluster: "east", sourceCommit: "b".repeat(40), pruneBase: "a".repeat(40) };
    expect(inventoryFromData(inventoryData(record, inventory))).toEqual({
      cluster: "east",
      pruneBase: "a".repeat(40),
      inventory,
    });
    expect(inventoryEntries(inventory)[0]).toEqual({
      apiVersion: "v1",
      kind: "ConfigMap",
      namespace: "shop",
      name: "pending",
      app: "web",
      uid: "",
      digest: "",
    });
    const text = inventoryStatusText("east", "a".repeat(40), inventory);
    expect(inventoryFromStatus(readEmittedYaml(text)).inventory).toEqual(inventory);
  });

  it("digests text to 16 hex digits", () => {
    expect(textDigest("a")).toMatch(/^[0-9a-f]{16}$/);
    expect(textDigest("a")).not.toBe(textDigest("b"));
  });
});

describe("driftedPaths", () => {
  const rendered: JsonMap = {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "web", labels: { app: "web" } },
    spec: {
      replicas: 3,
      strategy: {},
      template: { spec: { containers: [{ name: "web", image: "web:1" }], volumes: [] } },
    },
  };
  const live = (patch: (o: JsonMap) => void): JsonMap => {
    const copy = JSON.parse(JSON.stringify(rendered)) as JsonMap;
    const metadata = copy.metadata as JsonMap;
    metadata.uid = "u";
    metadata.resourceVersion = "9";
    metadata.labels = { ...(metadata.labels as JsonMap), extra: "kept" };
    const containers = ((copy.spec as JsonMap).template as { spec: { containers: JsonMap[] } }).spec
      .containers;
    if (containers[0]) containers[0].imagePullPolicy = "IfNotPresent";
    copy.status = { replicas: 1 };
    patch(copy);
    return copy;
  };

  const cases: [string, (o: JsonMap) => void, string[]][] = [
    ["nothing changed (defaults, extra labels and status are not drift)", () => {}, []],
    [
      "empty maps and lists the server dropped",
      (o: JsonMap) => {
        const spec = o.spec as JsonMap;
        delete spec.strategy;
        delete (spec.template as { spec: JsonMap }).spec.volumes;
      },
      [],
    ],
    [
      "replicas scaled by hand",
      (o: JsonMap) => {
        (o.spec as JsonMap).replicas = 5;
      },
      ["spec.replicas"],
    ],
    [
      "image changed",
      (o: JsonMap) => {
        ((o.spec as JsonMap).template as { spec: { containers: JsonMap[] } }).spec.containers[0] = {
          name: "web",
          image: "web:2",
        };
      },
      ["spec.template.spec.containers[0].image"],
    ],
    [
      "a container added",
      (o: JsonMap) => {
        ((o.spec as JsonMap).template as { spec: { containers: JsonMap[] } }).spec.containers.push({
          name: "sidecar",
        });
      },
      ["spec.template.spec.containers"],
    ],
    [
      "a label removed",
      (o: JsonMap) => ((o.metadata as JsonMap).labels = { extra: "kept" }),
      ["metadata.labels.app"],
    ],
  ];
  it.each(cases)("%s", (_name, patch, paths) => {
    expect(driftedPaths(rendered, live(patch))).toEqual(paths);
  });
});

describe("apply order", () => {
  const object = (apiVersion: string, kind: string, namespace?: string): JsonMap => ({
    apiVersion,
    kind,
    metadata: { name: kind.toLowerCase(), ...(namespace ? { namespace } : {}) },
  });

  it("puts CRDs, Namespaces, cluster-scoped, then namespaced objects, and pod dependencies before workloads", () => {
    const objects = [
      object("apps/v1", "Deployment", "shop"),
      object("v1", "Service", "shop"),
      object("rbac.authorization.k8s.io/v1", "ClusterRole"),
      object("v1", "ConfigMap", "shop"),
      object("v1", "Namespace"),
      object("apiextensions.k8s.io/v1", "CustomResourceDefinition"),
      object("v1", "ServiceAccount", "shop"),
      object("v1", "LimitRange", "shop"),
      object("v1", "ResourceQuota", "shop"),
    ];
    const plan = applyPlan(objects, (o) => o);
    expect(plan.map((p) => [p.phase, p.items.map((o) => o.kind)])).toEqual([
      ["crds", ["CustomResourceDefinition"]],
      ["namespaces", ["Namespace"]],
      ["cluster", ["ClusterRole"]],
      ["admission", ["LimitRange", "ResourceQuota"]],
      ["namespaced", ["ServiceAccount", "ConfigMap", "Service", "Deployment"]],
    ]);
    expect(phaseOf(object("example.com/v1", "Namespace"))).toBe("cluster");
    // Only the core kinds admission reads; a look-alike of another group is an ordinary object.
    expect(phaseOf(object("example.com/v1", "ResourceQuota", "shop"))).toBe("namespaced");
  });

  it.each([
    ["a quota its controller has not counted yet", { spec: { hard: { pods: "5" } } }, false],
    [
      "a quota counted with other limits (its spec just changed)",
      { spec: { hard: { pods: "5" } }, status: { hard: { pods: "4" } } },
      false,
    ],
    [
      "a quota counted with one limit fewer",
      { spec: { hard: { pods: "5", cpu: "1" } }, status: { hard: { pods: "5" } } },
      false,
    ],
    [
      "a quota counted with its limits",
      { spec: { hard: { pods: "5" } }, status: { hard: { pods: "5" }, used: { pods: "0" } } },
      true,
    ],
  ])("waits for %s: %s", (_, fields, ready) => {
    expect(admissionReady({ apiVersion: "v1", kind: "ResourceQuota", ...fields })).toBe(ready);
    expect(admissionReady({ apiVersion: "v1", kind: "LimitRange", ...fields })).toBe(true);
  });
});
