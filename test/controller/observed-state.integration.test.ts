import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { asList, asMap } from "../../src/apimachinery/json.js";
import { MemberClient } from "../../src/kube/member-client.js";
import { fileTreeFromText } from "../../src/model/file-tree.js";
import { planRevisions } from "../../src/revisions/plan-revisions.js";
import { memberClientConfig } from "../../src/sim/kubeconfig.js";
import { type SimulatedMember, startMember } from "../../src/sim/member-server.js";
import { DEFAULT_PROFILE } from "../../src/sim/simulation-profile.js";
import type { NodePool } from "../../src/sim/world.js";
import { appStatusPath } from "../../src/status/status-files.js";
import { branchFiles, commitTree, createRepo, gitIn, tempDir } from "../helpers/git-repo.js";
import { writeKubeconfig } from "../helpers/member.js";
import { webDeployment } from "../helpers/minimal-fleet.js";
import { liveObject, pushController, statusFile } from "../helpers/sync-fleet.js";
import { clusterYaml } from "../helpers/two-clusters.js";

// Decisions from what the members really have, end to end: simulated members with different node
// pools, the controller reading their nodes, pods and discovery, and dividing by what fits.

const POOLS: Record<string, NodePool[]> = {
  // 16 CPUs on two nodes, and a GPU node web's pods do not tolerate.
  east: [
    { count: 2, allocatable: { cpu: "8", memory: "32Gi", pods: "110" } },
    {
      count: 1,
      allocatable: { cpu: "32", memory: "128Gi", pods: "110" },
      taints: [{ key: "nvidia.com/gpu", effect: "NoSchedule" }],
    },
  ],
  // 4 CPUs.
  west: [{ count: 1, allocatable: { cpu: "4", memory: "16Gi", pods: "110" } }],
};

const placement = (scheduling: string, failover = "") => `apiVersion: gitfleet.io/v1alpha1
kind: Placement
metadata:
  name: web
spec:
  apps: [web]
  replicaScheduling:
${scheduling}${failover}`;

const DYNAMIC = "    type: Divided\n    weightPreference:\n      dynamicWeight: AvailableReplicas\n";

const CLONESET = `apiVersion: apps.kruise.io/v1alpha1
kind: CloneSet
metadata:
  name: cache
spec:
  replicas: 1
  selector: { matchLabels: { app: cache } }
  template:
    metadata: { labels: { app: cache } }
    spec: { containers: [{ name: cache, image: registry.example.com/cache:1.0.0 }] }
`;

function fleetRepo(files: Record<string, string>) {
  return fileTreeFromText({
    "clusters/east.yaml": clusterYaml("east"),
    "clusters/west.yaml": clusterYaml("west"),
    "apps/web/app.yaml":
      "apiVersion: gitfleet.io/v1alpha1\nkind: App\nmetadata:\n  name: web\nspec:\n  namespace: shop\n",
    "apps/web/deployment.yaml": webDeployment(6, "1"),
    "placements/web.yaml": placement(DYNAMIC),
    ...files,
  });
}

describe("decisions from observed state on simulated members", () => {
  let dir = "";
  let cleanup = () => {};
  let members: SimulatedMember[] = [];
  let kubeconfig = "";
  beforeEach(async () => {
    ({ dir, cleanup } = tempDir("gitfleet-observed-"));
    members = await Promise.all(
      Object.entries(POOLS).map(([name, nodePools]) =>
        startMember({ name, world: { nodePools, readyDelayMs: 20, workloads: DEFAULT_PROFILE.workloads } }),
      ),
    );
    kubeconfig = writeKubeconfig(`${dir}.kubeconfig`, members);
  });
  afterEach(async () => {
    await Promise.all(members.map((m) => m.close()));
    cleanup();
  });

  const member = (name: string) => members.find((m) => m.name === name) as SimulatedMember;
  const client = (name: string) => new MemberClient(name, memberClientConfig(member(name)));
  const web = () => asMap(asList(statusFile(dir, appStatusPath("web")).workloads)[0]);
  const decided = () => asMap(asMap(web().decision).clusters);
  const subjects = () => gitIn(dir, "log", "--format=%s", "gitfleet/status").split("\n");

  async function until(
    controller: Awaited<ReturnType<typeof pushController>>,
    done: () => boolean | Promise<boolean>,
    what: string,
    rounds = 150,
  ): Promise<void> {
    for (let i = 0; i < rounds; i++) {
      await controller.prober.probeOnce();
      await controller.round();
      if (await done()) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`${what}: not reached; web decided ${JSON.stringify(decided())}`);
  }

  it("divides by free replicas at node level, keeps a filled cluster out of a scale-up, and records compact pools", async () => {
    createRepo(dir, fleetRepo({}));
    const controller = await pushController(dir, kubeconfig);
    // Blind at first (3/3); once the nodes are read: room east 16 (the GPU node is tainted), west 4.
    await until(controller, () => decided().east === 5 && decided().west === 1, "divided by capacity");
    expect(
      subjects().some((s) => /^failover: capacity of east, west now known; web 2 → east \+2$/.test(s)),
    ).toBe(true);
    const recorded = asMap(asMap(statusFile(dir, "status/clusters/east.yaml").observed).capacity);
    // Three nodes in at most three pools, the GPU node's taint kept.
    const pools = asList(recorded.pools).map((p) => asMap(p));
    expect(pools.reduce((sum, p) => sum + Number(p.count), 0)).toBe(3);
    expect(pools.filter((p) => asList(p.taints).length > 0)).toHaveLength(1);
    // Other pods fill east: a scale-up's new replicas all go to west.
    await client("east").apply(
      {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: "filler", namespace: "default" },
        spec: {
          replicas: 11,
          selector: { matchLabels: { app: "filler" } },
          template: {
            metadata: { labels: { app: "filler" } },
            spec: { containers: [{ name: "f", image: "filler:1", resources: { requests: { cpu: "1" } } }] },
          },
        },
      },
      true,
    );
    await until(
      controller,
      () =>
        asList(asMap(asMap(statusFile(dir, "status/clusters/east.yaml").observed).capacity).pools).every(
          (p) => Number(asMap(asMap(p).free).cpu) < 1 || asList(asMap(p).taints).length > 0,
        ),
      "east recorded full",
    );
    commitTree(dir, fleetRepo({ "apps/web/deployment.yaml": webDeployment(9, "1") }), "web: 9 replicas");
    await until(controller, () => decided().west === 4, "scale-up to west");
    expect(decided()).toEqual({ east: 5, west: 4 });
  });

  it("keeps a member's readings while it is down: its return divides nothing again", async () => {
    createRepo(dir, fleetRepo({}));
    const controller = await pushController(dir, kubeconfig);
    await until(controller, () => decided().east === 5 && decided().west === 1, "divided by capacity");
    const before = subjects().length;
    await member("west").faults.down();
    await until(
      controller,
      () => typeof asMap(statusFile(dir, "status/clusters/west.yaml").observed).staleSince === "string",
      "west's readings stale",
    );
    const away = asMap(statusFile(dir, "status/clusters/west.yaml").observed);
    expect(away.reachable).toBe(false);
    expect(asList(asMap(away.capacity).pools)).toHaveLength(1);
    expect(web().capacityUnknown).toBeUndefined();
    await member("west").faults.up();
    await until(
      controller,
      () => asMap(statusFile(dir, "status/clusters/west.yaml").observed).reachable === true,
      "west answers again",
    );
    for (let i = 0; i < 5; i++) {
      await controller.prober.probeOnce();
      await controller.round();
    }
    expect(asMap(statusFile(dir, "status/clusters/west.yaml").observed).staleSince).toBeUndefined();
    expect(decided()).toEqual({ east: 5, west: 1 });
    // Nothing was divided again: no "now known" commit after the outage.
    expect(
      subjects()
        .slice(0, subjects().length - before)
        .filter((s) => s.includes("now known")),
    ).toEqual([]);
  });

  it("fills the first overflow tier by what its nodes fit and overflows the rest to the next", async () => {
    const tiered = `${placement(DYNAMIC)}  overflow:\n    tiers:\n      - name: first\n        clusterAffinity: {clusterNames: [east]}\n      - name: overflow\n        clusterAffinity: {clusterNames: [west]}\n`;
    createRepo(dir, fleetRepo({ "placements/web.yaml": tiered }));
    const controller = await pushController(dir, kubeconfig);
    // 6 one-CPU replicas: east's two 8-CPU nodes fit them all (its GPU node is tainted).
    await until(
      controller,
      () => decided().east === 6 && decided().west === undefined,
      "all in the first tier",
    );
    // 18: east fits 16, the other 2 overflow to west.
    commitTree(
      dir,
      fleetRepo({ "placements/web.yaml": tiered, "apps/web/deployment.yaml": webDeployment(18, "1") }),
      "web: 18",
    );
    await until(controller, () => decided().west === 2, "overflow to west");
    expect(decided()).toEqual({ east: 16, west: 2 });
    expect(asList(asMap(asMap(web().decision).diagnosis).tiers)).toEqual([
      { name: "first", clusters: ["east"], replicas: 16 },
      { name: "overflow", clusters: ["west"], replicas: 2 },
    ]);
  });

  it("a restarted controller divides by what the status branch records, as gitfleet plan does", async () => {
    createRepo(dir, fleetRepo({}));
    const first = await pushController(dir, kubeconfig);
    await until(first, () => decided().east === 5 && decided().west === 1, "divided by capacity");
    const base = gitIn(dir, "rev-parse", "main").trim();
    commitTree(dir, fleetRepo({ "apps/web/deployment.yaml": webDeployment(9, "1") }), "web: 9 replicas");
    const head = gitIn(dir, "rev-parse", "main").trim();
    // What the plan of the change says web gets, from the recorded capacity.
    const planned = await planRevisions({ repo: dir, base, head, statusBranch: "gitfleet/status" });
    if (!("plan" in planned)) throw new Error(planned.error);
    const after = planned.plan.distributions.find((d) => d.app === "web")?.after;
    // A new process: nothing synced yet, nothing reported — its first render is of the recorded state.
    const restarted = await pushController(dir, kubeconfig);
    await restarted.prober.probeOnce();
    await restarted.controller.reconcile();
    expect(decided()).toEqual(after);
    // Divided by the recorded capacity, not provisionally: no division waits to be made again.
    expect(web().capacityUnknown).toBeUndefined();
    expect(Number(decided().east)).toBeGreaterThan(Number(decided().west) + 2);
    await restarted.syncer.idle();
  });

  it("keeps custom resources off a member whose discovery does not serve their kind", async () => {
    // Only east has the CloneSet CRD.
    await client("east").apply(
      {
        apiVersion: "apiextensions.k8s.io/v1",
        kind: "CustomResourceDefinition",
        metadata: { name: "clonesets.apps.kruise.io" },
        spec: {
          group: "apps.kruise.io",
          names: { kind: "CloneSet", plural: "clonesets", singular: "cloneset", listKind: "CloneSetList" },
          scope: "Namespaced",
          versions: [
            {
              name: "v1alpha1",
              served: true,
              storage: true,
              schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
            },
          ],
        },
      },
      true,
    );
    createRepo(
      dir,
      fleetRepo({
        "apps/web/cache.yaml": CLONESET,
        "placements/web.yaml": placement("    type: Duplicated\n"),
      }),
    );
    const controller = await pushController(dir, kubeconfig);
    const rendered = () =>
      [...branchFiles(dir, "gitfleet/status").keys()].filter((p) => p.includes("CloneSet.cache"));
    await until(controller, () => rendered().length === 1, "CloneSet rendered once");
    expect(rendered()[0]).toMatch(/^rendered\/east\//);
    expect(
      await liveObject(member("east"), "/apis/apps.kruise.io/v1alpha1/namespaces/shop/clonesets/cache"),
    ).toBeDefined();
    const west = asMap(statusFile(dir, "status/clusters/west.yaml").observed);
    expect(west.failed).toBe(0);
    expect(asMap(west.apis)["apps.kruise.io/v1alpha1"]).toBeUndefined();
  });

  it("moves replicas off a cluster whose pods cannot pull their image while the other runs them", async () => {
    const failover = "  failover:\n    application:\n      degradedSeconds: 1\n";
    member("west").faults.unpullableImages(["ghcr.io/example/web:1.0.0"]);
    createRepo(
      dir,
      fleetRepo({
        "apps/web/deployment.yaml": webDeployment(4, "100m"),
        "placements/web.yaml": placement("    type: Divided\n", failover),
      }),
    );
    const controller = await pushController(dir, kubeconfig);
    await until(controller, () => decided().east === 4, "moved off west");
    expect(asList(asMap(web().failover).capped)).toMatchObject([{ cluster: "west", replicas: 0 }]);
    expect(subjects().some((s) => /ImagePullBackOff for \d+s; web 2 → east \+2/.test(s))).toBe(true);
  });

  it("moves nothing when the image fails in every cluster", async () => {
    const failover = "  failover:\n    application:\n      degradedSeconds: 1\n";
    for (const m of members) m.faults.unpullableImages(["ghcr.io/example/web:1.0.0"]);
    createRepo(
      dir,
      fleetRepo({
        "apps/web/deployment.yaml": webDeployment(4, "100m"),
        "placements/web.yaml": placement("    type: Divided\n", failover),
      }),
    );
    const controller = await pushController(dir, kubeconfig);
    await until(controller, () => decided().east === 2 && decided().west === 2, "placed");
    // Well past degradedSeconds, with every cluster's pods in ImagePullBackOff.
    for (let i = 0; i < 25; i++) {
      await controller.round();
      // A fixed wait: time must pass degradedSeconds with no failover, which no condition can poll for.
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const observed = JSON.stringify(statusFile(dir, appStatusPath("web")).observed);
    expect(observed).toContain("ImagePullBackOff");
    expect(decided()).toEqual({ east: 2, west: 2 });
    expect(web().failover).toBeUndefined();
  });
});
