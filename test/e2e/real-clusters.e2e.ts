import { execFileSync } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { asList, asMap, type JsonMap } from "../../src/apimachinery/json.js";
import { SopsKeyring } from "../../src/credentials/sops-keyring.js";
import { applyObject } from "../../src/kube/apply-object.js";
import { MemberApiError, MemberClient } from "../../src/kube/member-client.js";
import type { FileTree } from "../../src/model/file-tree.js";
import type { SimulatedMember } from "../../src/sim/member-server.js";
import { appStatusPath } from "../../src/status/status-files.js";
import type { DesiredObject } from "../../src/sync/desired-objects.js";
import { readExampleRepo } from "../helpers/example-repo.js";
import { branchFiles, commitTree, createRepo, gitIn, tempDir } from "../helpers/git-repo.js";
import { type AgeKey, ageKey, ageKeyFile, sopsEncrypt } from "../helpers/sops.js";
import { pushController, startMembers, statusFile } from "../helpers/sync-fleet.js";
import { type ControlPlanes, startControlPlanes } from "./cluster/control-plane.js";
import { assignLoadBalancers } from "./cluster/load-balancers.js";
import { NodeSimulator } from "./cluster/node-simulator.js";

/**
 * The second test tier: gitfleet against three real Kubernetes control planes (kube-apiserver,
 * kube-controller-manager and kube-scheduler built from the k8s.io/kubernetes module, one shared
 * etcd), whose nodes are simulated. The example fleet's other four clusters are simulated members,
 * so the whole fleet syncs; every assertion is about the real ones.
 */

const REAL = ["aws-use1", "gcp-euw1", "idc-east-1"];
const SIMULATED = ["idc-east-2", "idc-west-1", "staging-1", "test-1"];
const BUILD = fileURLToPath(new URL("./cluster/build.sh", import.meta.url));

let planes: ControlPlanes;
let simulated: SimulatedMember[] = [];
const nodes: NodeSimulator[] = [];
const clients = new Map<string, MemberClient>();
let kubeconfig = "";
let simKubeconfig = "";
let repo: { dir: string; cleanup: () => void };
let controller: Awaited<ReturnType<typeof pushController>>;
let example: FileTree;
let sopsKey: AgeKey;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const client = (cluster: string) => clients.get(cluster) as MemberClient;

async function get(cluster: string, path: string): Promise<JsonMap | undefined> {
  return (await client(cluster)
    .raw("GET", path)
    .catch((error: unknown) => {
      if (/404|not found/i.test(String(error))) return undefined;
      throw error;
    })) as JsonMap | undefined;
}

/** Rounds of the controller until `done` holds (or fails naming what was last seen). */
async function until(
  what: string,
  done: () => Promise<boolean> | boolean,
  timeoutMs = 180_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    await controller.prober.probeOnce();
    await controller.round();
    // web's Service is a LoadBalancer (the example exports it): each real cluster's gets an address.
    await assignLoadBalancers(clients, (cluster) => `198.51.100.${REAL.indexOf(cluster) + 1}`);
    if (await done()) return;
    await sleep(500);
  }
  throw new Error(`${what}: not reached in ${timeoutMs / 1000} s`);
}

function file(tree: FileTree, path: string): string {
  return new TextDecoder().decode(tree.get(path));
}

function withFile(tree: FileTree, path: string, text: string | undefined): FileTree {
  const next = new Map(tree);
  if (text === undefined) next.delete(path);
  else next.set(path, new TextEncoder().encode(text));
  return next;
}

// The example fleet with failover and probes quick enough for a test: NotReady after 3 failed
// 1-second probes, NoExecute 2 s later, tolerated for 2 s.
function quickFailover(tree: FileTree): FileTree {
  let next = withFile(
    tree,
    "fleet.yaml",
    file(tree, "fleet.yaml")
      .replace("probeInterval: 2s", "probeInterval: 1s")
      .replace("noExecuteAfter: 30s", "noExecuteAfter: 2s"),
  );
  for (const placement of ["placements/web.yaml", "placements/storefront-api.yaml"])
    next = withFile(
      next,
      placement,
      file(next, placement).replace("tolerationSeconds: 30", "tolerationSeconds: 2"),
    );
  return next;
}

async function deploymentIn(cluster: string, namespace: string, name: string): Promise<JsonMap | undefined> {
  return get(cluster, `/apis/apps/v1/namespaces/${namespace}/deployments/${name}`);
}

async function podUids(cluster: string, namespace: string, selector: string): Promise<string[]> {
  const list = asMap(
    await client(cluster).raw(
      "GET",
      `/api/v1/namespaces/${namespace}/pods?labelSelector=${encodeURIComponent(selector)}`,
    ),
  );
  return asList(list.items)
    .map((p) => String(asMap(asMap(p).metadata).uid))
    .sort();
}

beforeAll(async () => {
  const binDir = execFileSync("bash", [BUILD], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] })
    .trim()
    .split("\n")
    .pop() as string;
  const started = Date.now();
  planes = await startControlPlanes({ binDir, names: REAL });
  console.log(`e2e: ${REAL.length} control planes ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  repo = tempDir("gitfleet-e2e-fleet-");
  simKubeconfig = join(repo.dir, "..", `${repo.dir.split("/").pop()}-sim.kubeconfig`);
  const members = await startMembers(SIMULATED, simKubeconfig);
  simulated = members.members;
  // One kubeconfig: the real clusters' contexts and the simulated members'.
  const merged = new k8s.KubeConfig();
  merged.loadFromFile(planes.kubeconfig);
  const others = new k8s.KubeConfig();
  others.loadFromFile(members.kubeconfig);
  merged.mergeConfig(others);
  kubeconfig = join(planes.runDir, "fleet.kubeconfig");
  writeFileSync(kubeconfig, merged.exportConfig());
  for (const plane of planes.clusters) {
    const config = new k8s.KubeConfig();
    config.loadFromFile(planes.kubeconfig);
    config.setCurrentContext(plane.name);
    const c = new MemberClient(plane.name, config, { retries: 2 });
    clients.set(plane.name, c);
    const simulator = new NodeSimulator({
      cluster: plane.name,
      client: c,
      nodes: 3,
      allocatable: { cpu: "8", memory: "32Gi", pods: "110" },
    });
    await simulator.start();
    nodes.push(simulator);
  }
  example = quickFailover(await readExampleRepo());
  createRepo(repo.dir, example);
  // idc-west-1's Cluster names its credentials by an environment variable (kubeconfigEnv).
  // The controller holds an age key: the sops-encrypted Secret scenario encrypts to it with the real sops.
  sopsKey = await ageKey();
  controller = await pushController(
    repo.dir,
    kubeconfig,
    { GITFLEET_KUBECONFIG_IDC_WEST_1: kubeconfig },
    { keyring: SopsKeyring.fromKeyFile(ageKeyFile([sopsKey])) },
  );
}, 900_000);

afterAll(async () => {
  for (const simulator of nodes) simulator.stop();
  await Promise.all(simulated.map((m) => m.close()));
  const pids = planes?.pids() ?? [];
  await planes?.stop();
  repo?.cleanup();
  rmSync(simKubeconfig, { force: true });
  // Nothing is left behind.
  const alive = pids.filter((pid) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  });
  expect(alive).toEqual([]);
}, 60_000);

describe("gitfleet against real Kubernetes API servers", () => {
  it("syncs the example fleet into the real clusters: namespaces, RBAC, the CRD before its custom resources, workloads that get ready", async () => {
    await until("web and storefront-api ready in every real cluster", async () => {
      for (const cluster of REAL) {
        const web = await deploymentIn(cluster, "shop", "web");
        const api = await deploymentIn(cluster, "shop", "storefront-api");
        for (const d of [web, api]) {
          const wanted = asMap(d?.spec).replicas;
          if (!d || typeof wanted !== "number" || asMap(d.status).readyReplicas !== wanted) return false;
        }
      }
      // And the status branch has recorded it (a round's sync can see the pods a moment before ready).
      const observed = asMap(statusFile(repo.dir, appStatusPath("web")).observed);
      return REAL.every((cluster) => asMap(observed[cluster]).health === "Healthy");
    });
    for (const cluster of REAL) {
      const web = await deploymentIn(cluster, "shop", "web");
      expect(asMap(asMap(web?.metadata).labels)).toMatchObject({
        "app.kubernetes.io/managed-by": "gitfleet",
        "gitfleet.io/app": "web",
      });
      // gitfleet's field manager owns what it applied, as the real server records it.
      const managers = asList(asMap(web?.metadata).managedFields).map(
        (m) => `${String(asMap(m).manager)}/${String(asMap(m).operation)}`,
      );
      expect(managers).toContain("gitfleet/Apply");
      expect(managers).toContain("kube-controller-manager/Update");
    }
    // arena's CloneSet CRD is Established before its custom resource is applied. (arena rolls out
    // one cluster at a time and no CloneSet controller runs here, so it reaches only the first.)
    let withArena = 0;
    for (const cluster of REAL) {
      const cloneSet = await get(
        cluster,
        "/apis/apps.kruise.io/v1alpha1/namespaces/games/clonesets/arena",
      ).catch(() => undefined);
      if (!cloneSet) continue;
      withArena++;
      const crd = await get(
        cluster,
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/clonesets.apps.kruise.io",
      );
      const established = asList(asMap(crd?.status).conditions).find((c) => asMap(c).type === "Established");
      expect(asMap(established).status).toBe("True");
      expect(Date.parse(String(asMap(established).lastTransitionTime))).toBeLessThanOrEqual(
        Date.parse(String(asMap(cloneSet.metadata).creationTimestamp)),
      );
    }
    expect(withArena).toBeGreaterThan(0);
    // The inventory ConfigMap in each real cluster, and status on the branch.
    for (const cluster of REAL)
      expect(
        await get(cluster, "/api/v1/namespaces/gitfleet-system/configmaps/gitfleet-inventory"),
      ).toBeDefined();
    const status = statusFile(repo.dir, appStatusPath("web"));
    for (const cluster of REAL) expect(asMap(asMap(status.observed)[cluster]).health).toBe("Healthy");
  });

  it("applies each team's objects as the team: the member's RBAC from the team's bounds refuses what the bounds exclude, even past validation", async () => {
    // The example's games team: namespace games, no cluster-scoped kind but CRDs. Its account and
    // bindings are in every cluster its apps reached, and its objects there were applied as it.
    const account = "/api/v1/namespaces/gitfleet-system/serviceaccounts/gitfleet-team-games";
    const reached = [];
    for (const cluster of REAL) if (await get(cluster, account)) reached.push(cluster);
    expect(reached.length).toBeGreaterThan(0);
    const cluster = reached[0] as string;
    const binding = asMap(
      await get(
        cluster,
        "/apis/rbac.authorization.k8s.io/v1/namespaces/games/rolebindings/gitfleet-team-games",
      ),
    );
    expect(binding.subjects).toEqual([
      { kind: "ServiceAccount", name: "gitfleet-team-games", namespace: "gitfleet-system" },
    ]);
    expect(
      await get(
        cluster,
        "/apis/rbac.authorization.k8s.io/v1/namespaces/shop/rolebindings/gitfleet-team-games",
      ),
    ).toBeUndefined();
    // What validation would have refused, sent as the sync sends a team's object (a test-only
    // bypass: the desired object is made here, not loaded): the member refuses it.
    const asGames = (object: JsonMap) =>
      applyObject(
        client(cluster),
        {
          identity: "",
          app: "arena",
          object,
          digest: "",
          policy: { force: true, adopt: false, selfHeal: true },
          role: { kind: "object", wave: 0 },
          team: "games",
        } as DesiredObject,
        false,
        false,
      );
    const configMap = (namespace: string) => ({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "team-probe", namespace },
      data: { by: "games" },
    });
    const refused = async (object: JsonMap) => {
      const error = await asGames(object).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(MemberApiError);
      expect((error as MemberApiError).code).toBe(403);
      expect((error as MemberApiError).message).toContain(
        "system:serviceaccount:gitfleet-system:gitfleet-team-games",
      );
    };
    await refused({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: "games-takes-over" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
      subjects: [{ kind: "ServiceAccount", name: "gitfleet-team-games", namespace: "gitfleet-system" }],
    });
    await refused(configMap("shop"));
    await refused({ apiVersion: "v1", kind: "Namespace", metadata: { name: "games-extra" } });
    // Within its bounds the team writes as itself.
    expect(asMap((await asGames(configMap("games"))).metadata).namespace).toBe("games");
    await client(cluster).raw("DELETE", "/api/v1/namespaces/games/configmaps/team-probe");
  });

  it("applies a Secret the real sops encrypted, opened only at sync: the real clusters hold its value, the repository's history never", async () => {
    const value = "sealed-e2e-test-only";
    const files = {
      "apps/sealed/app.yaml":
        "apiVersion: gitfleet.io/v1alpha1\nkind: App\nmetadata:\n  name: sealed\nspec:\n  namespace: sealed\n",
      "apps/sealed/secret.yaml": sopsEncrypt(
        `apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\nstringData:\n  password: ${value}\n`,
        [sopsKey.recipient],
      ),
      // Every real cluster at once: the test is of the Secret, not of the fleet's rollout.
      "placements/sealed.yaml": `apiVersion: gitfleet.io/v1alpha1\nkind: Placement\nmetadata:\n  name: sealed\nspec:\n  apps: [sealed]\n  clusterAffinity:\n    clusterNames: [${REAL.join(", ")}]\n  rollout:\n    strategy: Parallel\n    maxUnavailableClusters: 100%\n`,
    };
    let next = example;
    for (const [path, text] of Object.entries(files)) next = withFile(next, path, text);
    commitTree(repo.dir, next, "sealed: a Secret encrypted with sops");
    example = next;
    const path = "/api/v1/namespaces/sealed/secrets/db";
    const opened = async () => {
      const found: string[] = [];
      for (const cluster of REAL)
        if (asMap((await get(cluster, path))?.data).password === Buffer.from(value).toString("base64"))
          found.push(cluster);
      return found;
    };
    await until(
      "the encrypted Secret opened in every real cluster",
      async () => (await opened()).length === REAL.length,
      120_000,
    ).catch((error: unknown) => {
      throw new Error(
        `${String(error)}; status ${JSON.stringify(statusFile(repo.dir, appStatusPath("sealed")))}`,
      );
    });
    // The real API server keeps data only: stringData is write-only.
    expect(asMap(await get(REAL[0] as string, path)).stringData).toBeUndefined();
    const history = gitIn(repo.dir, "log", "-p", "--all");
    expect(history).not.toContain(value);
    expect(history).not.toContain(Buffer.from(value).toString("base64"));
  });

  it("reports a field another manager owns instead of overwriting it, and corrects drift on a field it owns", async () => {
    // A team's tool takes SESSION_TTL in aws-use1 with its own server-side apply.
    await client("aws-use1").raw(
      "PATCH",
      "/api/v1/namespaces/shop/configmaps/web-config?fieldManager=team-tool&force=true",
      {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "web-config", namespace: "shop" },
        data: { SESSION_TTL: "45m" },
      },
      "application/apply-patch+yaml",
    );
    // The fleet changes it too: gitfleet's apply meets team-tool's ownership → 409, reported.
    example = withFile(
      example,
      "apps/web/configmap.yaml",
      file(example, "apps/web/configmap.yaml").replace("SESSION_TTL: 30m", "SESSION_TTL: 60m"),
    );
    commitTree(repo.dir, example, "web: longer sessions");
    await until("the conflict reported", () =>
      JSON.stringify(statusFile(repo.dir, appStatusPath("web"))).includes("team-tool"),
    );
    const live = await get("aws-use1", "/api/v1/namespaces/shop/configmaps/web-config");
    expect(asMap(live?.data).SESSION_TTL).toBe("45m");
    // web rolls out Serially from aws-use1: the conflict there holds the clusters after it.
    expect(
      asMap((await get("gcp-euw1", "/api/v1/namespaces/shop/configmaps/web-config"))?.data).SESSION_TTL,
    ).toBe("30m");
    // The team hands the field back (applies without it): gitfleet's change goes through everywhere.
    await client("aws-use1").raw(
      "PATCH",
      "/api/v1/namespaces/shop/configmaps/web-config?fieldManager=team-tool",
      { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "web-config", namespace: "shop" } },
      "application/apply-patch+yaml",
    );
    await until("60m everywhere", async () => {
      for (const cluster of REAL) {
        const cm = await get(cluster, "/api/v1/namespaces/shop/configmaps/web-config");
        if (asMap(cm?.data).SESSION_TTL !== "60m") return false;
      }
      return true;
    });

    // Drift: someone edits a field gitfleet owns (kubectl edit is a plain update): corrected.
    await client("gcp-euw1").raw(
      "PATCH",
      "/api/v1/namespaces/shop/configmaps/web-config?fieldManager=kubectl-edit",
      { data: { CATALOG_URL: "http://elsewhere:8080" } },
      "application/merge-patch+json",
    );
    await until("drift corrected", async () => {
      const cm = await get("gcp-euw1", "/api/v1/namespaces/shop/configmaps/web-config");
      return asMap(cm?.data).CATALOG_URL === "http://catalog.shop.svc:8080";
    });
  });

  it("adopts a Deployment a team created by hand without restarting its pods", async () => {
    const legacy = {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "ledger", namespace: "shop", labels: { "app.kubernetes.io/name": "ledger" } },
      spec: {
        replicas: 2,
        selector: { matchLabels: { "app.kubernetes.io/name": "ledger" } },
        template: {
          metadata: { labels: { "app.kubernetes.io/name": "ledger" } },
          spec: { containers: [{ name: "ledger", image: "ghcr.io/example-shop/ledger:1.0.0" }] },
        },
      },
    };
    await client("aws-use1").raw(
      "POST",
      "/apis/apps/v1/namespaces/shop/deployments?fieldManager=kubectl-create",
      legacy,
    );
    for (
      let i = 0;
      i < 240 && asMap((await deploymentIn("aws-use1", "shop", "ledger"))?.status).readyReplicas !== 2;
      i++
    )
      await sleep(250);
    const before = await podUids("aws-use1", "shop", "app.kubernetes.io/name=ledger");
    expect(before).toHaveLength(2);
    const { metadata: _, ...rest } = legacy;
    let next = withFile(
      example,
      "apps/ledger/app.yaml",
      "apiVersion: gitfleet.io/v1alpha1\nkind: App\nmetadata:\n  name: ledger\nspec:\n  namespace: shop\n",
    );
    next = withFile(
      next,
      "apps/ledger/deployment.yaml",
      JSON.stringify({ ...rest, metadata: { name: "ledger", labels: legacy.metadata.labels } }, null, 2),
    );
    next = withFile(
      next,
      "placements/ledger.yaml",
      "apiVersion: gitfleet.io/v1alpha1\nkind: Placement\nmetadata:\n  name: ledger\nspec:\n  apps: [ledger]\n  clusterAffinity:\n    clusterNames: [aws-use1]\n",
    );
    next = withFile(
      next,
      "migrations/ledger.yaml",
      "apiVersion: gitfleet.io/v1alpha1\nkind: Migration\nmetadata:\n  name: ledger\nspec:\n  observe: 0s\n  batches:\n    - name: aws\n      apps: [ledger]\n      clusters: [aws-use1]\n      approved: true\n",
    );
    commitTree(repo.dir, next, "migrate ledger");
    example = next;
    await until("ledger adopted", async () => {
      const d = await deploymentIn("aws-use1", "shop", "ledger");
      return asMap(asMap(d?.metadata).labels)["gitfleet.io/app"] === "ledger";
    });
    expect(await podUids("aws-use1", "shop", "app.kubernetes.io/name=ledger")).toEqual(before);
    const managers = asList(
      asMap((await deploymentIn("aws-use1", "shop", "ledger"))?.metadata).managedFields,
    ).map((m) => String(asMap(m).manager));
    // The hand-creator's plain write gave its fields up to gitfleet.
    expect(managers).toContain("gitfleet");
    expect(managers).not.toContain("kubectl-create");
  });

  it("fails over when a member's API server is killed, and moves nothing back when it returns", async () => {
    const aws = planes.clusters.find((c) => c.name === "aws-use1");
    if (!aws) throw new Error("no aws-use1");
    const total = (d: JsonMap | undefined) => Number(asMap(d?.status).readyReplicas ?? 0);
    await aws.stopApiServer();
    const killedAt = Date.now();
    await until(
      "storefront-api's 8 replicas ready on the other real clusters",
      async () => {
        const log = gitIn(repo.dir, "log", "--format=%s", "gitfleet/status");
        if (!/failover: cluster aws-use1 Unreachable for/.test(log)) return false;
        const spec = (d: JsonMap | undefined) => Number(asMap(d?.spec).replicas ?? 0);
        const gcp = await deploymentIn("gcp-euw1", "shop", "storefront-api");
        const idc = await deploymentIn("idc-east-1", "shop", "storefront-api");
        return total(gcp) === spec(gcp) && total(idc) === spec(idc) && spec(gcp) + spec(idc) === 8;
      },
      240_000,
    );
    console.log(
      `e2e: aws-use1 API server killed → storefront-api's replicas ready elsewhere after ${((Date.now() - killedAt) / 1000).toFixed(1)} s`,
    );
    await aws.startApiServer();
    await until("aws-use1 Ready again", () =>
      /cluster aws-use1 Ready again/.test(gitIn(repo.dir, "log", "--format=%s", "gitfleet/status")),
    );
    // Nothing moves back: aws-use1 runs no storefront-api, and its old objects were cleaned up.
    const after = branchFiles(repo.dir, "gitfleet/status");
    expect(after.get("rendered/aws-use1/shop/apps.Deployment.storefront-api.yaml")).toBeUndefined();
    await until(
      "aws-use1's old storefront-api pruned",
      async () => !(await deploymentIn("aws-use1", "shop", "storefront-api")),
    );
  });

  it("prunes an app removed from the fleet: the real garbage collector takes its pods", async () => {
    const before = await podUids("idc-east-1", "shop", "app.kubernetes.io/name=storefront-api");
    expect(before.length).toBeGreaterThan(0);
    // The app, its Placement and its autoscaling rules go, and the image-registry Override stops naming it.
    let next = example;
    for (const path of [...next.keys()])
      if (
        /^(apps\/storefront-api\/|placements\/storefront-api\.yaml|autoscaling\/storefront-api-)/.test(path)
      )
        next = withFile(next, path, undefined);
    next = withFile(
      next,
      "overrides/image-registry.yaml",
      file(next, "overrides/image-registry.yaml").replace("apps: [web, storefront-api,", "apps: [web,"),
    );
    commitTree(repo.dir, next, "retire storefront-api");
    example = next;
    await until("storefront-api gone", async () => {
      for (const cluster of REAL) if (await deploymentIn(cluster, "shop", "storefront-api")) return false;
      return (await podUids("idc-east-1", "shop", "app.kubernetes.io/name=storefront-api")).length === 0;
    });
    // Everything else stays.
    for (const cluster of REAL) expect(await deploymentIn(cluster, "shop", "web")).toBeDefined();
  });

  it("records each real cluster's nodes and APIs, and divides a new workload by what the real clusters fit", async () => {
    // What the real API servers answered, a page at a time: three 8-CPU nodes each, and discovery.
    for (const cluster of REAL) {
      const observed = asMap(statusFile(repo.dir, `status/clusters/${cluster}.yaml`).observed);
      const pools = asList(asMap(observed.capacity).pools).map((p) => asMap(p));
      expect(pools.reduce((sum, p) => sum + Number(p.count), 0)).toBe(3);
      for (const pool of pools) expect(asMap(pool.allocatable).cpu).toBe(8);
      expect(asList(asMap(observed.apis)["apps/v1"])).toContain("Deployment");
    }
    // Other pods fill most of gcp-euw1: up to 14 CPUs of it, as the real scheduler binds them.
    await client("gcp-euw1").apply(
      {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: "filler", namespace: "default" },
        spec: {
          replicas: 7,
          selector: { matchLabels: { app: "filler" } },
          template: {
            metadata: { labels: { app: "filler" } },
            spec: {
              containers: [
                { name: "f", image: "registry.example.com/filler:1", resources: { requests: { cpu: "2" } } },
              ],
            },
          },
        },
      },
      true,
    );
    const freeCpu = (cluster: string) =>
      asList(asMap(asMap(statusFile(repo.dir, `status/clusters/${cluster}.yaml`).observed).capacity).pools)
        .map((p) => asMap(p))
        .reduce((sum, p) => sum + Number(p.count) * Number(asMap(p.free).cpu), 0);
    const before = freeCpu("gcp-euw1");
    // At least five of the seven fit beside what the example fleet runs there (the recorded free
    // amounts move in steps of a twentieth of a node).
    await until("gcp-euw1's filled nodes recorded", () => freeCpu("gcp-euw1") <= before - 9);
    // aws-use1's API server was stopped a moment ago: its nodes' heartbeats lapsed meanwhile, and the
    // real node controller keeps them tainted until they report again. Wait until both other clusters
    // have room recorded for their share, so the division below is made on settled capacity.
    const settled = (cluster: string) =>
      asList(asMap(asMap(statusFile(repo.dir, `status/clusters/${cluster}.yaml`).observed).capacity).pools)
        .map((p) => asMap(p))
        .every((p) => p.ready !== false && p.unschedulable !== true && p.taints === undefined);
    await until(
      "schedulable nodes with room recorded on the other real clusters",
      () => REAL.filter((c) => c !== "gcp-euw1").every((c) => settled(c) && freeCpu(c) >= 6),
      180_000,
    );
    // A new workload divided by free capacity over the real clusters.
    const batch = {
      "apps/batch/app.yaml":
        "apiVersion: gitfleet.io/v1alpha1\nkind: App\nmetadata:\n  name: batch\nspec:\n  namespace: batch\n",
      "apps/batch/deployment.yaml":
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: batch\nspec:\n  replicas: 9\n  selector:\n    matchLabels: {app: batch}\n  template:\n    metadata:\n      labels: {app: batch}\n    spec:\n      containers:\n        - name: batch\n          image: registry.example.com/batch:1.0.0\n          resources: {requests: {cpu: 500m, memory: 256Mi}}\n",
      "placements/batch.yaml": `apiVersion: gitfleet.io/v1alpha1\nkind: Placement\nmetadata:\n  name: batch\nspec:\n  apps: [batch]\n  clusterAffinity:\n    clusterNames: [${REAL.join(", ")}]\n  replicaScheduling:\n    type: Divided\n    weightPreference:\n      dynamicWeight: AvailableReplicas\n`,
    };
    let next = example;
    for (const [path, text] of Object.entries(batch)) next = withFile(next, path, text);
    commitTree(repo.dir, next, "batch: divided by free capacity");
    example = next;
    const decided = () =>
      asMap(
        asMap(asMap(asList(statusFile(repo.dir, appStatusPath("batch")).workloads)[0]).decision).clusters,
      );
    await until("batch decided", () => Object.keys(decided()).length > 0);
    const counts = decided();
    console.log(`e2e: batch divided by free capacity ${JSON.stringify(counts)}`);
    expect(Object.values(counts).reduce<number>((sum, n) => sum + Number(n), 0)).toBe(9);
    // The filled cluster takes the fewest; the status records a division made with every capacity known.
    const gcp = Number(counts["gcp-euw1"] ?? 0);
    for (const cluster of REAL.filter((c) => c !== "gcp-euw1"))
      expect(Number(counts[cluster] ?? 0)).toBeGreaterThan(gcp);
    expect(
      asMap(asList(statusFile(repo.dir, appStatusPath("batch")).workloads)[0]).capacityUnknown,
    ).toBeUndefined();
  });

  it("gives a StatefulSet divided over the real clusters disjoint ordinals: the real controller names the pods", async () => {
    const statefulSet = (replicas: number) =>
      `apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: journal\nspec:\n  replicas: ${replicas}\n  serviceName: journal\n  podManagementPolicy: Parallel\n  selector:\n    matchLabels: {app: journal}\n  template:\n    metadata:\n      labels: {app: journal}\n    spec:\n      containers:\n        - name: journal\n          image: registry.example.com/journal:1.0.0\n          resources: {requests: {cpu: 100m, memory: 64Mi}}\n`;
    const files = (replicas: number) => ({
      "apps/journal/app.yaml":
        "apiVersion: gitfleet.io/v1alpha1\nkind: App\nmetadata:\n  name: journal\nspec:\n  namespace: journal\n",
      "apps/journal/statefulset.yaml": statefulSet(replicas),
      "placements/journal.yaml": `apiVersion: gitfleet.io/v1alpha1\nkind: Placement\nmetadata:\n  name: journal\nspec:\n  apps: [journal]\n  clusterAffinity:\n    clusterNames: [${REAL.join(", ")}]\n  replicaScheduling:\n    type: Divided\n  # Ordinals, not the rollout, are under test: every cluster takes the change at once, whatever\n  # room the workloads of the tests before left in the first cluster for its pods to get ready.\n  rollout:\n    strategy: Parallel\n    maxUnavailableClusters: 100%\n`,
    });
    const podNames = async (cluster: string) =>
      asList(
        asMap(await client(cluster).raw("GET", "/api/v1/namespaces/journal/pods?labelSelector=app%3Djournal"))
          .items,
      )
        .map((p) => String(asMap(asMap(p).metadata).name))
        .sort((a, b) => Number(a.split("-")[1]) - Number(b.split("-")[1]));
    let seen = "";
    const names = async () =>
      Object.fromEntries(await Promise.all(REAL.map(async (c) => [c, await podNames(c)])));
    for (const [replicas, expected] of [
      [
        6,
        {
          "aws-use1": ["journal-0", "journal-1"],
          "gcp-euw1": ["journal-6", "journal-7"],
          "idc-east-1": ["journal-12", "journal-13"],
        },
      ],
      // A scale-up keeps each cluster's range: the new pods continue it.
      [
        9,
        {
          "aws-use1": ["journal-0", "journal-1", "journal-2"],
          "gcp-euw1": ["journal-6", "journal-7", "journal-8"],
          "idc-east-1": ["journal-12", "journal-13", "journal-14"],
        },
      ],
    ] as const) {
      let next = example;
      for (const [path, text] of Object.entries(files(replicas))) next = withFile(next, path, text);
      commitTree(repo.dir, next, `journal: ${replicas} replicas`);
      example = next;
      await until(
        `journal's pods named by their ranges (${replicas})`,
        async () => {
          seen = JSON.stringify(await names());
          return seen === JSON.stringify(expected);
        },
        120_000,
      ).catch((error: unknown) => {
        throw new Error(
          `${String(error)}; last seen ${seen}; status ${JSON.stringify(statusFile(repo.dir, appStatusPath("journal")))}`,
        );
      });
    }
    console.log(`e2e: journal's pods per cluster ${JSON.stringify(await names())}`);
  });

  it("gives a FederatedResourceQuota's static assignment to the real cluster as a ResourceQuota, which the real server counts and enforces", async () => {
    const deployment =
      "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: ledger\nspec:\n  replicas: 6\n  selector:\n    matchLabels: {app: ledger}\n  template:\n    metadata:\n      labels: {app: ledger}\n    spec:\n      containers:\n        - name: ledger\n          image: registry.example.com/ledger:1.0.0\n          resources: {requests: {cpu: 100m, memory: 32Mi}}\n";
    const files = {
      "apps/ledger/app.yaml":
        "apiVersion: gitfleet.io/v1alpha1\nkind: App\nmetadata:\n  name: ledger\nspec:\n  namespace: ledger\n",
      "apps/ledger/deployment.yaml": deployment,
      "placements/ledger.yaml": `apiVersion: gitfleet.io/v1alpha1\nkind: Placement\nmetadata:\n  name: ledger\nspec:\n  apps: [ledger]\n  clusterAffinity:\n    clusterNames: [${REAL.join(", ")}]\n  replicaScheduling:\n    type: Divided\n`,
      "quotas/ledger.yaml":
        'apiVersion: gitfleet.io/v1alpha1\nkind: FederatedResourceQuota\nmetadata:\n  name: ledger\n  namespace: ledger\nspec:\n  overall: {requests.cpu: "2", pods: "20"}\n  staticAssignments:\n    - clusterName: aws-use1\n      hard: {requests.cpu: 250m, pods: "5"}\n',
    };
    let next = example;
    for (const [path, text] of Object.entries(files)) next = withFile(next, path, text);
    commitTree(repo.dir, next, "ledger: a namespace with a fleet quota");
    example = next;
    // The real quota controller counts the two pods the scheduler left room for (250m: 2 × 100m).
    const quotaPath = "/api/v1/namespaces/ledger/resourcequotas/ledger";
    await until(
      "aws-use1's ResourceQuota counts ledger's pods",
      async () => asMap(asMap((await get("aws-use1", quotaPath))?.status).used).pods === "2",
      120_000,
    ).catch(async (error: unknown) => {
      const decided = statusFile(repo.dir, appStatusPath("ledger")).workloads;
      // What the member's own controllers did: the Deployment, its ReplicaSets and the namespace's events.
      const live = asMap(await get("aws-use1", "/apis/apps/v1/namespaces/ledger/deployments/ledger"));
      const sets = asList(
        asMap(await get("aws-use1", "/apis/apps/v1/namespaces/ledger/replicasets")).items,
      ).map((r) => ({ spec: asMap(asMap(r).spec).replicas, status: asMap(r).status }));
      const events = asList(asMap(await get("aws-use1", "/api/v1/namespaces/ledger/events")).items).map(
        (e) => `${asMap(e).reason}: ${asMap(e).message}`,
      );
      throw new Error(
        `${String(error)}; quota ${JSON.stringify(await get("aws-use1", quotaPath))}; deployment ${JSON.stringify({ spec: asMap(live.spec).replicas, status: live.status })}; replicasets ${JSON.stringify(sets)}; events ${JSON.stringify(events)}; decided ${JSON.stringify(decided)}; ledger status ${JSON.stringify(statusFile(repo.dir, appStatusPath("ledger")).observed)}`,
      );
    });
    const quota = await get("aws-use1", quotaPath);
    expect(asMap(quota?.spec).hard).toEqual({ pods: "5", "requests.cpu": "250m" });
    expect(asMap(asMap(quota?.status).used)["requests.cpu"]).toBe("200m");
    for (const other of REAL.filter((c) => c !== "aws-use1"))
      expect(await get(other, quotaPath)).toBeUndefined();
    // The real API server refuses a pod past the limit: the member's own admission is the last line.
    const refused = await client("aws-use1")
      .raw("POST", "/api/v1/namespaces/ledger/pods", {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "extra" },
        spec: {
          containers: [
            { name: "x", image: "registry.example.com/x:1", resources: { requests: { cpu: "100m" } } },
          ],
        },
      })
      .then(
        () => "created",
        (error: unknown) => String(error),
      );
    expect(refused).toMatch(/exceeded quota: ledger/);
    // The usage comes back into the cluster's status file.
    await until(
      "status/clusters/aws-use1.yaml records the quota's usage",
      async () => {
        const observed = asMap(statusFile(repo.dir, "status/clusters/aws-use1.yaml").observed);
        return asMap(asMap(asMap(observed.quotas)["ledger/ledger"]).used).pods === "2";
      },
      120_000,
    );
    const decided = asList(statusFile(repo.dir, appStatusPath("ledger")).workloads)[0];
    console.log(
      `e2e: ledger decided ${JSON.stringify(asMap(asMap(decided).decision).clusters)}; extra pod: ${refused.slice(0, 200)}`,
    );
  });
});
