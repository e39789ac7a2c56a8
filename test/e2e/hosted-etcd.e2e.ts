import "reflect-metadata";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { asList, asMap } from "../../src/apimachinery/json.js";
import type { MemberClient } from "../../src/kube/member-client.js";
import { createRepo, tempDir } from "../helpers/git-repo.js";
import { pushController } from "../helpers/sync-fleet.js";
import { buildReleases, type Host, hostedClient, startHost } from "./cluster/hosted-host.js";
import type { PodNetwork } from "./cluster/pod-network.js";

/**
 * A hosted cluster whose dedicated etcd has three members, with the real binaries: the host's node runs
 * pods as processes, each off the host network in a network namespace of its own (cluster/pod-network.ts
 * stands in for the CNI, cluster DNS and a LoadBalancer), so the members find each other by their
 * StatefulSet names as in any cluster, and the API server is reached at its LoadBalancer address.
 */

const CLUSTER = "pc-ha";
const NAMESPACE = `gitfleet-cp-${CLUSTER}`;

let meta: Host;
let network: PodNetwork;
let repo: { dir: string; cleanup: () => void };
let controller: Awaited<ReturnType<typeof pushController>>;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const encode = (files: Record<string, string>) =>
  new Map(Object.entries(files).map(([path, text]) => [path, new TextEncoder().encode(text)]));

function fleetFiles(version: string, etcdTag: string, address: string): Record<string, string> {
  return {
    "fleet.yaml": `apiVersion: gitfleet.io/v1alpha1
kind: Fleet
metadata:
  name: hosted-etcd
spec:
  kubernetesVersion: "1.36"
  clusterHealth: { probeInterval: 1s, probeTimeout: 2s, failureThreshold: 2, successThreshold: 1 }
`,
    "clusters/meta-1.yaml":
      "apiVersion: gitfleet.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: meta-1\nspec: {}\n",
    [`clusters/${CLUSTER}.yaml`]: `apiVersion: gitfleet.io/v1alpha1
kind: Cluster
metadata:
  name: ${CLUSTER}
spec:
  controlPlane:
    host: meta-1
    class: ha
    expose: { type: LoadBalancer, address: ${address} }
`,
    "controlplanes/ha.yaml": `apiVersion: gitfleet.io/v1alpha1
kind: ControlPlaneClass
metadata:
  name: ha
spec:
  version: ${version}
  apiServer:
    replicas: 1
    extraArgs: { endpoint-reconciler-type: none, enable-priority-and-fairness: "false" }
  controllerManager: { replicas: 1 }
  scheduler: { replicas: 1 }
  etcd: { version: ${etcdTag}, replicas: 3, storage: 1Gi, backup: { schedule: "0 0 1 1 *", storage: 1Gi } }
`,
  };
}

/** Rounds of the controller until `done` holds. */
async function until(what: string, done: () => Promise<boolean>, timeoutMs = 240_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    await controller.prober.probeOnce();
    await controller.round();
    if (await done().catch(() => false)) return;
    await sleep(500);
  }
  throw new Error(`${what}: not reached in ${timeoutMs / 1000} s`);
}

const MEMBERS = ["etcd-0", "etcd-1", "etcd-2"];

// A member's own metrics, read at its pod's address as Prometheus scrapes them.
async function metric(member: string, name: string): Promise<number | undefined> {
  const ip = meta.runtime.addressOf(NAMESPACE, member);
  if (!ip) return undefined;
  const text = await fetch(`http://${ip}:2381/metrics`, { signal: AbortSignal.timeout(2000) })
    .then((r) => r.text())
    .catch(() => "");
  const line = text.split("\n").find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.split(" ")[1]);
}

async function readyMembers(): Promise<string[]> {
  const pods = asList(
    asMap(
      await meta.client.raw(
        "GET",
        `/api/v1/namespaces/${NAMESPACE}/pods?labelSelector=app.kubernetes.io%2Fcomponent%3Detcd`,
      ),
    ).items,
  ).map((p) => asMap(p));
  return pods
    .filter((p) =>
      asList(asMap(p.status).conditions).some((c) => asMap(c).type === "Ready" && asMap(c).status === "True"),
    )
    .map((p) => String(asMap(p.metadata).name))
    .sort();
}

beforeAll(async () => {
  const releases = buildReleases();
  meta = await startHost(releases, { podNetwork: true });
  network = meta.runtime.podNetwork as PodNetwork;
  repo = tempDir("gitfleet-e2e-hosted-etcd-");
  createRepo(
    repo.dir,
    encode(fleetFiles(releases.version, `${releases.etcd}-0`, network.loadBalancerAddress(1))),
  );
  controller = await pushController(repo.dir, meta.planes.kubeconfig);
}, 900_000);

afterAll(async () => {
  await meta?.stop();
  repo?.cleanup();
});

describe("a three-member etcd with the real binaries", () => {
  let hosted: MemberClient;

  it("three members, each at its own address, form one etcd; the API server answers at its LoadBalancer address", async () => {
    const started = Date.now();
    await until("the hosted API server Ready", async () => {
      const client = await hostedClient(meta.client, CLUSTER);
      if ((await client?.probe())?.outcome !== "ready") return false;
      hosted = client as MemberClient;
      return true;
    });
    await until("three etcd members Ready", async () => (await readyMembers()).length === 3);
    console.log(
      `e2e hosted etcd: commit → API server Ready and three members Ready ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
    const addresses = MEMBERS.map((m) => meta.runtime.addressOf(NAMESPACE, m));
    expect(new Set(addresses).size).toBe(3);
    // One leader, and every member sees it.
    const leaders = await Promise.all(MEMBERS.map((m) => metric(m, "etcd_server_is_leader")));
    expect(leaders.filter((l) => l === 1)).toHaveLength(1);
    for (const m of MEMBERS) expect(await metric(m, "etcd_server_has_leader")).toBe(1);
  });

  it("a follower killed: writes go on with two of three, and it comes back with its data", async () => {
    const leaders = await Promise.all(MEMBERS.map((m) => metric(m, "etcd_server_is_leader")));
    const follower = MEMBERS.find((_, i) => leaders[i] === 0) as string;
    const child = meta.runtime.processOf(NAMESPACE, follower);
    expect(child?.pid).toBeDefined();
    child?.kill("SIGKILL");
    let written = 0;
    let failed = 0;
    const deadline = Date.now() + 120_000;
    let back = false;
    while (Date.now() < deadline && !back) {
      await hosted
        .raw("POST", "/api/v1/namespaces/default/configmaps", {
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { generateName: "write-" },
          data: { at: new Date().toISOString() },
        })
        .then(() => written++)
        .catch(() => failed++);
      back = (await readyMembers()).includes(follower) && written >= 10;
      await sleep(100);
    }
    console.log(
      `e2e hosted etcd: ${follower} killed; ${written} writes went through while it came back, ${failed} failed`,
    );
    expect(back).toBe(true);
    expect(failed).toBe(0);
    expect(written).toBeGreaterThanOrEqual(10);
    // Back in the cluster: it follows the same leader and holds the writes made while it was away.
    await until(
      "the follower caught up",
      async () => (await metric(follower, "etcd_server_has_leader")) === 1,
    );
    const listed = asList(asMap(await hosted.raw("GET", "/api/v1/namespaces/default/configmaps")).items);
    expect(listed.filter((c) => String(asMap(asMap(c).metadata).name).startsWith("write-"))).toHaveLength(
      written,
    );
  });
});
