import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { asList, asMap, type JsonMap } from "../../src/apimachinery/json.js";
import { MemberClient } from "../../src/kube/member-client.js";
import { keepNodePools, nodePoolConfigMapName } from "../../src/kube/node-pool-upkeep.js";
import {
  KUBELET_VERSION_ANNOTATION,
  UPGRADE_STARTED_ANNOTATION,
} from "../../src/model/controlplane/node-pool-plan.js";
import type { NodePoolSpec } from "../../src/model/types.js";
import { memberClientConfig } from "../../src/sim/kubeconfig.js";
import { type SimulatedMember, startMember } from "../../src/sim/member-server.js";
import { planeWithPool } from "../helpers/hosted-example.js";

/**
 * A pool's pass against a simulated member over HTTP (standing in for both the host and the hosted
 * cluster): the Nodes cordoned, drained through the Eviction API (DaemonSet pods stay), told their
 * version and uncordoned; a NotReady Node removed; and the host's node-pool ConfigMap written with
 * what a provisioner needs.
 */
let member: SimulatedMember;
let client: MemberClient;
let apiServer = "";
beforeEach(async () => {
  member = await startMember({ name: "pc-1" });
  client = new MemberClient("pc-1", memberClientConfig(member), { retries: 0, timeoutMs: 5_000 });
  apiServer = (await client.version()) as string;
  // The control plane's namespace, as its app makes it in the host.
  await client.raw("POST", "/api/v1/namespaces", {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name: "gitfleet-cp-pc-1" },
  });
});
afterEach(async () => member.close());

const plane = (pool: Partial<NodePoolSpec>) => planeWithPool(apiServer, pool);

const NOW = Date.now();

async function addNode(name: string, kubeletVersion: string, ready: "True" | "Unknown", since: number) {
  await client.raw("POST", "/api/v1/nodes", {
    apiVersion: "v1",
    kind: "Node",
    metadata: { name, labels: { "gitfleet.io/node-pool": "workers" } },
  });
  await client.raw(
    "PATCH",
    `/api/v1/nodes/${name}/status`,
    {
      status: {
        nodeInfo: { kubeletVersion },
        conditions: [{ type: "Ready", status: ready, lastTransitionTime: new Date(since).toISOString() }],
      },
    },
    "application/merge-patch+json",
  );
}

async function addPod(name: string, node: string, daemonSet = false) {
  await client.raw("POST", "/api/v1/namespaces/default/pods", {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name,
      labels: { app: name },
      ...(daemonSet
        ? { ownerReferences: [{ apiVersion: "apps/v1", kind: "DaemonSet", name: "proxy", uid: "u-1" }] }
        : {}),
    },
    spec: { nodeName: node, containers: [{ name: "c", image: "nginx" }] },
  });
}

const nodeOf = async (name: string) => asMap(await client.raw("GET", `/api/v1/nodes/${name}`));
const podNames = async () =>
  asList(asMap(await client.raw("GET", "/api/v1/namespaces/default/pods")).items)
    .map((p) => String(asMap(asMap(p).metadata).name))
    .sort();

describe("a node pool's pass in a cluster", () => {
  it("cordons, drains (sparing DaemonSet pods), tells, then uncordons once the node reports the version", async () => {
    const old = "v1.20.0";
    for (const n of ["w-0", "w-1"]) await addNode(n, old, "True", NOW - 3_600_000);
    await addPod("app", "w-0");
    await addPod("proxy-w-0", "w-0", true);
    const hosted = plane({ replicas: 2 });

    const [first] = await keepNodePools(client, client, hosted, NOW);
    expect(first?.cordoned).toEqual(["w-0"]);
    expect(first?.told).toEqual([]); // a pod was still there to evict
    const cordoned = await nodeOf("w-0");
    expect(asMap(cordoned.spec).unschedulable).toBe(true);
    expect(asMap(asMap(cordoned.metadata).annotations)[UPGRADE_STARTED_ANNOTATION]).toBe(
      new Date(NOW).toISOString(),
    );
    expect(asMap(asMap(await nodeOf("w-1")).spec).unschedulable).toBeUndefined();
    await expect.poll(podNames).toEqual(["proxy-w-0"]);

    const [second] = await keepNodePools(client, client, hosted, NOW + 1000);
    expect(second?.told).toEqual(["w-0"]);
    expect(asMap(asMap(await nodeOf("w-0")).metadata).annotations).toMatchObject({
      [KUBELET_VERSION_ANNOTATION]: apiServer,
    });

    // The machine upgrades and reports it: w-0 is uncordoned and w-1 starts.
    await client.raw(
      "PATCH",
      "/api/v1/nodes/w-0/status",
      { status: { nodeInfo: { kubeletVersion: apiServer } } },
      "application/merge-patch+json",
    );
    const [third] = await keepNodePools(client, client, hosted, NOW + 2000);
    expect(third?.uncordoned).toEqual(["w-0"]);
    expect(third?.cordoned).toEqual(["w-1"]);
    const done = await nodeOf("w-0");
    // Uncordoned: false, which a real server (as the simulated one) leaves out of the Node.
    expect(asMap(done.spec).unschedulable ?? false).toBe(false);
    expect(asMap(asMap(done.metadata).annotations)[UPGRADE_STARTED_ANNOTATION]).toBeUndefined();
    expect(third?.upToDate).toBe(1);
  });

  it("waits while a PodDisruptionBudget refuses the eviction, and tells the node once it allows it", async () => {
    await addNode("w-0", "v1.20.0", "True", NOW - 3_600_000);
    await addPod("app", "w-0");
    await client.raw("PUT", "/api/v1/namespaces/default/pods/app/status", {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "app", namespace: "default", labels: { app: "app" } },
      spec: { nodeName: "w-0", containers: [{ name: "c", image: "nginx" }] },
      status: { phase: "Running", conditions: [{ type: "Ready", status: "True" }] },
    });
    const pdb = {
      apiVersion: "policy/v1",
      kind: "PodDisruptionBudget",
      metadata: { name: "app", namespace: "default" },
      spec: { minAvailable: 1, selector: { matchLabels: { app: "app" } } },
    };
    await client.raw("POST", "/apis/policy/v1/namespaces/default/poddisruptionbudgets", pdb);
    const hosted = plane({ replicas: 1 });
    for (const at of [NOW, NOW + 1000]) {
      const [pass] = await keepNodePools(client, client, hosted, at);
      expect(pass?.told).toEqual([]);
      expect(pass?.errors).toEqual([]);
      expect(pass?.upgrading).toEqual(["w-0"]);
    }
    expect(await podNames()).toEqual(["app"]);
    await client.raw("DELETE", "/apis/policy/v1/namespaces/default/poddisruptionbudgets/app");
    await keepNodePools(client, client, hosted, NOW + 2000);
    expect(await podNames()).toEqual([]);
    const [told] = await keepNodePools(client, client, hosted, NOW + 3000);
    expect(told?.told).toEqual(["w-0"]);
  });

  it("waits for a pod still terminating on the node before it tells the version", async () => {
    await addNode("w-0", "v1.20.0", "True", NOW - 3_600_000);
    await client.raw("POST", "/api/v1/namespaces/default/pods", {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "slow", finalizers: ["example.com/hold"] },
      spec: { nodeName: "w-0", containers: [{ name: "c", image: "nginx" }] },
    });
    const hosted = plane({ replicas: 1 });
    await keepNodePools(client, client, hosted, NOW);
    // Evicted: it is terminating while its finalizer holds it.
    expect(
      asMap(asMap(await client.raw("GET", "/api/v1/namespaces/default/pods/slow")).metadata)
        .deletionTimestamp,
    ).toBeDefined();
    const [waiting] = await keepNodePools(client, client, hosted, NOW + 1000);
    expect(waiting?.told).toEqual([]);
    await client.raw(
      "PATCH",
      "/api/v1/namespaces/default/pods/slow",
      { metadata: { finalizers: null } },
      "application/merge-patch+json",
    );
    const [told] = await keepNodePools(client, client, hosted, NOW + 2000);
    expect(told?.told).toEqual(["w-0"]);
  });

  it("removes a node NotReady past notReadyFor and tells the provisioner through the host's ConfigMap", async () => {
    await addNode("w-0", apiServer, "True", NOW - 3_600_000);
    await addNode("w-1", apiServer, "True", NOW - 3_600_000);
    await addNode("w-2", apiServer, "Unknown", NOW - 300_000);
    const hosted = plane({ repair: { notReadyFor: "5m" } });
    const [pass] = await keepNodePools(client, client, hosted, NOW);
    expect(pass?.removed).toEqual([{ node: "w-2", notReadyForMs: 300_000 }]);
    expect(pass?.missing).toBe(1);
    const nodes = asList(
      asMap(await client.raw("GET", "/api/v1/nodes?labelSelector=gitfleet.io%2Fnode-pool")).items,
    );
    expect(nodes.map((n) => asMap(asMap(n).metadata).name).sort()).toEqual(["w-0", "w-1"]);
    const config = async () =>
      asMap(
        (await client.get({
          apiVersion: "v1",
          kind: "ConfigMap",
          namespace: hosted.namespace,
          name: nodePoolConfigMapName("workers"),
        })) as JsonMap,
      ).data;
    expect(await config()).toMatchObject({
      replicas: "3",
      "kubelet-version": apiServer,
      nodes: "2",
      "up-to-date": "2",
      missing: "1",
    });
    const removed = JSON.parse(String(asMap(await config()).removed)) as { node: string; at: string }[];
    expect(removed).toEqual([{ node: "w-2", at: new Date(NOW).toISOString() }]);
    // A later pass keeps the list (the node is gone, the provisioner may not have acted yet).
    await keepNodePools(client, client, hosted, NOW + 1000);
    expect(JSON.parse(String(asMap(await config()).removed))).toEqual(removed);
  });
});
