import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { type ClusterFacts, clusterFacts, fleetView } from "../../src/observe/fleet-view.js";
import { clusterObserved, controlPlaneComponents } from "../../src/status/observed-status.js";
import type { ClusterSyncResult, ObjectResult } from "../../src/sync/sync-result.js";
import { clusterFile, fleetFiles, HEALTHY_EAST, SOURCE, statusFiles } from "../helpers/status-files.js";

const FACTS: ClusterFacts[] = [
  { name: "east", provider: "aws", region: "us-east", mode: "push", unschedulable: false, labels: {} },
  { name: "west", provider: "gcp", region: "eu-west", mode: "push", unschedulable: false, labels: {} },
  { name: "north", provider: "idc", region: "eu-north", mode: "pull", unschedulable: true, labels: {} },
];

describe("the fleet view of a status commit", () => {
  const view = fleetView(fleetFiles(), FACTS, "d".repeat(40));

  it("lists every cluster worst first, with its facts, state and reason", () => {
    expect(view.clusters.map((c) => [c.name, c.state, c.reason ?? "", c.region, c.mode])).toEqual([
      ["west", "NotReady", "Unreachable", "eu-west", "push"],
      ["north", "Unknown", "not synced yet", "eu-north", "pull"],
      ["east", "Healthy", "", "us-east", "push"],
    ]);
    expect(view.statusCommit).toBe("d".repeat(40));
  });

  it("reads a cluster's capacity and condition", () => {
    const east = view.clusters.find((c) => c.name === "east");
    expect(east?.capacity).toEqual({
      nodes: 3,
      readyNodes: 3,
      cpu: { allocatable: 12, requested: 0.6 },
      memory: { allocatable: 51539607552, requested: 805306368 },
      pods: { allocatable: 330, requested: 6 },
    });
    expect(view.clusters.find((c) => c.name === "west")?.condition).toMatchObject({
      ready: false,
      taints: ["cluster.gitfleet.io/not-ready:NoExecute"],
    });
  });

  it("gives each workload desired and ready replicas per cluster and every cluster left out with why", () => {
    const web = view.apps.find((a) => a.name === "web");
    expect(web?.health).toBe("Degraded");
    expect(web?.workloads[0]?.clusters).toEqual({
      east: { desired: 4, ready: 4, reported: 4 },
      west: { desired: 2, ready: 1, reported: 2 },
    });
    expect(web?.workloads[0]?.leftOut).toEqual({ north: "untolerated taint {gpu=true:NoSchedule}" });
    expect(web?.clusters.west).toMatchObject({
      health: "Degraded",
      reason: "Deployment shop/web: 1 of 2 replicas ready",
    });
  });

  it("puts degraded apps first", () => {
    expect(view.apps.map((a) => `${a.name}:${a.health}`)).toEqual(["web:Degraded", "api:Healthy"]);
  });

  it("reads migrations' batches", () => {
    expect(view.migrations.map((m) => [m.migration, m.batches.map((b) => b.state)])).toEqual([
      ["legacy", ["Succeeded", "WaitingApproval"]],
    ]);
  });

  it.each([
    ["objects failed", { failed: 1 }, "Degraded", "objects: 1 failed"],
    ["conflicts", { conflicts: 2 }, "Degraded", "objects: 2 in conflict"],
    ["a Degraded object", { health: "    Healthy: 3\n    Degraded: 1" }, "Degraded", "objects: 1 Degraded"],
    [
      "Progressing objects",
      { health: "    Healthy: 2\n    Progressing: 2" },
      "Progressing",
      "2 objects Progressing",
    ],
    ["all Healthy", {}, "Healthy", undefined],
  ])("a reachable cluster with %s is %s", (_case, change, state, reason) => {
    let observed = HEALTHY_EAST;
    if ("failed" in change) observed = observed.replace("failed: 0", `failed: ${change.failed}`);
    if ("conflicts" in change) observed = observed.replace("conflicts: 0", `conflicts: ${change.conflicts}`);
    if ("health" in change) observed = observed.replace("    Healthy: 4", change.health as string);
    const files = statusFiles({
      "status/source.yaml": SOURCE,
      "status/clusters/east.yaml": clusterFile("east", observed),
    });
    const [east] = fleetView(files, FACTS.slice(0, 1)).clusters;
    expect([east?.state, east?.reason]).toEqual([state, reason]);
  });

  it("shows a cluster that has a status file but no Cluster file any more", () => {
    const view = fleetView(fleetFiles(), []);
    expect(view.clusters.map((c) => c.name).sort()).toEqual(["east", "west"]);
  });

  it("reads a Cluster file's facts", () => {
    const doc = parse(
      "apiVersion: gitfleet.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: a\n  labels: {env: prod}\nspec:\n  provider: aws\n  region: us-east\n  unschedulable: true\n  connection: {mode: pull}\n",
    );
    expect(clusterFacts(doc)).toEqual({
      name: "a",
      provider: "aws",
      region: "us-east",
      mode: "pull",
      unschedulable: true,
      labels: { env: "prod" },
    });
    expect(clusterFacts(parse("kind: Placement\nmetadata: {name: a}"))).toBeUndefined();
  });

  it("shows a hosted cluster's control plane per component, as its host's sync saw it", () => {
    const object = (identity: string, extra: Partial<ObjectResult>): ObjectResult =>
      ({
        identity,
        app: "gitfleet-cp-pc-1",
        action: "unchanged",
        health: { status: "Healthy" },
        ...extra,
      }) as ObjectResult;
    const objects = [
      object("apps/Deployment/gitfleet-cp-pc-1/kube-apiserver", {
        health: { status: "Progressing" },
        desiredReplicas: 1,
        readyReplicas: 0,
        degradedReplicas: 1,
        degradedReason: "CrashLoopBackOff",
      }),
      object("apps/Deployment/gitfleet-cp-pc-1/kube-scheduler", {
        action: "held",
        desiredReplicas: 1,
        readyReplicas: 1,
      }),
      object("apps/StatefulSet/gitfleet-cp-pc-1/etcd", { desiredReplicas: 1, readyReplicas: 1 }),
      object("/Service/gitfleet-cp-pc-1/kube-apiserver", {}),
      { ...object("apps/Deployment/web/web", {}), app: "web" },
    ];
    const components = {
      etcd: "1/1 Healthy",
      "kube-apiserver": "0/1 Progressing (1 CrashLoopBackOff)",
      "kube-scheduler": "1/1 Healthy (held)",
    };
    expect(controlPlaneComponents(objects)).toEqual({ "pc-1": components });
    const host = {
      cluster: "meta-1",
      sourceCommit: "a".repeat(40),
      reachable: true,
      objects,
      pruned: [],
      retained: [],
      inventory: new Map(),
    } as unknown as ClusterSyncResult;
    const files = statusFiles({
      "status/source.yaml": SOURCE,
      "status/clusters/meta-1.yaml": clusterObserved(host),
    });
    const facts = (name: string): ClusterFacts => ({ name, mode: "push", unschedulable: false, labels: {} });
    const pc1 = fleetView(files, [facts("meta-1"), facts("pc-1")]).clusters.find((c) => c.name === "pc-1");
    expect(pc1?.controlPlane).toEqual({ host: "meta-1", components });
  });
});
