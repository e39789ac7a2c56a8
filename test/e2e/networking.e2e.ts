import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { asList, asMap, type JsonMap } from "../../src/apimachinery/json.js";
import { MemberClient } from "../../src/kube/member-client.js";
import { loadFleet } from "../../src/load/load-fleet.js";
import { fileTreeFromText } from "../../src/model/file-tree.js";
import { renderFleet } from "../../src/render/render-fleet.js";
import { freePort } from "../helpers/free-port.js";
import { branchFiles, createRepo, tempDir } from "../helpers/git-repo.js";
import { pushController } from "../helpers/sync-fleet.js";
import { type ControlPlanes, startControlPlanes } from "./cluster/control-plane.js";
import { assignLoadBalancers } from "./cluster/load-balancers.js";
import { NodeSimulator } from "./cluster/node-simulator.js";

/**
 * Multi-cluster services on the second tier: two real control planes (east, west) with the MCS API's
 * and external-dns's CRDs, a fleet that exports shop/web in the endpoints mode, and CoreDNS (built
 * from its module, the file plugin) serving the clusterset.local zone gitfleet renders into west,
 * asked with dig. The test plays the clouds' load-balancer controllers (it writes each Service's
 * ingress address) and the kubelet's ConfigMap volume (it copies the zone into CoreDNS's file). No
 * packet crosses clusters: there is no data plane here.
 */

const CLUSTERS = ["east", "west"];
const ADDRESS: Record<string, string> = { east: "198.51.100.1", west: "198.51.100.2" };
const BUILD = fileURLToPath(new URL("./cluster/build.sh", import.meta.url));
const BUILD_COREDNS = fileURLToPath(new URL("./coredns/build.sh", import.meta.url));
const ZONE_PATH = "/api/v1/namespaces/kube-system/configmaps/gitfleet-clusterset-zone";

let planes: ControlPlanes;
const nodes: NodeSimulator[] = [];
const clients = new Map<string, MemberClient>();
let repo: { dir: string; cleanup: () => void };
let controller: Awaited<ReturnType<typeof pushController>>;
let corednsDir = "";
let coredns: ChildProcess | undefined;
let dnsPort = 0;
let zoneFile = "";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const client = (cluster: string) => clients.get(cluster) as MemberClient;

function build(script: string): string {
  return execFileSync("bash", [script], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] })
    .trim()
    .split("\n")
    .pop() as string;
}

async function get(cluster: string, path: string): Promise<JsonMap | undefined> {
  return (await client(cluster)
    .raw("GET", path)
    .catch(() => undefined)) as JsonMap | undefined;
}

/** Rounds of the controller (and the clouds' load balancers) until `done` holds. */
async function until(
  what: string,
  done: () => Promise<boolean> | boolean,
  timeoutMs = 180_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    await controller.prober.probeOnce();
    await controller.round();
    await assignLoadBalancers(clients, (cluster) => ADDRESS[cluster] as string);
    if (await done()) return;
    await sleep(300);
  }
  throw new Error(`${what}: not reached in ${timeoutMs / 1000} s`);
}

function dig(name: string, type: string): string[] {
  try {
    const out = execFileSync(
      "dig",
      ["@127.0.0.1", "-p", String(dnsPort), "+short", "+tries=1", "+time=2", name, type],
      {
        encoding: "utf8",
      },
    );
    return out.split("\n").filter(Boolean).sort();
  } catch (error) {
    return [`dig failed: ${String(error).split("\n")[0]}`];
  }
}

// The kubelet's part: west's zone ConfigMap as the file CoreDNS reads.
async function copyZone(): Promise<string> {
  const zone = String(asMap((await get("west", ZONE_PATH))?.data)["db.clusterset.local"] ?? "");
  writeFileSync(zoneFile, zone);
  startCoreDns();
  return zone;
}

const CLUSTER_PROPERTY_CRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: clusterproperties.about.k8s.io
  annotations:
    # A group under k8s.io needs the API's approval on record, or the API server refuses the CRD.
    api-approved.kubernetes.io: https://github.com/kubernetes/enhancements/tree/master/keps/sig-multicluster/2149-clusterid
spec:
  group: about.k8s.io
  scope: Cluster
  names: {plural: clusterproperties, singular: clusterproperty, kind: ClusterProperty}
  versions:
    - name: v1alpha1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          required: [spec]
          properties:
            apiVersion: {type: string}
            kind: {type: string}
            metadata: {type: object}
            spec:
              type: object
              required: [value]
              properties:
                value: {type: string, minLength: 1, maxLength: 128000}
`;

function fleetFiles(mode: "endpoints" | "dns"): Record<string, string> {
  const crds = Object.fromEntries(
    readdirSync(join(corednsDir, "crds")).map((f) => [
      `apps/mcs-crds/${f}`,
      readFileSync(join(corednsDir, "crds", f), "utf8"),
    ]),
  );
  const dns =
    mode === "dns" ? "    dns:\n      cluster: west\n      domain: example.com\n      ttl: 15\n" : "";
  return {
    "fleet.yaml": `apiVersion: gitfleet.io/v1alpha1
kind: Fleet
metadata:
  name: networking
spec:
  statusInterval: 1s
  clusterHealth:
    probeInterval: 1s
    probeTimeout: 1s
    failureThreshold: 3
    successThreshold: 1
    noExecuteAfter: 2s
  serviceDiscovery:
    clusterSetID: e2e-set
    mode: ${mode}
${dns}`,
    ...Object.fromEntries(
      CLUSTERS.map((c) => [
        `clusters/${c}.yaml`,
        `apiVersion: gitfleet.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: ${c}\nspec:\n  provider: onprem\n  region: ${c}\n  connection:\n    mode: push\n`,
      ]),
    ),
    ...crds,
    "apps/mcs-crds/clusterproperties.about.k8s.io.yaml": CLUSTER_PROPERTY_CRD,
    "apps/shop/app.yaml":
      "apiVersion: gitfleet.io/v1alpha1\nkind: App\nmetadata:\n  name: shop\nspec:\n  namespace: shop\n",
    "apps/shop/deployment.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  replicas: 4
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
        - name: web
          image: ghcr.io/example/web:1.0.0
          ports: [{name: http, containerPort: 8080}]
          resources: {requests: {cpu: 100m, memory: 64Mi}}
`,
    "apps/shop/service.yaml":
      "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  type: LoadBalancer\n  selector: {app: web}\n  ports:\n    - {name: http, port: 80, targetPort: http}\n",
    "apps/shop/export.yaml":
      "apiVersion: multicluster.x-k8s.io/v1alpha1\nkind: ServiceExport\nmetadata:\n  name: web\n",
    "placements/crds.yaml":
      "apiVersion: gitfleet.io/v1alpha1\nkind: Placement\nmetadata:\n  name: crds\nspec:\n  apps: [mcs-crds]\n",
    "placements/shop.yaml": `apiVersion: gitfleet.io/v1alpha1
kind: Placement
metadata:
  name: shop
spec:
  apps: [shop]
  replicaScheduling:
    type: Divided
  failover:
    cluster:
      tolerationSeconds: 2
      purgeMode: Directly
`,
  };
}

beforeAll(async () => {
  const binDir = build(BUILD);
  corednsDir = build(BUILD_COREDNS);
  planes = await startControlPlanes({ binDir, names: CLUSTERS });
  for (const plane of planes.clusters) {
    const config = new k8s.KubeConfig();
    config.loadFromFile(planes.kubeconfig);
    config.setCurrentContext(plane.name);
    const c = new MemberClient(plane.name, config, { retries: 2 });
    clients.set(plane.name, c);
    const simulator = new NodeSimulator({
      cluster: plane.name,
      client: c,
      nodes: 2,
      allocatable: { cpu: "8", memory: "32Gi", pods: "110" },
    });
    await simulator.start();
    nodes.push(simulator);
  }
  repo = tempDir("gitfleet-e2e-networking-");
  createRepo(repo.dir, fileTreeFromText(fleetFiles("endpoints")));
  controller = await pushController(repo.dir, planes.kubeconfig);
  zoneFile = join(planes.runDir, "db.clusterset.local");
  writeFileSync(zoneFile, "");
  dnsPort = await freePort();
  const corefile = join(planes.runDir, "Corefile");
  writeFileSync(
    corefile,
    `clusterset.local:${dnsPort} {\n  bind 127.0.0.1\n  file ${zoneFile} {\n    reload 1s\n  }\n  errors\n}\n`,
  );
}, 900_000);

// CoreDNS's file plugin needs a zone to start with: it starts once the first one is copied.
function startCoreDns(): void {
  coredns ??= spawn(join(corednsDir, "coredns"), ["-conf", join(planes.runDir, "Corefile")], {
    stdio: ["ignore", "ignore", "inherit"],
  });
}

afterAll(async () => {
  coredns?.kill("SIGKILL");
  for (const simulator of nodes) simulator.stop();
  await planes?.stop();
  repo?.cleanup();
}, 60_000);

describe("multi-cluster services against real API servers and CoreDNS", () => {
  it("renders what the real API servers accept under strict validation, and CoreDNS answers the clusterset name with both clusters", async () => {
    await until("both entry points in west's zone, and the cluster set's properties", async () => {
      const zone = String(asMap((await get("west", ZONE_PATH))?.data)["db.clusterset.local"] ?? "");
      const properties = await Promise.all(
        CLUSTERS.map((c) =>
          get(c, "/apis/about.k8s.io/v1alpha1/clusterproperties/cluster.clusterset.k8s.io"),
        ),
      );
      return (
        CLUSTERS.every((c) => zone.includes(`${c}.web.shop.svc 5 IN A ${ADDRESS[c]}`)) &&
        properties.every((p) => p !== undefined)
      );
    }).catch((error: unknown) => {
      // What the status branch says went wrong: apply errors and anything about the cluster set.
      const files = branchFiles(repo.dir, "gitfleet/status");
      for (const [path, text] of files)
        for (const line of text.split("\n").filter((l) => /ClusterProperty|about\.k8s|error/.test(l)))
          console.log(`${path}: ${line}`);
      throw error;
    });
    // What the members run: exports where replicas run, imports and slices for both producers, the
    // cluster set's identity.
    for (const cluster of CLUSTERS) {
      expect(
        await get(cluster, "/apis/multicluster.x-k8s.io/v1alpha1/namespaces/shop/serviceexports/web"),
      ).toBeDefined();
      const imported = await get(
        cluster,
        "/apis/multicluster.x-k8s.io/v1alpha1/namespaces/shop/serviceimports/web",
      );
      expect(asMap(imported?.spec)).toEqual({
        type: "ClusterSetIP",
        ports: [{ name: "http", protocol: "TCP", port: 80 }],
      });
      const slices = asList(
        asMap(
          await get(
            cluster,
            "/apis/discovery.k8s.io/v1/namespaces/shop/endpointslices?labelSelector=multicluster.kubernetes.io%2Fservice-name%3Dweb",
          ),
        ).items,
      ).map((s) => asMap(asMap(s).metadata).name);
      expect(slices.sort()).toEqual(["web-east", "web-west"]);
      const property = await get(
        cluster,
        "/apis/about.k8s.io/v1alpha1/clusterproperties/cluster.clusterset.k8s.io",
      );
      expect(asMap(property?.spec).value).toBe(cluster);
    }
    // Every networking object gitfleet rendered, applied again as a dry run under strict field
    // validation: an unknown or duplicate field would be refused.
    const rendered = [...branchFiles(repo.dir, "gitfleet/status")].filter(
      ([path]) =>
        /\/(multicluster\.x-k8s\.io|discovery\.k8s\.io|about\.k8s\.io)\./.test(path) ||
        path.includes("gitfleet-clusterset-zone"),
    );
    expect(rendered.length).toBeGreaterThanOrEqual(12);
    for (const [path, text] of rendered) await strictDryRun(path.split("/")[1] as string, text);
    // The dns mode's DNSEndpoint, rendered from the same fleet, as external-dns's CRD validates it.
    const loaded = loadFleet(fileTreeFromText(fleetFiles("dns")));
    if (!loaded.model) throw new Error("the dns fleet does not load");
    const dnsRender = renderFleet(loaded.model, {
      observations: {
        now: Date.now(),
        clusters: new Map(),
        workloads: new Map(),
        entryPoints: new Map(CLUSTERS.map((c) => [c, new Map([["shop/web", [ADDRESS[c] as string]]])])),
      },
    });
    const endpoint = dnsRender.objects.find((o) => o.identity.startsWith("externaldns.k8s.io/DNSEndpoint/"));
    expect(asList(asMap(endpoint?.object.spec).endpoints)).toHaveLength(2);
    await client("west")
      .raw("POST", "/api/v1/namespaces", {
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name: "gitfleet-dns" },
      })
      .catch(() => undefined);
    await strictDryRun("west", endpoint?.text ?? "");

    // CoreDNS serves the zone west's members read: a real resolver gets both entry points.
    await copyZone();
    await pollDig("web.shop.svc.clusterset.local", "A", ["198.51.100.1", "198.51.100.2"]);
    expect(dig("_http._tcp.web.shop.svc.clusterset.local", "SRV")).toEqual([
      "0 2 80 east.web.shop.svc.clusterset.local.",
      "0 2 80 west.web.shop.svc.clusterset.local.",
    ]);
    expect(dig("east.web.shop.svc.clusterset.local", "A")).toEqual(["198.51.100.1"]);
    expect(dig("dns-version.clusterset.local", "TXT")).toEqual(['"1.1.0"']);
  });

  it("withdraws a stopped member's endpoints from the zone within seconds, and moves its replicas later", async () => {
    const east = planes.clusters.find((p) => p.name === "east");
    await east?.stopApiServer();
    const stoppedAt = Date.now();
    await until("east withdrawn from west's zone", async () => {
      const zone = String(asMap((await get("west", ZONE_PATH))?.data)["db.clusterset.local"] ?? "");
      return zone !== "" && !zone.includes(ADDRESS.east as string);
    });
    const withdrawnAt = Date.now();
    await copyZone();
    await pollDig("web.shop.svc.clusterset.local", "A", ["198.51.100.2"]);
    const answeredAt = Date.now();
    const log = execFileSync("git", ["log", "--format=%s", "gitfleet/status"], {
      cwd: repo.dir,
      encoding: "utf8",
    });
    expect(log).toMatch(/endpoints web\.shop −east/);
    await until("all four replicas ready in west", async () => {
      const web = await get("west", "/apis/apps/v1/namespaces/shop/deployments/web");
      return asMap(web?.spec).replicas === 4 && asMap(web?.status).readyReplicas === 4;
    });
    const movedAt = Date.now();
    console.log(
      `e2e: east's API server stopped → endpoints withdrawn from west's zone in ${((withdrawnAt - stoppedAt) / 1000).toFixed(1)} s, CoreDNS answering without east in ${((answeredAt - stoppedAt) / 1000).toFixed(1)} s, replicas ready in west in ${((movedAt - stoppedAt) / 1000).toFixed(1)} s`,
    );
    expect(withdrawnAt).toBeLessThanOrEqual(movedAt);
  });
});

const PLURALS: Readonly<Record<string, string>> = {
  ClusterProperty: "clusterproperties",
  ConfigMap: "configmaps",
  DNSEndpoint: "dnsendpoints",
  EndpointSlice: "endpointslices",
  ServiceExport: "serviceexports",
  ServiceImport: "serviceimports",
};

async function strictDryRun(cluster: string, text: string): Promise<void> {
  const object = asMap((await import("yaml")).parse(text));
  const metadata = asMap(object.metadata);
  const [group, version] = String(object.apiVersion).includes("/")
    ? String(object.apiVersion).split("/")
    : ["", String(object.apiVersion)];
  const plural = PLURALS[String(object.kind)];
  if (!plural) throw new Error(`no plural known for ${String(object.kind)}`);
  const base = group ? `/apis/${group}/${version}` : `/api/${version}`;
  const scope = typeof metadata.namespace === "string" ? `/namespaces/${metadata.namespace}` : "";
  const path = `${base}${scope}/${plural}/${String(metadata.name)}?fieldManager=strict-check&dryRun=All&fieldValidation=Strict&force=true`;
  await client(cluster).raw("PATCH", path, object, "application/apply-patch+yaml");
}

async function pollDig(name: string, type: string, want: readonly string[]): Promise<void> {
  const deadline = Date.now() + 20_000;
  let seen: string[] = [];
  while (Date.now() < deadline) {
    seen = dig(name, type);
    if (JSON.stringify(seen) === JSON.stringify(want)) return;
    await sleep(250);
  }
  throw new Error(`dig ${name} ${type}: ${JSON.stringify(seen)}, wanted ${JSON.stringify(want)}`);
}
