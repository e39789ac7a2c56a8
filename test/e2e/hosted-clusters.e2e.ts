import "reflect-metadata";
import { execFileSync } from "node:child_process";
import { X509Certificate } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { connect as tlsConnect } from "node:tls";
import { KubeConfig } from "@kubernetes/client-node";
import * as x509 from "@peculiar/x509";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { asList, asMap, type JsonMap } from "../../src/apimachinery/json.js";
import { minorDistance, parseKubeVersion } from "../../src/apimachinery/kube-version.js";
import { listBackups, pullBackup } from "../../src/backup/pull.js";
import type { BackupStore } from "../../src/backup/store-config.js";
import { backupStoresIn } from "../../src/cli/backup-stores.js";
import type { BackupStores } from "../../src/kube/backup-store-secret.js";
import { MemberApiError, MemberClient } from "../../src/kube/member-client.js";
import { appStatusPath } from "../../src/status/status-files.js";
import { gitfleetCli } from "../helpers/cli.js";
import { commitTree, createRepo, gitIn, tempDir } from "../helpers/git-repo.js";
import { type RunningStore, startS3Store } from "../helpers/s3-store.js";
import { type AgeKey, ageKey } from "../helpers/sops.js";
import { pushController, statusFile } from "../helpers/sync-fleet.js";
import type { ControlPlanes } from "./cluster/control-plane.js";
import { emptyEtcd, fillEtcd, writeSmall } from "./cluster/etcd-quota.js";
import {
  buildReleases,
  freeRange,
  GITFLEET_TAG,
  type Host,
  hostedClient as hostedClientOf,
  type Releases,
  restorePhases,
  startHost,
} from "./cluster/hosted-host.js";
import {
  asNode,
  type JoinedNode,
  JoinRefused,
  joinNode,
  readCsr,
  requestServingCertificate,
} from "./cluster/joining-kubelet.js";
import { MachineAgent } from "./cluster/machine-agent.js";
import { NodeSimulator } from "./cluster/node-simulator.js";
import type { ProcessRuntime } from "./cluster/process-runtime.js";

/**
 * Kube-on-Kube with the real binaries: a real host (kube-apiserver, controllers, scheduler) whose one
 * node runs pods as processes (cluster/process-runtime.ts), and two hosted clusters gitfleet renders
 * into it. Everything in gitfleet's path is real — server-side apply to the host, the host's
 * Deployment and StatefulSet controllers and scheduler, the hosted clusters' etcd, kube-apiserver,
 * kube-controller-manager and kube-scheduler processes with the certificates gitfleet generated, and
 * gitfleet connecting with the admin kubeconfig it wrote. Only the container runtime is simulated.
 * The clusters start at the minor release before the tier's (k8s-previous) and are upgraded to it.
 */

const HOSTED = ["pc-1", "pc-2"];
/** The class's pod network: Flannel, each node a /24 of it from the real controller-manager. */
const POD_CIDR = "10.244.0.0/16";
const NAMESPACE = (cluster: string) => `gitfleet-cp-${cluster}`;

let planes: ControlPlanes;
let runtime: ProcessRuntime;
let meta: Host;
/** The host pc-1 moves to once meta-1 is lost (the last scenario), and whether meta-1 is. */
let second: Host | undefined;
let metaLost = false;
let releases: Releases;
const hostedNodes: NodeSimulator[] = [];
let host: MemberClient;
let repo: { dir: string; cleanup: () => void };
let controller: Awaited<ReturnType<typeof pushController>>;
/** The operator's off-host store (a real S3-compatible server) and the age key its backups open with. */
let offsite: RunningStore;
let operatorKey: AgeKey;
// The store as gitfleet run reads it from --backup-stores-dir/offsite, and as an operator's pull reads it.
const storeFiles = () => ({
  endpoint: offsite.endpoint.href,
  bucket: offsite.bucket,
  prefix: "hosted",
  "access-key-id": offsite.key.accessKeyId,
  "secret-access-key": offsite.key.secretAccessKey,
  recipients: `${operatorKey.recipient}\n`,
});
// The stores as gitfleet run reads them from --backup-stores-dir: the store's files and its identity file
// (the operator's identity, which opens its backups for a restore).
function operatorStores(): BackupStores {
  const dir = join(repo.dir, "..", "backup-stores", "offsite");
  mkdirSync(dir, { recursive: true });
  for (const [name, text] of Object.entries(storeFiles())) writeFileSync(join(dir, name), text);
  writeFileSync(join(dir, "identity"), `${operatorKey.identity}\n`, { mode: 0o600 });
  return backupStoresIn(join(dir, ".."));
}
const offsiteStore = (): BackupStore => ({
  location: { endpoint: offsite.endpoint, region: "us-east-1", bucket: offsite.bucket },
  prefix: "hosted/",
  key: offsite.key,
  recipients: [operatorKey.recipient],
});
let version = "";
let binDir = "";
/** The snapshot the backup test found, for the restore. */
let snapshotFile = "";
/** Its backup's key in the store. */
let snapshotKey = "";
/** The snapshots the class keeps (backups run every minute): in each backup volume and in the store. */
const KEEP = 4;
let previous = "";
const ports = new Map<string, number>();

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const BAD_FLAG = 'apiServer: { extraArgs: { no-such-flag: "on" } }';

/** A batch: its name, its one cluster, whether it is approved, whether it is rolled back. */
type Batch = readonly [string, string, boolean, boolean?];

// controlplanes/<name>.yaml: a ControlPlaneUpgrade to `to` in these batches (observed for 10 s).
function upgradeFile(
  name: string,
  to: string,
  batches: readonly Batch[],
  flags = "",
): Record<string, string> {
  const lines = batches.map(
    ([batch, cluster, approved, rollback]) =>
      `    - { name: ${batch}, clusters: [${cluster}], approved: ${approved}${rollback ? ", rollback: true" : ""} }`,
  );
  return {
    [`controlplanes/${name}.yaml`]: `apiVersion: gitfleet.io/v1alpha1
kind: ControlPlaneUpgrade
metadata: { name: ${name} }
spec:
  version: ${to}
  observe: 10s
${flags ? `  ${flags}\n` : ""}  batches:
${lines.join("\n")}
`,
  };
}

// The fleet at the release the clusters start at, with the minor upgrade "cve" (etcd too): pc-1's
// batch approved, pc-2's once `restApproved`.
function cveUpgrade(restApproved: boolean): Record<string, string> {
  return {
    ...fleetFiles(previous),
    ...upgradeFile(
      "cve",
      version,
      [
        ["canary", "pc-1", true],
        ["rest", "pc-2", restApproved],
      ],
      `etcd: { version: ${etcdTag} }`,
    ),
  };
}

// A batch's state as status/upgrades/<upgrade>.yaml records it.
function batchState(upgrade: string, batch: string): string | undefined {
  const found = asList(statusFile(repo.dir, `status/upgrades/${upgrade}.yaml`).batches)
    .map((b) => asMap(b))
    .find((b) => b.name === batch);
  return found?.state as string | undefined;
}

// pc-1's node pools once the join test added them (kept in every later commit).
let pc1Pools = "";
// Its kubelets pinned at the release the clusters start at, so that the class's upgrade leaves them.
const workersPool = () => `    nodePools:
      - name: workers
        replicas: 3
        kubeletVersion: ${previous}
        labels: { tier: general }
        taints: [{ key: dedicated, value: workers, effect: NoSchedule }]
        join: { tokenTTL: 30s }
`;
// A pool that names no kubelet version follows its control plane's (added by the minor upgrade test).
let pc1Followers = "";
const followersPool = `      - name: followers
        replicas: 1
        join: { tokenTTL: 24h }
`;
/** pc-2's replaceCAs token, once the test of compromised keys sets one. */
let pc2ReplaceCAs = "";
/** The class's certificates line while the rotation test renews every certificate (else none). */
let classCertificates = "";
/** The joined machines' agents, by node: they heartbeat and follow the version gitfleet tells them. */
const agents = new Map<string, MachineAgent>();

function fleetFiles(classVersion: string): Record<string, string> {
  const cluster = (name: string) => `apiVersion: gitfleet.io/v1alpha1
kind: Cluster
metadata:
  name: ${name}
  labels: { env: hosted }
spec:
  controlPlane:
    host: meta-1
    class: standard
    expose:
      type: HostPort
      port: ${ports.get(name)}
      address: 127.0.0.1
      nodeSelector: { gitfleet.io/runtime: process }
${name === "pc-1" ? pc1Pools + pc1Followers : ""}${name === "pc-2" && pc2ReplaceCAs ? `    replaceCAs: ${pc2ReplaceCAs}\n` : ""}`;
  return {
    "fleet.yaml": `apiVersion: gitfleet.io/v1alpha1
kind: Fleet
metadata:
  name: hosted
spec:
  kubernetesVersion: "1.36"
  clusterHealth: { probeInterval: 1s, probeTimeout: 2s, failureThreshold: 2, successThreshold: 1, noExecuteAfter: 20s }
`,
    "clusters/meta-1.yaml":
      "apiVersion: gitfleet.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: meta-1\nspec: {}\n",
    ...Object.fromEntries(HOSTED.map((name) => [`clusters/${name}.yaml`, cluster(name)])),
    "controlplanes/standard.yaml": `apiVersion: gitfleet.io/v1alpha1
kind: ControlPlaneClass
metadata:
  name: standard
spec:
  version: ${classVersion}
  apiServer:
    replicas: 1
    extraArgs: { endpoint-reconciler-type: none, enable-priority-and-fairness: "false" }
  controllerManager: { replicas: 1 }
  scheduler: { replicas: 1 }
  etcd:
    version: ${classVersion === previous ? etcdPreviousTag : etcdTag}
    replicas: 1
    storage: 1Gi
    quota: 32Mi
    backup: { schedule: "* * * * *", storage: 1Gi, keep: ${KEEP}, offHost: { store: offsite, image: "gitfleet:${GITFLEET_TAG}" } }
  addons:
    kubeProxy: { mode: nftables }
    cni: { plugin: flannel, podCIDR: ${POD_CIDR} }
${classCertificates}`,
    ...nginxApp("web", 2, "replicaScheduling: { type: Duplicated }"),
    // Divided, and moved at once off a cluster whose NoExecute taint it does not tolerate.
    ...nginxApp(
      "shop",
      4,
      "replicaScheduling: { type: Divided }\n  failover: { cluster: { tolerationSeconds: 0, purgeMode: Directly } }",
    ),
  };
}

// An app of one nginx Deployment in its own namespace, placed on the hosted clusters as `scheduling` says.
function nginxApp(name: string, replicas: number, scheduling: string): Record<string, string> {
  return {
    [`apps/${name}/namespace.yaml`]: `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: ${name}\n`,
    [`apps/${name}/deployment.yaml`]: `apiVersion: apps/v1
kind: Deployment
metadata: { name: ${name}, namespace: ${name} }
spec:
  replicas: ${replicas}
  selector: { matchLabels: { app: ${name} } }
  template:
    metadata: { labels: { app: ${name} } }
    spec:
      containers: [{ name: ${name}, image: "nginx:1.27", resources: { requests: { cpu: 100m, memory: 64Mi } } }]
`,
    [`placements/${name}.yaml`]: `apiVersion: gitfleet.io/v1alpha1
kind: Placement
metadata: { name: ${name} }
spec:
  apps: [${name}]
  clusterAffinity: { labelSelector: { matchLabels: { env: hosted } } }
  ${scheduling}
`,
  };
}

// The replicas the render gives a Divided workload per cluster, as its app's status file records it.
function divided(app: string): Record<string, number> {
  const workloads = asList(statusFile(repo.dir, appStatusPath(app)).workloads).map((w) => asMap(w));
  const clusters = asMap(asMap(workloads[0]?.decision).clusters);
  return Object.fromEntries(
    Object.entries(clusters)
      .map(([c, n]) => [c, Number(n)] as const)
      .filter(([, n]) => n > 0),
  );
}

let etcdTag = "";
/** The etcd release the clusters start at (the patch before the tier's); the minor upgrade moves it. */
let etcdPreviousTag = "";
const encode = (files: Record<string, string>) =>
  new Map(Object.entries(files).map(([path, text]) => [path, new TextEncoder().encode(text)]));

// The fingerprint of the certificate a hosted cluster's API server serves now.
function servedCertificate(cluster: string): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const socket = tlsConnect(
      { host: "127.0.0.1", port: ports.get(cluster) as number, rejectUnauthorized: false },
      () => {
        resolve(socket.getPeerCertificate().fingerprint256);
        socket.end();
      },
    );
    socket.on("error", reject);
  });
}

// A Secret of the host, its keys decoded.
async function hostSecretData(namespace: string, name: string): Promise<Record<string, string>> {
  return Object.fromEntries(
    Object.entries(
      asMap(asMap(await host.get({ apiVersion: "v1", kind: "Secret", namespace, name })).data),
    ).map(([key, value]) => [key, Buffer.from(String(value), "base64").toString("utf8")]),
  );
}

/**
 * A request to a hosted control plane just started again, sent until it is answered. On this two-core
 * host its components, all starting at once, may leave a first request without an answer for seconds;
 * an answer that is unreachable, throttled or a server error is retried, any other one is final.
 */
async function once<T>(what: string, request: () => Promise<T>, timeoutMs = 60_000): Promise<T> {
  let answer: { value: T } | { error: unknown } | undefined;
  let lastError = "";
  await until(
    what,
    async () => {
      try {
        answer = { value: await request() };
      } catch (error) {
        if (error instanceof MemberApiError && error.transient) {
          lastError = error.message;
          return false;
        }
        answer = { error };
      }
      return true;
    },
    timeoutMs,
    async () => `the last answer: ${lastError}`,
  );
  if (answer === undefined) throw new Error(`${what}: no answer`);
  if ("error" in answer) throw answer.error;
  return answer.value;
}

// The hosted cluster's controller-manager acts: a Deployment made now gets its ReplicaSet. A create
// sent again after no answer may find the first one made: that counts.
async function controllerManagerActs(client: MemberClient, name: string): Promise<void> {
  await once(`the Deployment ${name} created`, () =>
    client
      .raw("POST", "/apis/apps/v1/namespaces/default/deployments", {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: name } },
          template: {
            metadata: { labels: { app: name } },
            spec: { containers: [{ name: "c", image: "nginx" }] },
          },
        },
      })
      .catch((error: unknown) => {
        if (error instanceof MemberApiError && error.code === 409) return undefined;
        throw error;
      }),
  );
  await until(
    "the controller-manager made its ReplicaSet",
    async () =>
      asList(
        asMap(
          await client.raw("GET", `/apis/apps/v1/namespaces/default/replicasets?labelSelector=app%3D${name}`),
        ).items,
      ).length === 1,
  );
}

// The key of the cluster's off-host backup of one snapshot (the backup Job puts it before it succeeds).
async function backupKeyOf(cluster: string, snapshot: string): Promise<string> {
  const found = (await listBackups(offsiteStore(), cluster)).find((o) =>
    o.key.endsWith(`-${snapshot.replace(/\.db$/, "")}.tar.age`),
  );
  if (!found) throw new Error(`no off-host backup of ${cluster}'s ${snapshot}`);
  return found.key;
}

// What the status branch records of a hosted cluster's etcd (status/clusters/meta-1.yaml).
function hostedEtcd(cluster: string): JsonMap {
  const observed = asMap(statusFile(repo.dir, "status/clusters/meta-1.yaml").observed);
  return asMap(asMap(asMap(observed.hostedControlPlanes)[cluster]).etcd);
}

// The hosted cluster's client, from the admin kubeconfig gitfleet generated in the host.
function hostedClient(cluster: string): Promise<MemberClient | undefined> {
  return hostedClientOf(host, cluster);
}

/** Rounds of the controller until `done` holds; on the timeout, `explain` says where things stood. */
async function until(
  what: string,
  done: () => Promise<boolean>,
  timeoutMs = 240_000,
  explain?: () => Promise<string>,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    await controller.prober.probeOnce();
    await controller.round();
    if (await done().catch(() => false)) return;
    await sleep(500);
  }
  const why = explain ? `; ${await explain().catch((e: unknown) => String(e))}` : "";
  throw new Error(`${what}: not reached in ${timeoutMs / 1000} s${why}`);
}

// What the controller's last sync of a hosted cluster did with one object, and what it read there.
async function lastSyncOf(cluster: string, identity: string): Promise<string> {
  const result = controller.syncer.latest().get(cluster);
  const object = result?.objects.find((o) => o.identity === identity);
  return JSON.stringify({
    reachable: result?.reachable,
    error: result?.error,
    version: result?.version,
    object,
    sample: await sample(cluster),
  });
}

async function hostedReady(cluster: string): Promise<boolean> {
  const client = await hostedClient(cluster);
  return (await client?.probe())?.outcome === "ready";
}

function appHealth(app: string, cluster: string): string | undefined {
  return asMap(asMap(statusFile(repo.dir, appStatusPath(app)).observed)[cluster]).health as
    | string
    | undefined;
}

beforeAll(async () => {
  releases = buildReleases();
  ({ version, previous, binDir } = releases);
  etcdTag = `${releases.etcd}-0`;
  etcdPreviousTag = `${releases.etcdPrevious}-0`;
  meta = await startHost(releases);
  ({ planes, runtime, client: host } = meta);
  for (const cluster of HOSTED) ports.set(cluster, await freeRange());
  repo = tempDir("gitfleet-e2e-hosted-");
  offsite = await startS3Store();
  operatorKey = await ageKey();
}, 900_000);

afterAll(async () => {
  for (const agent of agents.values()) agent.stop();
  for (const nodes of hostedNodes) nodes.stop();
  if (!metaLost) await meta?.stop();
  await second?.stop();
  await offsite?.stop();
  repo?.cleanup();
});

describe("hosted control planes on a real host", () => {
  it("a commit adds two hosted clusters: their API servers become Ready, they become members, and an app is Healthy inside them", async () => {
    const committed = Date.now();
    createRepo(repo.dir, encode(fleetFiles(previous)));
    controller = await pushController(repo.dir, planes.kubeconfig, {}, { backupStores: operatorStores() });
    const ready = new Map<string, number>();
    await until("both hosted API servers Ready", async () => {
      for (const cluster of HOSTED)
        if (!ready.has(cluster) && (await hostedReady(cluster))) ready.set(cluster, Date.now());
      return ready.size === HOSTED.length;
    });
    // Nodes for the hosted clusters (simulated kubelets on their real API servers), so app pods run.
    for (const cluster of HOSTED) {
      const client = (await hostedClient(cluster)) as MemberClient;
      const nodes = new NodeSimulator({
        cluster,
        client,
        nodes: 2,
        allocatable: { cpu: "8", memory: "16Gi", pods: "110" },
      });
      await nodes.start();
      hostedNodes.push(nodes);
    }
    await until("web Healthy in both hosted clusters", async () =>
      HOSTED.every((c) => appHealth("web", c) === "Healthy"),
    );
    const healthy = Date.now();
    for (const cluster of HOSTED)
      console.log(
        `e2e hosted: ${cluster}: commit → API server Ready ${(((ready.get(cluster) ?? 0) - committed) / 1000).toFixed(1)} s; commit → first app Healthy ${((healthy - committed) / 1000).toFixed(1)} s`,
      );
    // The hosted clusters are members: the status branch records their version as their /version says.
    for (const cluster of HOSTED) {
      const observed = asMap(statusFile(repo.dir, `status/clusters/${cluster}.yaml`).observed);
      expect(observed.kubernetesVersion).toBe(previous);
      const client = (await hostedClient(cluster)) as MemberClient;
      const pods = asList(asMap(await client.raw("GET", "/api/v1/namespaces/web/pods")).items).map((p) =>
        asMap(p),
      );
      expect(pods.filter((p) => asMap(p.status).phase === "Running")).toHaveLength(2);
      // CoreDNS, the addon, is there too.
      expect(
        await client.get({
          apiVersion: "apps/v1",
          kind: "Deployment",
          namespace: "kube-system",
          name: "coredns",
        }),
      ).toBeDefined();
    }
    // No key or certificate body anywhere in the status branch's history.
    expect(gitIn(repo.dir, "log", "-p", "gitfleet/status")).not.toMatch(/BEGIN|PRIVATE KEY|client-key-data/);
  });

  it("a SIGKILLed hosted API server is restarted: the cluster goes NotReady, then Ready", async () => {
    const before = divided("shop");
    expect(Object.keys(before).sort()).toEqual(HOSTED);
    const child = runtime.processOf(NAMESPACE("pc-1"), await podName("pc-1", "kube-apiserver"));
    expect(child?.pid).toBeDefined();
    child?.kill("SIGKILL");
    await until(
      "pc-1 NotReady",
      async () => controller.prober.conditions().get("pc-1")?.health.ready === false,
      60_000,
    );
    await until(
      "pc-1 Ready again",
      async () => controller.prober.conditions().get("pc-1")?.health.ready === true,
      120_000,
    );
    const pod = asMap(
      await host.raw(
        "GET",
        `/api/v1/namespaces/${NAMESPACE("pc-1")}/pods/${await podName("pc-1", "kube-apiserver")}`,
      ),
    );
    expect(asMap(asList(asMap(pod.status).containerStatuses)[0]).restartCount).toBeGreaterThanOrEqual(1);
    // Back within seconds, before its NoExecute taint (noExecuteAfter 20s): the Divided shop stays
    // where it was. An outage past it moves shop (the crash-loop test below), and it stays moved.
    expect(divided("shop")).toEqual(before);
  });

  it("a deleted controller-manager Deployment in the host is restored by drift correction", async () => {
    const path = `/apis/apps/v1/namespaces/${NAMESPACE("pc-2")}/deployments/kube-controller-manager`;
    const before = asMap(asMap(await host.raw("GET", path)).metadata).uid;
    await host.raw("DELETE", path);
    await until("kube-controller-manager of pc-2 back", async () => {
      const now = asMap(await host.raw("GET", path).catch(() => undefined));
      return (
        asMap(now.metadata).uid !== undefined &&
        asMap(now.metadata).uid !== before &&
        asMap(now.status).readyReplicas === 1
      );
    });
  });

  it("a node pool's machines join pc-1 by TLS bootstrapping: the real controller-manager signs their certificates, they register as themselves, and an expired token is refused", async () => {
    pc1Pools = workersPool();
    commitTree(repo.dir, encode(fleetFiles(previous)), "pc-1 gets a pool of workers");
    const namespace = NAMESPACE("pc-1");
    const joinSecret = async () =>
      asMap((await host.get({ apiVersion: "v1", kind: "Secret", namespace, name: "join-workers" }))?.data);
    await until("the host holds pc-1's join Secret", async () => Object.keys(await joinSecret()).length > 0);
    const decoded = (data: JsonMap, key: string) => Buffer.from(String(data[key]), "base64").toString("utf8");
    const first = decoded(await joinSecret(), "token");
    expect(decoded(await joinSecret(), "command")).toMatch(
      /^kubeadm join 127\.0\.0\.1:\d+ --token [a-z0-9]{6}\.[a-z0-9]{16} --discovery-token-ca-cert-hash sha256:[0-9a-f]{64}$/,
    );
    const client = (await hostedClient("pc-1")) as MemberClient;
    const joined: JoinedNode[] = [];
    const took: string[] = [];
    for (const node of ["pc-1-workers-0", "pc-1-workers-1", "pc-1-workers-2"]) {
      const started = Date.now();
      const addresses = [
        { type: "Hostname", address: node },
        { type: "InternalIP", address: `10.0.0.${10 + joined.length}` },
      ];
      joined.push(await joinNode({ host, namespace, pool: "workers", node, token: first, addresses }));
      took.push(((Date.now() - started) / 1000).toFixed(1));
    }
    console.log(
      `e2e hosted: pc-1: a machine joins (discovery, CSR approved and signed, Node registered) in ${took.join(", ")} s`,
    );
    const ca = new x509.X509Certificate(joined[0]?.caPem ?? "");
    for (const node of joined) {
      // Issued by the hosted cluster's CA, through kube-controller-manager's signer, to this node.
      const certificate = new x509.X509Certificate(node.certificatePem);
      expect(certificate.subjectName.getField("CN")).toEqual([`system:node:${node.node}`]);
      expect(certificate.subjectName.getField("O")).toEqual(["system:nodes"]);
      expect(await certificate.verify({ publicKey: ca.publicKey, signatureOnly: true })).toBe(true);
      expect(asMap(node.registered.metadata).name).toBe(node.node);
      // With the pool's labels and taints, as the join Secret's kubelet flags say.
      expect(asMap(asMap(node.registered.metadata).labels)).toMatchObject({
        "gitfleet.io/node-pool": "workers",
        tier: "general",
      });
      // (beside the not-ready taint the API server adds to a new Node)
      expect(asList(asMap(node.registered.spec).taints)).toContainEqual({
        key: "dedicated",
        value: "workers",
        effect: "NoSchedule",
      });
      // The Node authorizer knows it: it may read itself, and not change another node.
      await asNode(node, "GET", `/api/v1/nodes/${node.node}`);
      const other = node.node === "pc-1-workers-0" ? "pc-1-workers-1" : "pc-1-workers-0";
      await expect(
        asNode(node, "PATCH", `/api/v1/nodes/${other}`, { metadata: { labels: { x: "y" } } }),
      ).rejects.toMatchObject({ status: 403 });
    }
    // kube-proxy and Flannel, rendered for a cluster with pools, were taken by the hosted API server.
    for (const name of ["kube-proxy", "kube-flannel-ds"])
      expect(
        await client.get({ apiVersion: "apps/v1", kind: "DaemonSet", namespace: "kube-system", name }),
      ).toBeDefined();
    const proxyConfig = asMap(
      (
        await client.get({
          apiVersion: "v1",
          kind: "ConfigMap",
          namespace: "kube-system",
          name: "kube-proxy",
        })
      )?.data,
    )["config.conf"];
    expect(JSON.parse(String(proxyConfig))).toMatchObject({ mode: "nftables", clusterCIDR: POD_CIDR });
    // The real controller-manager gives each node a /24 of the pod range, which flanneld reads.
    await until("each joined node has a pod range", async () => {
      const ranges = await Promise.all(
        joined.map(
          async (n) => asMap(asMap(await client.raw("GET", `/api/v1/nodes/${n.node}`)).spec).podCIDR,
        ),
      );
      return (
        ranges.every((r) => typeof r === "string" && /^10\.244\.\d{1,3}\.0\/24$/.test(r)) &&
        new Set(ranges).size === 3
      );
    });
    const csrs = asList(
      asMap(await client.raw("GET", "/apis/certificates.k8s.io/v1/certificatesigningrequests")).items,
    ).map((c) => asMap(c));
    const approved = csrs.filter((c) =>
      asList(asMap(c.status).conditions).some((k) => asMap(k).type === "Approved"),
    );
    expect(approved.map((c) => asMap(c.spec).username).sort()).toEqual(
      Array(3).fill(`system:bootstrap:${first.split(".")[0]}`),
    );
    // Serving certificates: gitfleet approves a node's request for the names its Node reports (the
    // real controller-manager then signs it), and leaves pending one that names an address it does not.
    const [w0, w1] = joined as [JoinedNode, JoinedNode];
    const servingAsked = await requestServingCertificate(w0, { dns: [w0.node], ip: ["10.0.0.10"] });
    const strayAsked = await requestServingCertificate(w1, { dns: [w1.node], ip: ["10.0.0.99"] });
    let serving: string | undefined;
    await until("gitfleet approved w0's serving CSR and the controller-manager signed it", async () => {
      serving = (await readCsr(w0, servingAsked)).certificatePem;
      return serving !== undefined;
    });
    const servingCertificate = new x509.X509Certificate(serving ?? "");
    expect(await servingCertificate.verify({ publicKey: ca.publicKey, signatureOnly: true })).toBe(true);
    expect(servingCertificate.getExtension(x509.SubjectAlternativeNameExtension)?.names.toJSON()).toEqual([
      { type: "dns", value: w0.node },
      { type: "ip", value: "10.0.0.10" },
    ]);
    const approval = (await readCsr(w0, servingAsked)).conditions.find((c) => c.type === "Approved");
    expect(approval?.reason).toBe("GitfleetNodePoolRule");
    const stray = await readCsr(w1, strayAsked);
    expect(stray.certificatePem).toBeUndefined();
    expect(stray.conditions).toEqual([]);
    await until("the status branch says why the stray CSR waits", async () =>
      JSON.stringify(statusFile(repo.dir, "status/clusters/meta-1.yaml")).includes(
        "names 10.0.0.99, which node pc-1-workers-1 does not report",
      ),
    );
    expect(gitIn(repo.dir, "log", "--format=%B", "gitfleet/status")).toContain(
      "meta-1: serving certificates of pc-1 approved for pc-1-workers-0",
    );
    // The first token lives 30 s: past that the API server refuses it. The next sync of the host
    // (here: the commit that grows the pool to four, its tokens now living a day so that later syncs
    // keep that one) mints a new one into the join Secret.
    const expires = Date.parse(decoded(await joinSecret(), "expiration"));
    await until("the first token expired", async () => Date.now() > expires + 1000);
    await expect(
      joinNode({ host, namespace, pool: "workers", node: "pc-1-workers-3", token: first }),
    ).rejects.toBeInstanceOf(JoinRefused);
    pc1Pools = workersPool().replace("replicas: 3", "replicas: 4").replace("tokenTTL: 30s", "tokenTTL: 24h");
    commitTree(repo.dir, encode(fleetFiles(previous)), "pc-1's workers grow to four");
    await until(
      "a newer token in the join Secret",
      async () => decoded(await joinSecret(), "token") !== first,
    );
    const fourth = await joinNode({ host, namespace, pool: "workers", node: "pc-1-workers-3" });
    expect(asMap(fourth.registered.metadata).name).toBe("pc-1-workers-3");
    // From here on each machine reports as a kubelet does, at the version its join Secret gave it.
    for (const node of [...joined, fourth]) agents.set(node.node, new MachineAgent(node).start());
    expect(fourth.kubeletVersion).toBe(previous);
    // The status branch records the token by fingerprint and expiry, never the token.
    const observed = statusFile(repo.dir, "status/clusters/meta-1.yaml");
    expect(JSON.stringify(observed)).toContain(`${namespace}/join-workers`);
    expect(gitIn(repo.dir, "log", "-p", "gitfleet/status")).not.toContain(first.split(".")[1]);
  });

  it("etcd is snapshotted on schedule into the host and, encrypted with the CAs, off it: a snapshot etcdutl reads, holding the hosted cluster's objects", async () => {
    const namespace = NAMESPACE("pc-1");
    // An object made in the hosted cluster before the snapshot.
    const client = (await hostedClient("pc-1")) as MemberClient;
    await client.raw("POST", "/api/v1/namespaces/default/configmaps", {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "before-the-snapshot" },
      data: { kept: "yes" },
    });
    const madeAt = Date.now();
    let snapshot: string | undefined;
    await until(
      "a snapshot taken after the object was made",
      async () => {
        const jobs = asList(
          asMap(await host.raw("GET", `/apis/batch/v1/namespaces/${namespace}/jobs`)).items,
        ).map((j) => asMap(j));
        const done = jobs.filter(
          (j) =>
            Number(asMap(j.status).succeeded ?? 0) > 0 &&
            Date.parse(String(asMap(j.status).startTime ?? 0)) > madeAt,
        );
        if (done.length === 0) return false;
        const dir = await claimDirectory(namespace, "etcd-backup");
        const files = readdirSync(dir).filter((f) => f.endsWith(".db"));
        snapshot = files
          .map((f) => join(dir, f))
          .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs)[0];
        return snapshot !== undefined;
      },
      150_000,
    );
    const status = JSON.parse(
      execFileSync(join(binDir, "etcdutl"), ["snapshot", "status", snapshot as string, "-w", "json"], {
        encoding: "utf8",
      }),
    ) as { totalKey: number; revision: number };
    expect(status.totalKey).toBeGreaterThan(100);
    expect(status.revision).toBeGreaterThan(0);
    // The snapshot holds the object: its key is in the file.
    expect(
      readFileSync(snapshot as string).includes(
        Buffer.from("/registry/configmaps/default/before-the-snapshot"),
      ),
    ).toBe(true);
    snapshotFile = snapshot as string;
    // The same run put it in the operator's store, encrypted, with the CAs and the service-account key:
    // the operator's identity opens it, and it holds the snapshot and the keys the host holds.
    const name = (snapshot as string).split("/").pop() as string;
    const pulledInto = join(repo.dir, "..", `pulled-${Date.now()}`);
    const pulled = await pullBackup({
      store: offsiteStore(),
      cluster: "pc-1",
      key: await backupKeyOf("pc-1", name),
      identities: [operatorKey.identity],
      into: pulledInto,
      workDir: join(repo.dir, ".."),
      maxBytes: 256 << 20,
    });
    expect(pulled.manifest.snapshot).toBe(name);
    snapshotKey = pulled.key;
    expect(readFileSync(join(pulledInto, "snapshot.db")).equals(readFileSync(snapshot as string))).toBe(true);
    for (const [secret, key] of [
      ["ca", "tls.key"],
      ["ca", "tls.crt"],
      ["etcd-ca", "tls.key"],
      ["front-proxy-ca", "tls.key"],
      ["service-account", "sa.key"],
    ] as const) {
      const live = asMap(
        (await host.get({ apiVersion: "v1", kind: "Secret", namespace, name: secret }))?.data,
      );
      expect(readFileSync(join(pulledInto, "pki", secret, key), "utf8"), `${secret}/${key}`).toBe(
        Buffer.from(String(live[key]), "base64").toString("utf8"),
      );
    }
    // How long the run took, snapshot and push: the Job is the pod's name without its suffix.
    const job = asMap(
      await host.raw(
        "GET",
        `/apis/batch/v1/namespaces/${namespace}/jobs/${name.replace(/-[a-z0-9]+\.db$/, "")}`,
      ),
    );
    const ran =
      Date.parse(String(asMap(job.status).completionTime)) - Date.parse(String(asMap(job.status).startTime));
    console.log(
      `e2e hosted: pc-1: etcd snapshot ${(statSync(snapshot as string).size / 1024).toFixed(0)} KiB, ${status.totalKey} keys, revision ${status.revision}; off the host as ${pulled.key} (${pulled.files.length} files; the backup Job, snapshot and push, ran ${(ran / 1000).toFixed(0)} s)`,
    );
  });

  it("a one-shot EtcdRestore from that snapshot brings back an object deleted after it", async () => {
    const client = (await hostedClient("pc-1")) as MemberClient;
    const path = "/api/v1/namespaces/default/configmaps/before-the-snapshot";
    await client.raw("DELETE", path);
    expect(await client.raw("GET", path).catch(() => undefined)).toBeUndefined();
    const committed = Date.now();
    const name = snapshotFile.split("/").pop() as string;
    commitTree(
      repo.dir,
      encode({
        ...fleetFiles(previous),
        "controlplanes/r1.yaml": `apiVersion: gitfleet.io/v1alpha1\nkind: EtcdRestore\nmetadata: { name: r1 }\nspec: { cluster: pc-1, snapshot: ${name} }\n`,
      }),
      "restore pc-1's etcd",
    );
    const phases = await restorePhases(repo.dir, "r1", until);
    expect(statusFile(repo.dir, "status/restores/r1.yaml").phase).toBe("Succeeded");
    // While the restore is in the repo, the backup runs hold its snapshot out of their count.
    const backupJob = await host.get({
      apiVersion: "batch/v1",
      kind: "CronJob",
      namespace: NAMESPACE("pc-1"),
      name: "etcd-backup",
    });
    const prune = asList(
      asMap(asMap(asMap(asMap(asMap(asMap(backupJob?.spec).jobTemplate).spec).template).spec)).containers,
    ).find((c) => asMap(c).name === "prune");
    const pruneArgs = asList(asMap(prune).args).map(String);
    expect(pruneArgs.slice(pruneArgs.indexOf("--hold"))).toEqual(["--hold", name]);
    expect(phases.at(-1)).toBe("Succeeded");
    const restoredClient = (await hostedClient("pc-1")) as MemberClient;
    const restored = asMap(await once("the restored ConfigMap read", () => restoredClient.raw("GET", path)));
    expect(asMap(restored.data).kept).toBe("yes");
    console.log(
      `e2e hosted: pc-1: restore commit → control plane back on the snapshot's data ${((Date.now() - committed) / 1000).toFixed(1)} s (phases seen: ${phases.join(" → ")})`,
    );
    // The restore's file leaves the repo; etcd keeps running on the restored data.
    commitTree(repo.dir, encode(fleetFiles(previous)), "the restore ran");
    await until("a round after the restore's file left", async () => true);
    const etcd = await host.get({
      apiVersion: "apps/v1",
      kind: "StatefulSet",
      namespace: NAMESPACE("pc-1"),
      name: "etcd",
    });
    expect(JSON.stringify(asMap(etcd?.spec).template)).toContain("--data-dir=/var/lib/etcd/restore-r1");
  });

  it("a real minor upgrade in two reviewed batches: each API server first, its controller-manager and scheduler after its /version flips; the second batch only once approved", async () => {
    // The release the clusters start at is the minor before the tier's (k8s-previous).
    const [from, to] = [parseKubeVersion(previous), parseKubeVersion(version)];
    expect(from && to ? minorDistance(from, to) : undefined).toBe(1);
    // pc-1 gets a second pool, naming no kubelet version: its machine runs the control plane's.
    pc1Followers = followersPool;
    commitTree(repo.dir, encode(fleetFiles(previous)), "pc-1 gets a pool that follows its control plane");
    const namespace = NAMESPACE("pc-1");
    await until(
      "the host holds the followers' join Secret",
      async () =>
        (await host.get({ apiVersion: "v1", kind: "Secret", namespace, name: "join-followers" })) !==
        undefined,
    );
    const follower = await joinNode({ host, namespace, pool: "followers", node: "pc-1-followers-0" });
    expect(follower.kubeletVersion).toBe(previous);
    agents.set(follower.node, new MachineAgent(follower).start());
    const pc1 = (await hostedClient("pc-1")) as MemberClient;
    const followerNode = async () => asMap(await pc1.raw("GET", `/api/v1/nodes/${follower.node}`));
    const followersStatus = () =>
      asMap(
        asMap(
          asMap(
            asMap(asMap(statusFile(repo.dir, "status/clusters/meta-1.yaml").observed).hostedControlPlanes)[
              "pc-1"
            ],
          ).nodePools,
        ).followers,
      );
    await until(
      "the follower reports Ready at the release the clusters start at",
      async () => followersStatus().upToDate === 1,
    );
    const canaryAt = Date.now();
    commitTree(repo.dir, encode(cveUpgrade(false)), `upgrade pc-1 to ${version} first`);
    const watch: UpgradeWatch = {
      sawHeld: new Set(),
      etcdFirst: new Set(),
      outOfOrder: [],
      upgraded: new Map(),
    };
    const untouched: string[] = [];
    // pc-1 has node pools: its kube-proxy follows its API server's /version, never ahead of it.
    const proxyAhead: string[] = [];
    const proxyTags = new Set<string>();
    // The skew policy holds the follower back: no kubelet newer than its API server, so while pc-1's
    // /version reports the old release its node is neither cordoned nor told the new one.
    const followerAhead: string[] = [];
    const followerHeld = new Set<string>();
    await until("the canary batch Succeeded", async () => {
      const canary = await sample("pc-1");
      judgeUpgrade(watch, "pc-1", canary);
      judgeFollower(canary.reported, await followerNode(), followersStatus(), followerAhead, followerHeld);
      if (canary.proxy) proxyTags.add(canary.proxy);
      if (canary.proxy === version && canary.reported !== version) proxyAhead.push(JSON.stringify(canary));
      const other = await sample("pc-2");
      if (
        [other.apiServer, other.controllerManager, other.scheduler].some((v) => v !== previous) ||
        other.etcd !== etcdPreviousTag
      )
        untouched.push(JSON.stringify(other));
      return batchState("cve", "canary") === "Succeeded";
    });
    expect(untouched).toEqual([]);
    expect(proxyAhead).toEqual([]);
    expect(followerAhead).toEqual([]);
    // The hold can end within one round (the status written after it may already see the new
    // /version); when the status branch caught it, it said why.
    for (const why of followerHeld)
      expect(why).toMatch(
        /^(kubelet v\S+ would be newer than the API server, which reports v\S+: the pool waits for the control plane|the API server's version is not known yet)$/,
      );
    // Once the API server reports it, the follower moves too: cordoned, told, back Ready, uncordoned.
    await until("the follower runs the new kubelet, Ready and schedulable", async () => {
      const node = await followerNode();
      return (
        asMap(asMap(node.status).nodeInfo).kubeletVersion === version &&
        asMap(node.spec).unschedulable !== true &&
        followersStatus().upToDate === 1
      );
    });
    expect(agents.get(follower.node)?.upgrades).toEqual([version]);
    console.log(
      `e2e hosted: pc-1: the followers pool waited for its API server (${followerHeld.size > 0 ? `held: ${[...followerHeld].join("; ")}` : "no status commit fell inside the hold"}), then moved to ${version}`,
    );
    expect(gitIn(repo.dir, "log", "--format=%B", "gitfleet/status")).toContain(
      `meta-1: node pool pc-1/followers: pc-1-followers-0 run ${version} Ready, uncordoned`,
    );
    await until(
      "pc-1's kube-proxy follows to the new version",
      async () => (await sample("pc-1")).proxy === version,
      240_000,
      () => lastSyncOf("pc-1", "apps/DaemonSet/kube-system/kube-proxy"),
    );
    expect(proxyTags.has(previous)).toBe(true);
    expect(batchState("cve", "rest")).toBe("WaitingApproval");
    // The approving pull request: the second batch starts.
    const restAt = Date.now();
    commitTree(repo.dir, encode(cveUpgrade(true)), "approve the rest");
    await until("the rest batch Succeeded", async () => {
      judgeUpgrade(watch, "pc-2", await sample("pc-2"));
      return batchState("cve", "rest") === "Succeeded";
    });
    const { sawHeld, outOfOrder, upgraded } = watch;
    expect(outOfOrder).toEqual([]);
    expect([...sawHeld].sort()).toEqual(HOSTED);
    expect([...upgraded.keys()].sort()).toEqual(HOSTED);
    // etcd runs the new minor, and so does its data: the cluster version moved to it.
    const [major, minor] = etcdTag.split(".");
    for (const cluster of HOSTED) {
      let metrics = "";
      await until(
        `${cluster}'s etcd reports ${etcdTag} and cluster version ${major}.${minor}`,
        async () => {
          metrics = await etcdMetrics(cluster);
          return (
            metrics.includes(`etcd_server_version{server_version="${etcdTag.replace(/-0$/, "")}"} 1`) &&
            metrics.includes(`etcd_cluster_version{cluster_version="${major}.${minor}"} 1`)
          );
        },
        60_000,
        async () =>
          metrics
            .split("\n")
            .filter((l) => /^etcd_(server|cluster)_version/.test(l))
            .join("; "),
      );
    }
    // The status branch named each state change in a commit of its own kind.
    const log = gitIn(repo.dir, "log", "--format=%B", "gitfleet/status");
    expect(log).toContain("upgrade cve/canary: Syncing → Observing");
    expect(log).toContain(`upgrade: pc-1: ${previous} → ${version}`);
    for (const [cluster, from] of [
      ["pc-1", canaryAt],
      ["pc-2", restAt],
    ] as const)
      console.log(
        `e2e hosted: ${cluster}: upgrade ${previous} → ${version} with etcd ${etcdPreviousTag} → ${etcdTag}, approving commit → every component upgraded and Healthy ${(((upgraded.get(cluster) ?? 0) - from) / 1000).toFixed(1)} s${watch.etcdFirst.has(cluster) ? " (etcd seen rolled with the API server held)" : ""}`,
      );
  });

  it("a batch whose API server crash-loops on a bad flag halts the next batch with why on the status branch; a rollback brings it back", async () => {
    // The class catches up with the upgrade (nothing changes), and the finished upgrade goes.
    commitTree(repo.dir, encode(fleetFiles(version)), `the class at ${version}`);
    const batches: Batch[] = [
      ["canary", "pc-1", true],
      ["rest", "pc-2", true],
    ];
    commitTree(
      repo.dir,
      encode({ ...fleetFiles(version), ...upgradeFile("flags", version, batches, BAD_FLAG) }),
      "a flag kube-apiserver does not know",
    );
    await until("the canary batch Failed", async () => batchState("flags", "canary") === "Failed").catch(
      (error: unknown) => {
        throw new Error(
          `${String(error)}; status: ${JSON.stringify(statusFile(repo.dir, "status/upgrades/flags.yaml"))}`,
        );
      },
    );
    const status = statusFile(repo.dir, "status/upgrades/flags.yaml");
    const [canary, rest] = asList(status.batches).map((b) => asMap(b));
    expect(String(canary?.reason)).toMatch(
      /^pc-1: Deployment kube-apiserver 1 (CrashLoopBackOff|Error); onFailure: Halt$/,
    );
    expect(rest?.state).toBe("Pending");
    // The halted batch never reached pc-2.
    const deployment = await host.get({
      apiVersion: "apps/v1",
      kind: "Deployment",
      namespace: NAMESPACE("pc-2"),
      name: "kube-apiserver",
    });
    const container = asMap(asList(asMap(asMap(asMap(deployment?.spec).template).spec).containers)[0]);
    const args = asList(container.args);
    expect(args).not.toContain("--no-such-flag=on");
    expect(controller.prober.conditions().get("pc-2")?.health.ready).toBe(true);
    // Rolling the batch back returns pc-1 to its class's flags.
    commitTree(
      repo.dir,
      encode({
        ...fleetFiles(version),
        ...upgradeFile(
          "flags",
          version,
          [
            ["canary", "pc-1", true, true],
            ["rest", "pc-2", true],
          ],
          BAD_FLAG,
        ),
      }),
      "roll the canary back",
    );
    await until(
      "pc-1 Ready again",
      async () =>
        batchState("flags", "canary") === "RolledBack" &&
        controller.prober.conditions().get("pc-1")?.health.ready === true,
    );
    expect(batchState("flags", "rest")).toBe("Pending");
    // While pc-1's API server was down past noExecuteAfter, the Divided shop moved to pc-2; it stays.
    expect(divided("shop")).toEqual({ "pc-2": 4 });
    expect(gitIn(repo.dir, "log", "--format=%s", "gitfleet/status")).toMatch(
      /^failover: cluster pc-1 .*shop 2 → pc-2 \+2/m,
    );
    await until(
      "shop Healthy in pc-2 with its 4 replicas",
      async () => appHealth("shop", "pc-2") === "Healthy",
    );
    expect(divided("shop")).toEqual({ "pc-2": 4 });
  });

  it("pc-1's workers move to the new kubelet one node at a time (cordoned, told, uncordoned), and a machine that stops reporting is removed for the provisioner to replace", async () => {
    const namespace = NAMESPACE("pc-1");
    const client = (await hostedClient("pc-1")) as MemberClient;
    const poolNodes = async () =>
      asList(
        asMap(await client.raw("GET", "/api/v1/nodes?labelSelector=gitfleet.io%2Fnode-pool%3Dworkers")).items,
      ).map((n) => asMap(n));
    await until("every machine reports Ready at the pool's version", async () => {
      const nodes = await poolNodes();
      return (
        nodes.length === 4 &&
        nodes.every(
          (n) =>
            asMap(asMap(n.status).nodeInfo).kubeletVersion === previous &&
            asList(asMap(n.status).conditions).some(
              (c) => asMap(c).type === "Ready" && asMap(c).status === "True",
            ),
        )
      );
    });
    pc1Pools = workersPool()
      .replace(`kubeletVersion: ${previous}`, `kubeletVersion: ${version}`)
      .replace("replicas: 3", "replicas: 4")
      .replace(
        "join: { tokenTTL: 30s }",
        "join: { tokenTTL: 24h }\n        upgrade: { maxUnavailable: 1 }\n        repair: { notReadyFor: 10s }",
      );
    const committed = Date.now();
    commitTree(repo.dir, encode(fleetFiles(version)), `pc-1's workers to kubelet ${version}`);
    // Sampled on every round: never more than one node cordoned, and each cordoned one upgrading.
    let mostCordoned = 0;
    const cordonedSeen = new Set<string>();
    await until("every worker runs the new kubelet Ready and schedulable", async () => {
      const nodes = await poolNodes();
      const cordoned = nodes.filter((n) => asMap(n.spec).unschedulable === true);
      mostCordoned = Math.max(mostCordoned, cordoned.length);
      for (const n of cordoned) cordonedSeen.add(String(asMap(n.metadata).name));
      return (
        nodes.length === 4 &&
        cordoned.length === 0 &&
        nodes.every((n) => asMap(asMap(n.status).nodeInfo).kubeletVersion === version)
      );
    });
    const upgradedIn = (Date.now() - committed) / 1000;
    expect(mostCordoned).toBe(1);
    expect(cordonedSeen.size).toBeGreaterThan(1);
    for (const agent of agents.values()) expect(agent.upgrades).toEqual([version]);
    const log = gitIn(repo.dir, "log", "--format=%B", "gitfleet/status");
    expect(log).toContain(`meta-1: node pool pc-1/workers: pc-1-workers-0 cordoned to upgrade to ${version}`);
    expect(log).toContain(`meta-1: node pool pc-1/workers: pc-1-workers-3 run ${version} Ready, uncordoned`);
    await until("the status branch says all four are up to date", async () => {
      const pool = asMap(
        asMap(
          asMap(
            asMap(asMap(statusFile(repo.dir, "status/clusters/meta-1.yaml").observed).hostedControlPlanes)[
              "pc-1"
            ],
          ).nodePools,
        ).workers,
      );
      return pool.upToDate === 4 && pool.upgrading === undefined;
    });
    // A machine stops reporting: the real node-lifecycle controller marks it Unknown, and 10 s later
    // gitfleet removes its Node; the host's node-pool ConfigMap tells the provisioner one is missing.
    const stoppedAt = Date.now();
    agents.get("pc-1-workers-1")?.stop();
    agents.delete("pc-1-workers-1");
    const poolConfig = async () =>
      asMap(
        (await host.get({ apiVersion: "v1", kind: "ConfigMap", namespace, name: "node-pool-workers" }))?.data,
      );
    await until(
      "pc-1-workers-1 is removed and the pool misses a machine",
      async () =>
        !(await poolNodes()).some((n) => asMap(n.metadata).name === "pc-1-workers-1") &&
        (await poolConfig()).missing === "1",
      180_000,
    );
    const removedIn = (Date.now() - stoppedAt) / 1000;
    const removed = JSON.parse(String((await poolConfig()).removed)) as { node: string }[];
    expect(removed.map((r) => r.node)).toEqual(["pc-1-workers-1"]);
    expect(gitIn(repo.dir, "log", "--format=%B", "gitfleet/status")).toMatch(
      /meta-1: node pool pc-1\/workers: removed pc-1-workers-1 \(NotReady for \d+s\) for the provisioner to replace/,
    );
    // The provisioner's part: a new machine joins with the join Secret, at the pool's version.
    const replacement = await joinNode({ host, namespace, pool: "workers", node: "pc-1-workers-4" });
    expect(replacement.kubeletVersion).toBe(version);
    agents.set(replacement.node, new MachineAgent(replacement).start());
    await until("the pool is whole again", async () => {
      const config = await poolConfig();
      return config.missing === "0" && config["up-to-date"] === "4";
    });
    console.log(
      `e2e hosted: pc-1: 4 workers upgraded ${previous} → ${version} one at a time in ${upgradedIn.toFixed(1)} s; a machine that stopped reporting removed ${removedIn.toFixed(1)} s later`,
    );
  });

  it("renewed certificates reach the running control plane without a restart, and clients holding the old ones keep working", async () => {
    const namespace = NAMESPACE("pc-1");
    const secretCertificate = async (name: string) =>
      new X509Certificate(
        Buffer.from(
          String(
            asMap((await host.get({ apiVersion: "v1", kind: "Secret", namespace, name }))?.data)["tls.crt"],
          ),
          "base64",
        ),
      ).fingerprint256;
    const served = () => servedCertificate("pc-1");
    const pidOf = async (component: string) =>
      runtime.processOf(namespace, await podName("pc-1", component))?.pid;
    const servingBefore = await secretCertificate("apiserver-serving");
    expect(await served()).toBe(servingBefore);
    const pids = {
      apiServer: await pidOf("kube-apiserver"),
      controllerManager: await pidOf("kube-controller-manager"),
    };
    // A client holding the certificates from before the renewal.
    const before = (await hostedClient("pc-1")) as MemberClient;
    // Every leaf older than two minutes is within renewBefore: the next pass renews them all (not the CAs).
    classCertificates = "  certificates: { validity: 8760h, renewBefore: 8759h58m }\n";
    const committed = Date.now();
    commitTree(repo.dir, encode(fleetFiles(version)), "renew pc-1's certificates");
    await until("the status branch says pc-1's certificates were renewed", async () =>
      gitIn(repo.dir, "log", "--format=%B", "gitfleet/status").includes(
        "meta-1: credentials of pc-1 renewed: apiserver-serving",
      ),
    );
    const servingAfter = await secretCertificate("apiserver-serving");
    expect(servingAfter).not.toBe(servingBefore);
    await until(
      "kube-apiserver serves the renewed certificate",
      async () => (await served()) === servingAfter,
      120_000,
    );
    const rotatedIn = (Date.now() - committed) / 1000;
    // No component restarted for it: the API server reloaded its files, the others' kubeconfigs name theirs.
    expect({
      apiServer: await pidOf("kube-apiserver"),
      controllerManager: await pidOf("kube-controller-manager"),
    }).toEqual(pids);
    // The old client certificate is still valid (it has not expired), the new one too.
    expect(asList(asMap(await before.raw("GET", "/api/v1/namespaces")).items).length).toBeGreaterThan(0);
    const after = (await hostedClient("pc-1")) as MemberClient;
    expect(asList(asMap(await after.raw("GET", "/api/v1/namespaces")).items).length).toBeGreaterThan(0);
    // The controller-manager still works: a Deployment made now gets its ReplicaSet.
    await controllerManagerActs(after, "after-rotation");
    classCertificates = "";
    commitTree(repo.dir, encode(fleetFiles(version)), "certificates back to the defaults");
    console.log(
      `e2e hosted: pc-1: certificates renewed and served by the running kube-apiserver ${rotatedIn.toFixed(1)} s after the commit, no component restarted`,
    );
  });

  it("a CA rolled over keeps a kubeconfig handed out before, the components and the nodes working: both CAs trusted, the new one served cross-signed", async () => {
    const namespace = NAMESPACE("pc-1");
    const secretData = (name: string) => hostSecretData(namespace, name);
    const leafOf = (pem: string) => new X509Certificate(pem).fingerprint256;
    const served = () => servedCertificate("pc-1");
    const pidOf = async (component: string) =>
      runtime.processOf(namespace, await podName("pc-1", component))?.pid;
    const pids = {
      apiServer: await pidOf("kube-apiserver"),
      controllerManager: await pidOf("kube-controller-manager"),
    };
    // A kubeconfig handed out before: it trusts the old CA alone and holds a certificate it signed.
    const kubeconfigDir = tempDir("gitfleet-handed-out-");
    const handedOut = join(kubeconfigDir.dir, "pc-1-admin.kubeconfig");
    writeFileSync(handedOut, (await secretData("admin-kubeconfig")).kubeconfig as string, { mode: 0o600 });
    const before = (await hostedClient("pc-1")) as MemberClient;
    const caBefore = (await secretData("ca"))["tls.crt"] as string;
    // A CA must outlive what it signs: leaves of ten years leave the ten-year CA due at once.
    classCertificates = "  certificates: { validity: 87600h }\n";
    const committed = Date.now();
    commitTree(repo.dir, encode(fleetFiles(version)), "roll pc-1's CAs over");
    await until("the status branch says pc-1's CAs were rolled over", async () =>
      gitIn(repo.dir, "log", "--format=%B", "gitfleet/status").includes(
        "meta-1: credentials of pc-1 renewed: ca, front-proxy-ca, etcd-ca",
      ),
    );
    const ca = await secretData("ca");
    expect(ca["tls.crt"]).not.toBe(caBefore);
    expect(ca["previous.crt"]).toBe(caBefore);
    const serving = (await secretData("apiserver-serving"))["tls.crt"] as string;
    await until(
      "kube-apiserver serves the certificate the new CA signed",
      async () => (await served()) === leafOf(serving),
      120_000,
    );
    const switchedAt = Date.now();
    const rolledIn = (switchedAt - committed) / 1000;
    // kubectl (Go's TLS) with the kubeconfig from before: it verifies the new serving certificate
    // through the cross-signed CA, and the API server still takes its old client certificate.
    const kubectl = execFileSync("kubectl", ["--kubeconfig", handedOut, "get", "namespaces", "-o", "name"], {
      encoding: "utf8",
      timeout: 30_000,
    });
    kubeconfigDir.cleanup();
    expect(kubectl).toContain("namespace/kube-system");
    expect(asList(asMap(await before.raw("GET", "/api/v1/namespaces")).items).length).toBeGreaterThan(0);
    const after = (await hostedClient("pc-1")) as MemberClient;
    expect(asList(asMap(await after.raw("GET", "/api/v1/namespaces")).items).length).toBeGreaterThan(0);
    // The nodes' kubelets (trusting the old CA from cluster-info, their certificates signed by it)
    // keep posting their status after the switch.
    await until(
      "every pc-1 machine heartbeats after the switch",
      async () => [...agents.values()].every((agent) => agent.lastBeat > switchedAt),
      60_000,
      async () =>
        JSON.stringify([...agents.values()].map((a) => ({ node: a.node.node, error: a.lastError }))),
    );
    // The controller-manager (its kubeconfig's files rewritten) still acts, and writes reach etcd.
    await controllerManagerActs(after, "after-rollover");
    expect({
      apiServer: await pidOf("kube-apiserver"),
      controllerManager: await pidOf("kube-controller-manager"),
    }).toEqual(pids);
    classCertificates = "";
    commitTree(repo.dir, encode(fleetFiles(version)), "certificates back to the defaults");
    console.log(
      `e2e hosted: pc-1: CAs rolled over and the new serving certificate served ${rolledIn.toFixed(1)} s after the commit; the kubeconfig from before (kubectl), ${agents.size} nodes and the controller-manager kept working, no component restarted`,
    );
  });

  it("a single-member etcd that reaches its quota (NOSPACE) is read and cleared — compacted, defragmented, disarmed — and writes are taken again", async () => {
    const client = (await hostedClient("pc-2")) as MemberClient;
    const { made, refused } = await fillEtcd(client);
    expect(refused).toMatch(/database space exceeded/);
    const fullAt = Date.now();
    await emptyEtcd(client, made);
    await expect(writeSmall(client, "while-full")).rejects.toThrow(/database space exceeded/);
    let attempt = 0;
    await until(
      "pc-2 takes writes again",
      async () => {
        await writeSmall(client, `after-${attempt++}`);
        return true;
      },
      240_000,
      async () => JSON.stringify(hostedEtcd("pc-2")),
    );
    const clearedIn = (Date.now() - fullAt) / 1000;
    // Its one member is read like a replicated etcd's: size, quota and no alarm any more.
    await until("pc-2's etcd member recorded without the alarm", async () => {
      const member = asMap(asMap(hostedEtcd("pc-2").members)["etcd-0"]);
      return member.ready === true && member.alarm === undefined && member.quotaMiB === 32;
    });
    const log = gitIn(repo.dir, "log", "--format=%B", "gitfleet/status");
    for (const step of ["compacting the history up to revision", "disarming NOSPACE", "NOSPACE cleared"])
      expect(log).toContain(`meta-1: etcd gitfleet-cp-pc-2/etcd of pc-2: ${step}`);
    console.log(
      `e2e hosted: pc-2: ${made} writes of 700 KiB filled its single etcd's 32Mi quota; NOSPACE cleared by gitfleet ${clearedIn.toFixed(1)} s after the data was deleted`,
    );
  });

  it("replaceCAs replaces pc-2's CAs at once: the kubeconfig from before is refused, the control plane restarts on the new ones and acts", async () => {
    const namespace = NAMESPACE("pc-2");
    const secretData = (name: string) => hostSecretData(namespace, name);
    const kubeconfigDir = tempDir("gitfleet-compromised-");
    const handedOut = join(kubeconfigDir.dir, "pc-2-admin.kubeconfig");
    writeFileSync(handedOut, (await secretData("admin-kubeconfig")).kubeconfig as string, { mode: 0o600 });
    const kubectl = (kubeconfig: string) => {
      try {
        return execFileSync("kubectl", ["--kubeconfig", kubeconfig, "get", "namespaces", "-o", "name"], {
          encoding: "utf8",
          timeout: 30_000,
          stdio: ["ignore", "pipe", "pipe"],
        });
      } catch (error) {
        return `refused: ${String((error as { stderr?: string }).stderr ?? error)}`;
      }
    };
    expect(kubectl(handedOut)).toContain("namespace/kube-system");
    const caBefore = (await secretData("ca"))["tls.crt"];
    const components = ["etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler"];
    // Each component's pod uid (a StatefulSet's pod keeps its name when it is made again).
    const podUids = async () =>
      Object.fromEntries(
        await Promise.all(
          components.map(async (component) => {
            const pod = asMap(
              await host.raw(
                "GET",
                `/api/v1/namespaces/${namespace}/pods/${await podName("pc-2", component)}`,
              ),
            );
            return [component, String(asMap(pod.metadata).uid)] as const;
          }),
        ),
      );
    const podsBefore = await podUids();
    pc2ReplaceCAs = "incident-e2e";
    const committed = Date.now();
    commitTree(repo.dir, encode(fleetFiles(version)), "pc-2's keys were compromised: replace its CAs");
    await until(
      "pc-2's CAs replaced, its control plane restarted on them and Ready",
      async () =>
        (await secretData("ca"))["replaced-for"] === pc2ReplaceCAs &&
        gitIn(repo.dir, "log", "--format=%B", "gitfleet/status").includes(
          "meta-1: control plane of pc-2 restarted on its replaced CAs",
        ) &&
        (await hostedReady("pc-2")),
      180_000,
    );
    const ca = await secretData("ca");
    expect(ca["tls.crt"]).not.toBe(caBefore);
    expect(ca).not.toHaveProperty("previous.crt");
    // The controller-manager, started again with a kubeconfig the new CA signed, acts; writes reach etcd.
    const after = (await hostedClient("pc-2")) as MemberClient;
    await controllerManagerActs(after, "after-replacement");
    const actedIn = (Date.now() - committed) / 1000;
    const podsAfter = await podUids();
    for (const component of components)
      expect(podsAfter[component], component).not.toBe(podsBefore[component]);
    // What the old CA signed is trusted no more: the kubeconfig handed out before is refused.
    expect(kubectl(handedOut)).toMatch(/^refused: /);
    writeFileSync(handedOut, (await secretData("admin-kubeconfig")).kubeconfig as string, { mode: 0o600 });
    expect(kubectl(handedOut)).toContain("namespace/kube-system");
    kubeconfigDir.cleanup();
    console.log(
      `e2e hosted: pc-2: replaceCAs → CAs replaced, etcd, kube-apiserver, kube-controller-manager and kube-scheduler restarted on them, the controller-manager acting ${actedIn.toFixed(1)} s after the commit; the kubeconfig from before refused`,
    );
  });

  it("removing a hosted Cluster's file deletes its control plane only with an allowPrune token", async () => {
    const { "clusters/pc-2.yaml": _gone, ...without } = fleetFiles(version);
    commitTree(repo.dir, encode(without), "remove pc-2");
    await until(
      "the prune is blocked",
      async () =>
        asMap(asMap(statusFile(repo.dir, "status/clusters/meta-1.yaml").observed).pruneBlocked).token !==
        undefined,
      60_000,
    );
    const blocked = asMap(asMap(statusFile(repo.dir, "status/clusters/meta-1.yaml").observed).pruneBlocked);
    expect(
      await host.get({
        apiVersion: "apps/v1",
        kind: "Deployment",
        namespace: NAMESPACE("pc-2"),
        name: "kube-apiserver",
      }),
    ).toBeDefined();
    commitTree(
      repo.dir,
      encode({
        ...without,
        "fleet.yaml": `${without["fleet.yaml"]}  pruning: { allowPrune: "${String(blocked.token)}" }\n`,
      }),
      "allow removing pc-2's control plane",
    );
    await until(
      "pc-2's control plane gone",
      async () =>
        (await host.get({
          apiVersion: "apps/v1",
          kind: "Deployment",
          namespace: NAMESPACE("pc-2"),
          name: "kube-apiserver",
        })) === undefined,
    );
  });

  it(`the backup Job of every minute keeps the newest ${KEEP} snapshots: in the host's volume and in the store`, async () => {
    const namespace = NAMESPACE("pc-1");
    const dir = await claimDirectory(namespace, "etcd-backup");
    const snapshots = () => readdirSync(dir).filter((f) => f.endsWith(".db"));
    // The snapshot the backup test read, minutes ago, and its backup in the store.
    const first = snapshotFile.split("/").pop() as string;
    const firstKey = snapshotKey;
    let keys: string[] = [];
    await until(
      `pc-1 holds ${KEEP} snapshots and ${KEEP} backups, the one of the backup test pruned from both`,
      async () => {
        keys = (await listBackups(offsiteStore(), "pc-1")).map((o) => o.key);
        return (
          snapshots().length === KEEP &&
          !snapshots().includes(first) &&
          keys.length === KEEP &&
          !keys.includes(firstKey)
        );
      },
      300_000,
      async () => JSON.stringify({ first, snapshots: snapshots(), keys }),
    );
    // What stays is the newest: scheduled runs are named for their minute, and the kept are later.
    const minute = (name: string) => Number(/^etcd-backup-(\d+)-/.exec(name)?.[1] ?? Number.NaN);
    expect(snapshots().every((f) => Number.isNaN(minute(f)) || minute(f) > minute(first))).toBe(true);
    expect(keys.every((k) => k > firstKey)).toBe(true);
    console.log(
      `e2e hosted: pc-1: the backup volume keeps ${snapshots().length} snapshots and the store ${keys.length} backups (keep: ${KEEP}); ${first} pruned from both`,
    );
  });

  it("losing the host: pc-1 moves to a second host in one commit and comes back from its off-host backup, with its objects and its CA — a kubeconfig handed out before works against it", async () => {
    const namespace = NAMESPACE("pc-1");
    const before = (await hostedClient("pc-1")) as MemberClient;
    await before.raw("POST", "/api/v1/namespaces/default/configmaps", {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "before-the-move" },
      data: { kept: "yes" },
    });
    const madeAt = Date.now();
    // The admin kubeconfig as handed out before the loss, and the CA it trusts.
    const kubeconfig = Buffer.from(
      String(
        asMap(
          (await host.get({ apiVersion: "v1", kind: "Secret", namespace, name: "admin-kubeconfig" }))?.data,
        ).kubeconfig,
      ),
      "base64",
    ).toString("utf8");
    const caOf = async (client: MemberClient) =>
      Buffer.from(
        String(
          asMap((await client.get({ apiVersion: "v1", kind: "Secret", namespace, name: "ca" }))?.data)[
            "tls.crt"
          ],
        ),
        "base64",
      ).toString("utf8");
    const ca = await caOf(host);
    // A backup taken now, as an operator takes one before a planned move (kubectl create job
    // --from=cronjob/etcd-backup): the scheduled Job's own template, run at once.
    const cronJob = asMap(
      await host.raw("GET", `/apis/batch/v1/namespaces/${namespace}/cronjobs/etcd-backup`),
    );
    await host.raw("POST", `/apis/batch/v1/namespaces/${namespace}/jobs`, {
      apiVersion: "batch/v1",
      kind: "Job",
      metadata: { name: `etcd-backup-now-${madeAt}` },
      spec: asMap(asMap(asMap(cronJob.spec).jobTemplate).spec),
    });
    await until(
      "an off-host backup taken after the object was made",
      async () =>
        (await listBackups(offsiteStore(), "pc-1")).some(
          (o) =>
            Date.parse(
              o.key.replace(/^.*\/(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z-.*$/, "$1-$2-$3T$4:$5:$6Z"),
            ) > madeAt,
        ),
      150_000,
    );
    console.log(
      `e2e hosted: pc-1: a backup taken after the object ${((Date.now() - madeAt) / 1000).toFixed(1)} s after it was made`,
    );
    // The host is lost: every process of it stopped, its data removed.
    const lostAt = Date.now();
    await meta.stop();
    metaLost = true;
    rmSync(meta.planes.runDir, { recursive: true, force: true });
    for (const nodes of hostedNodes) nodes.stop();
    for (const agent of agents.values()) agent.stop();
    second = await startHost(releases, { name: "meta-2", runDir: `${meta.planes.runDir}-meta-2` });
    host = second.client;
    // A second host, and gitfleet (restarted) told of it; meta-2 joins the fleet, then the operator's
    // `gitfleet move-host` commits pc-1's move there with its restore from its newest off-host backup.
    controller = await pushController(
      repo.dir,
      second.planes.kubeconfig,
      {},
      { backupStores: operatorStores() },
    );
    const { "clusters/pc-2.yaml": _gone, ...files } = fleetFiles(version);
    commitTree(
      repo.dir,
      encode({
        ...files,
        "clusters/meta-2.yaml":
          "apiVersion: gitfleet.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: meta-2\nspec: {}\n",
      }),
      "meta-1 is lost: meta-2 joins",
    );
    const committed = Date.now();
    gitIn(repo.dir, "config", "user.name", "Pat Platform");
    gitIn(repo.dir, "config", "user.email", "pat@example.com");
    const moved = gitfleetCli(["move-host", "--from", "meta-1", "--to", "meta-2", "--repo", repo.dir]);
    expect(moved.code, moved.stderr).toBe(0);
    console.log(
      `e2e hosted: pc-1: move-host committed ${((Date.now() - lostAt) / 1000).toFixed(1)} s after the loss: ${moved.stderr.trim()}`,
    );
    expect(readFileSync(join(repo.dir, "clusters/pc-1.yaml"), "utf8")).toContain("host: meta-2");
    const phases = await restorePhases(repo.dir, "pc-1-to-meta-2", until);
    expect(phases).toContain("Fetching");
    const status = statusFile(repo.dir, "status/restores/pc-1-to-meta-2.yaml");
    expect(status).toMatchObject({ phase: "Succeeded", backup: "latest" });
    expect(String(status.fetched)).toMatch(/^hosted\/pc-1\/\d{8}T\d{6}Z-etcd-backup-.*\.tar\.age$/);
    // The CA is the one pc-1 had; the kubeconfig handed out before reaches the moved cluster and finds
    // the object made before the loss.
    expect(await caOf(host)).toBe(ca);
    const config = new KubeConfig();
    config.loadFromString(kubeconfig);
    const old = new MemberClient("pc-1", config, { timeoutMs: 3000, retries: 0 });
    await until("the kubeconfig handed out before reads the moved cluster", async () => {
      const found = asMap(await old.raw("GET", "/api/v1/namespaces/default/configmaps/before-the-move"));
      return asMap(found.data).kept === "yes";
    });
    console.log(
      `e2e hosted: pc-1: host lost → moved to meta-2 and back on its off-host backup ${((Date.now() - committed) / 1000).toFixed(1)} s after the commit (${((Date.now() - lostAt) / 1000).toFixed(1)} s after the loss; phases seen: ${phases.join(" → ")}; from ${String(status.fetched)})`,
    );
  }, 900_000);
});

interface UpgradeWatch {
  readonly sawHeld: Set<string>;
  /** Clusters seen with etcd rolled to the new release and the API server still at the old one. */
  readonly etcdFirst: Set<string>;
  readonly outOfOrder: string[];
  readonly upgraded: Map<string, number>;
}

// One look at a control plane mid-upgrade: the order holds (never a follower at the new version while
// the API server does not report it), the followers were seen held, and when all of it is upgraded.
// A node of a pool following its control plane, sampled mid-upgrade: moved ahead of the API server's
// /version (cordoned, or told the new release, while it reports the old one) goes into `ahead`; the
// status branch's reason for holding the pool, into `held`.
function judgeFollower(
  reported: unknown,
  node: JsonMap,
  pool: JsonMap,
  ahead: string[],
  held: Set<string>,
): void {
  const told = asMap(asMap(node.metadata).annotations)["gitfleet.io/kubelet-version"];
  if (reported !== version && (asMap(node.spec).unschedulable === true || told === version))
    ahead.push(JSON.stringify({ reported, told, spec: node.spec }));
  if (typeof pool.held === "string") held.add(pool.held);
}

function judgeUpgrade(watch: UpgradeWatch, cluster: string, seen: Awaited<ReturnType<typeof sample>>): void {
  const followersMoved = seen.controllerManager !== previous || seen.scheduler !== previous;
  if (seen.reported !== version && followersMoved)
    watch.outOfOrder.push(`${cluster}: ${JSON.stringify(seen)}`);
  // etcd first: the API server's Deployment moves only once etcd runs the new release.
  if (seen.apiServer === version && seen.etcd !== etcdTag)
    watch.outOfOrder.push(`${cluster}: the API server moved before etcd: ${JSON.stringify(seen)}`);
  if (seen.etcd === etcdTag && seen.etcdRolled && seen.apiServer === previous) watch.etcdFirst.add(cluster);
  if (seen.apiServer === version && seen.controllerManager === previous) watch.sawHeld.add(cluster);
  const done =
    seen.healthy &&
    seen.etcd === etcdTag &&
    [seen.reported, seen.controllerManager, seen.scheduler].every((v) => v === version);
  if (done && !watch.upgraded.has(cluster)) watch.upgraded.set(cluster, Date.now());
}

// A hosted control plane mid-upgrade: each component's image tag in the host, what its /version
// reports, and whether its app is Healthy on the status branch.
async function sample(cluster: string) {
  const tag = async (component: string) => {
    const deployment = await host.get({
      apiVersion: "apps/v1",
      kind: "Deployment",
      namespace: NAMESPACE(cluster),
      name: component,
    });
    const container = asMap(asList(asMap(asMap(asMap(deployment?.spec).template).spec).containers)[0]);
    return String(container.image).split(":").pop();
  };
  const client = await hostedClient(cluster);
  const version = client
    ? asMap(await client.raw("GET", "/version").catch(() => ({}))).gitVersion
    : undefined;
  const cp = asMap(asMap(statusFile(repo.dir, appStatusPath(`gitfleet-cp-${cluster}`)).observed)["meta-1"]);
  // kube-proxy lives in the hosted cluster itself (only a cluster with node pools has it).
  const proxy = client
    ? await client
        .get({ apiVersion: "apps/v1", kind: "DaemonSet", namespace: "kube-system", name: "kube-proxy" })
        .catch(() => undefined)
    : undefined;
  const proxyImage = asMap(asList(asMap(asMap(asMap(proxy?.spec).template).spec).containers)[0]).image;
  const etcd = await host.get({
    apiVersion: "apps/v1",
    kind: "StatefulSet",
    namespace: NAMESPACE(cluster),
    name: "etcd",
  });
  const etcdStatus = asMap(etcd?.status);
  return {
    etcd: String(asMap(asList(asMap(asMap(asMap(etcd?.spec).template).spec).containers)[0]).image)
      .split(":")
      .pop(),
    // Every replica on the template's revision and ready: the StatefulSet's rollout is done.
    etcdRolled:
      etcdStatus.updateRevision === etcdStatus.currentRevision &&
      etcdStatus.readyReplicas === asMap(etcd?.spec).replicas &&
      asMap(etcd?.metadata).generation === etcdStatus.observedGeneration,
    proxy: proxyImage === undefined ? undefined : String(proxyImage).split(":").pop(),
    apiServer: await tag("kube-apiserver"),
    controllerManager: await tag("kube-controller-manager"),
    scheduler: await tag("kube-scheduler"),
    reported: String(version ?? ""),
    healthy: cp.health === "Healthy",
  };
}

// What a hosted cluster's etcd-0 serves at its metrics port, through the host's pod proxy.
async function etcdMetrics(cluster: string): Promise<string> {
  const etcd = await host.get({
    apiVersion: "apps/v1",
    kind: "StatefulSet",
    namespace: NAMESPACE(cluster),
    name: "etcd",
  });
  const args = asList(asMap(asList(asMap(asMap(asMap(etcd?.spec).template).spec).containers)[0]).args).map(
    String,
  );
  const port = /:(\d+)$/.exec(args.find((a) => a.startsWith("--listen-metrics-urls=")) ?? "")?.[1];
  const text = await host
    .raw("GET", `/api/v1/namespaces/${NAMESPACE(cluster)}/pods/etcd-0:${port}/proxy/metrics`)
    .catch(() => "");
  return typeof text === "string" ? text : "";
}

// The host directory the process runtime's provisioner gave a claim.
async function claimDirectory(namespace: string, claim: string): Promise<string> {
  const pvc = asMap(await host.raw("GET", `/api/v1/namespaces/${namespace}/persistentvolumeclaims/${claim}`));
  const volume = String(asMap(pvc.spec).volumeName ?? "");
  const pv = asMap(await host.raw("GET", `/api/v1/persistentvolumes/${volume}`));
  return String(asMap(asMap(pv.spec).hostPath).path);
}

async function podName(cluster: string, component: string): Promise<string> {
  const list = asMap(
    await host.raw(
      "GET",
      `/api/v1/namespaces/${NAMESPACE(cluster)}/pods?labelSelector=${encodeURIComponent(`app.kubernetes.io/component=${component}`)}`,
    ),
  );
  const pods = asList(list.items)
    .map((p) => asMap(p))
    .filter((p) => !asMap(p.metadata).deletionTimestamp);
  return String(asMap((pods[0] as JsonMap | undefined)?.metadata).name);
}
