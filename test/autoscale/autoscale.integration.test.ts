import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { asList, asMap } from "../../src/apimachinery/json.js";
import { splitBounds } from "../../src/autoscale/distributed-split.js";
import { fileTreeFromText } from "../../src/model/file-tree.js";
import type { SimulatedMember } from "../../src/sim/member-server.js";
import { appStatusPath } from "../../src/status/status-files.js";
import { commitTree, createRepo, gitIn } from "../helpers/git-repo.js";
import { webDeployment, webFederatedHpa } from "../helpers/minimal-fleet.js";
import { liveObject, membersPerTest, pushController, statusFile } from "../helpers/sync-fleet.js";
import { webOnTwoClusters } from "../helpers/two-clusters.js";

// Autoscaling end to end on simulated members: load driven on the pods' metrics, the controller
// sampling metrics.k8s.io in every member, deciding a global total, the Placement dividing it, and
// every decision a status commit.

const fleet = membersPerTest("gitfleet-autoscale-", ["east", "west"]);

const BEHAVIOR = `  behavior:
    scaleUp:
      policies: [{type: Percent, value: 100, periodSeconds: 1}]
    scaleDown:
      stabilizationWindowSeconds: 3
`;
const federatedHpa = (mode?: "distributed", max = 12) =>
  webFederatedHpa({ min: 2, max, cpu: 50, more: BEHAVIOR, ...(mode ? { mode } : {}) });

function fleetRepo(files: Record<string, string>, weights: [number, number]) {
  return fileTreeFromText({ ...webOnTwoClusters(...weights), ...files });
}

const BIN = fileURLToPath(new URL("../../bin/gitfleet.js", import.meta.url));
const member = (name: string) => fleet.members.find((m) => m.name === name) as SimulatedMember;
const DEPLOYMENT = "/apis/apps/v1/namespaces/shop/deployments/web";
const HPA = "/apis/autoscaling/v2/namespaces/shop/horizontalpodautoscalers/web";
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const subjects = () => gitIn(fleet.dir, "log", "--format=%s", "gitfleet/status").split("\n");
const webStatus = () => asMap(asList(statusFile(fleet.dir, appStatusPath("web")).workloads)[0]);

async function replicasIn(name: string): Promise<number | undefined> {
  const live = await liveObject(member(name), DEPLOYMENT);
  const replicas = asMap(live?.spec).replicas;
  return typeof replicas === "number" ? replicas : undefined;
}

async function counts(): Promise<Record<string, number | undefined>> {
  return { east: await replicasIn("east"), west: await replicasIn("west") };
}

type Controller = Awaited<ReturnType<typeof pushController>>;

/** Runs rounds until `done` holds. */
async function until(controller: Controller, done: () => boolean | Promise<boolean>, rounds = 120) {
  for (let i = 0; i < rounds; i++) {
    await controller.round();
    if (await done()) return;
    await sleep(100);
  }
  throw new Error(
    `not reached after ${rounds} rounds: members ${JSON.stringify(await counts())}; status ${subjects().slice(0, 5).join(" | ")}`,
  );
}

// web of 5 over weights 4:1 (east 4, west 1), a distributed FederatedHPA of 2..10.
function distributedFleet() {
  return fleetRepo(
    {
      "apps/web/deployment.yaml": webDeployment(5, "100m"),
      "autoscaling/web.yaml": federatedHpa("distributed", 10),
    },
    [4, 1],
  );
}

/** The gitfleet CLI, asynchronously (the members answer from this process). */
function gitfleet(...args: string[]): Promise<{ code: number; stdout: string }> {
  return new Promise((resolve) =>
    execFile(process.execPath, [BIN, ...args], { encoding: "utf8" }, (error, stdout) =>
      resolve({ code: error ? Number((error as { code?: number }).code ?? 1) : 0, stdout }),
    ),
  );
}

const load = (cpu: string) => {
  for (const m of fleet.members) m.faults.load([{ namespace: "shop", selector: { app: "web" }, cpu }]);
};

describe("a centralized FederatedHPA on simulated members", () => {
  it("scales the global total up under load within its bounds, divides it by the Placement, and scales down after the stabilization window", async () => {
    createRepo(fleet.dir, fleetRepo({ "autoscaling/web.yaml": federatedHpa() }, [2, 1]));
    const controller = await pushController(fleet.dir, fleet.kubeconfig);
    await until(controller, async () => JSON.stringify(await counts()) === '{"east":2,"west":1}');

    // Each pod at 90m of its 100m request: 90% against a 50% target.
    load("90m");
    await until(controller, async () => (await replicasIn("east")) === 8 && (await replicasIn("west")) === 4);
    const scaled = subjects().filter((s) => s.startsWith("autoscale: "));
    // The first step: 3 × 90/50 → 6 (within +100% per second), divided 2:1.
    expect(scaled.at(-1)).toBe("autoscale: web: hpa 3 → 6 (cpu 90% > 50%) east=2→4 west=1→2");
    // It stops at maxReplicas however loud the pods are.
    expect(scaled[0]).toMatch(/^autoscale: web: hpa \d+ → 12 \(cpu \d+% > 50%; TooManyReplicas\)/);
    expect(webStatus()).toMatchObject({ replicas: 12, autoscaledBy: "web" });
    expect(statusFile(fleet.dir, "status/autoscaling/hpa/shop.web.yaml")).toMatchObject({
      federatedHPA: "web",
      target: "apps/Deployment/shop/web",
      replicas: 12,
    });
    // People's files are never edited: the source still asks for 3.
    expect(gitIn(fleet.dir, "show", "main:apps/web/deployment.yaml")).toContain("replicas: 3");

    // Load falls to idle (10% of the request): nothing happens within the 3 s window, then down.
    load("10m");
    const calmAt = Date.now();
    await until(controller, async () => (await replicasIn("east")) !== 8);
    // The window counts from the last loud recommendation, made in the round just before calmAt.
    expect(Date.now() - calmAt).toBeGreaterThanOrEqual(2500);
    await until(controller, async () => JSON.stringify(await counts()) === '{"east":1,"west":1}');
    expect(webStatus()).toMatchObject({ replicas: 2 });
    const down = subjects().filter((s) => s.startsWith("autoscale: "));
    expect(down[0]).toMatch(/^autoscale: web: hpa \d+ → 2 \(cpu 10% < 50%/);
  }, 120_000);

  it("continues after a restart with the total it decided, and waits a full window before scaling down", async () => {
    createRepo(fleet.dir, fleetRepo({ "autoscaling/web.yaml": federatedHpa() }, [1, 1]));
    const first = await pushController(fleet.dir, fleet.kubeconfig);
    await until(first, async () => (await replicasIn("east")) === 2);
    load("90m");
    await until(first, async () => JSON.stringify(await counts()) === '{"east":6,"west":6}');

    load("10m");
    const restartedAt = Date.now();
    const second = await pushController(fleet.dir, fleet.kubeconfig);
    await second.round();
    // The restarted controller renders the autoscaled total, not the source's 3.
    expect(await counts()).toEqual({ east: 6, west: 6 });
    expect(subjects()[0]).not.toMatch(/→ 3/);
    expect(statusFile(fleet.dir, appStatusPath("web")).workloads).toMatchObject([{ replicas: 12 }]);
    await until(second, async () => (await replicasIn("east")) !== 6);
    // The restarted autoscaler counts its total as recommended at the restart: a full window first.
    expect(Date.now() - restartedAt).toBeGreaterThanOrEqual(3000);
  }, 120_000);
});

describe("a FederatedHPA on custom and external metrics, read from the members' metrics adapters", () => {
  it("scales on a queue's length summed over the members, and on a per-pod custom metric", async () => {
    const external = `apiVersion: gitfleet.io/v1alpha1
kind: FederatedHPA
metadata:
  name: web
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 2
  maxReplicas: 20
  metrics:
    - type: External
      external:
        metric: {name: queue_messages_ready, selector: {matchLabels: {queue: orders}}}
        target: {type: AverageValue, averageValue: "10"}
${BEHAVIOR}`;
    createRepo(fleet.dir, fleetRepo({ "autoscaling/web.yaml": external }, [2, 1]));
    const controller = await pushController(fleet.dir, fleet.kubeconfig);
    await until(controller, async () => JSON.stringify(await counts()) === '{"east":2,"west":1}');
    // 50 messages waiting in east's queue and 40 in west's (another queue's series is not counted):
    // 90 over a target of 10 per pod → 9 replicas, divided 2:1.
    const queue = (value: string) => [
      { value, labels: { queue: "orders" } },
      { value: "1000", labels: { queue: "audit" } },
    ];
    member("east").faults.adapterMetrics({
      objects: {},
      external: { "shop/queue_messages_ready": queue("50") },
    });
    member("west").faults.adapterMetrics({
      objects: {},
      external: { "shop/queue_messages_ready": queue("40") },
    });
    await until(controller, async () => (await replicasIn("east")) === 6 && (await replicasIn("west")) === 3);
    // 90 messages over 10 per pod; the behavior lets the total double per second: 3 → 6 → 9.
    expect(
      subjects()
        .filter((s) => s.startsWith("autoscale: "))
        .reverse(),
    ).toEqual([
      "autoscale: web: hpa 3 → 6 (queue_messages_ready 30/pod > 10/pod; ScaleUpLimit) east=2→4 west=1→2",
      "autoscale: web: hpa 6 → 9 (queue_messages_ready 15/pod > 10/pod) east=4→6 west=2→3",
    ]);
    // A per-pod metric instead: each pod serves 20 requests per second against a target of 10.
    const pods = external.replace(
      /- type: External[\s\S]*averageValue: "10"}/,
      '- type: Pods\n      pods:\n        metric: {name: http_requests_per_second}\n        target: {type: AverageValue, averageValue: "10"}',
    );
    for (const m of fleet.members)
      m.faults.load([
        { namespace: "shop", selector: { app: "web" }, custom: { http_requests_per_second: "20" } },
      ]);
    commitTree(
      fleet.dir,
      fleetRepo({ "autoscaling/web.yaml": pods }, [2, 1]),
      "web: scale on requests per pod",
    );
    await until(
      controller,
      async () => (await replicasIn("east")) === 12 && (await replicasIn("west")) === 6,
    );
    // 20 per pod against 10: twice the pods, reached within the behavior's rate (+100% per second).
    expect(subjects().find((s) => s.startsWith("autoscale: "))).toMatch(
      /^autoscale: web: hpa \d+ → 18 \(http_requests_per_second 20 > 10(; ScaleUpLimit)?\) east=\d+→12 west=\d+→6$/,
    );
  });
});

describe("a pull request that changes replicas under a FederatedHPA", () => {
  it("is planned on top of the autoscaled total with a warning at the line, and merged changes nothing", async () => {
    createRepo(fleet.dir, fleetRepo({ "autoscaling/web.yaml": federatedHpa() }, [1, 1]));
    const controller = await pushController(fleet.dir, fleet.kubeconfig);
    await until(controller, async () => (await replicasIn("east")) === 2);
    load("90m");
    await until(controller, async () => JSON.stringify(await counts()) === '{"east":6,"west":6}');
    load("50m");

    const files = fleetRepo(
      { "autoscaling/web.yaml": federatedHpa(), "apps/web/deployment.yaml": webDeployment(5, "100m") },
      [1, 1],
    );
    gitIn(fleet.dir, "checkout", "-qb", "more-replicas");
    commitTree(fleet.dir, files, "web: 5 replicas");
    gitIn(fleet.dir, "checkout", "-q", "main");
    const plan = await gitfleet("plan", "--repo", fleet.dir, "--base", "main", "--head", "more-replicas");
    const line =
      webDeployment(5, "100m")
        .split("\n")
        .findIndex((l) => l.includes("replicas: 5")) + 1;
    expect(plan).toEqual({
      code: 0,
      stdout: `No changes: every cluster gets exactly what it gets now.\n\nWarnings:\n  apps/web/deployment.yaml:${line}:13: replicas 3 → 5 changes nothing: FederatedHPA web (autoscaling/web.yaml) owns this workload's count; change its minReplicas/maxReplicas to move the total\n`,
    });

    // Merged: the reconcile records the warning; the clusters keep the autoscaled total.
    gitIn(fleet.dir, "merge", "-q", "--ff-only", "more-replicas");
    await controller.round();
    expect(statusFile(fleet.dir, "status/source.yaml")).toMatchObject({ valid: true, warnings: 1 });
    expect(await counts()).toEqual({ east: 6, west: 6 });
  }, 120_000);
});

describe("a distributed FederatedHPA on simulated members", () => {
  it("renders a member HPA per cluster with min/max split by the distribution, leaves replicas to them, and splits again when the members scale", async () => {
    createRepo(fleet.dir, distributedFleet());
    const controller = await pushController(fleet.dir, fleet.kubeconfig);
    await until(controller, async () => (await liveObject(member("west"), HPA)) !== undefined);
    // 2/10 over weights 4:1 (the scheduler put 4 and 1): east 1..8, west 1..2.
    expect(splitBounds(2, 10, { east: 4, west: 1 }).clusters).toEqual({
      east: { minReplicas: 1, maxReplicas: 8 },
      west: { minReplicas: 1, maxReplicas: 2 },
    });
    for (const [name, min, max] of [
      ["east", 1, 8],
      ["west", 1, 2],
    ] as const)
      expect(asMap((await liveObject(member(name), HPA))?.spec)).toMatchObject({
        minReplicas: min,
        maxReplicas: max,
        scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: "web" },
      });

    // Settle: the members' 4 and 1 are recorded, nothing is left to sync.
    for (let i = 0; i < 3; i++) await controller.round();
    // east's member HPA scales its Deployment to 7 (as kube-controller-manager does, through /scale).
    const scale = await fetch(
      `${member("east").url}${DEPLOYMENT}/scale?fieldManager=kube-controller-manager`,
      {
        method: "PATCH",
        headers: { "content-type": "application/merge-patch+json" },
        body: JSON.stringify({ spec: { replicas: 7 } }),
      },
    );
    expect(scale.status).toBe(200);
    const resplit = splitBounds(2, 10, { east: 7, west: 1 }).clusters;
    // Without a resync (the last sync still saw 4): the autoscaler reads the members itself.
    for (let i = 0; i < 40; i++) {
      await controller.controller.reconcile();
      await controller.syncer.idle();
      await controller.controller.flush();
      if (asMap((await liveObject(member("east"), HPA))?.spec).maxReplicas === resplit.east?.maxReplicas)
        break;
      await sleep(100);
    }
    expect(asMap((await liveObject(member("east"), HPA))?.spec).maxReplicas).toBe(resplit.east?.maxReplicas);
    // gitfleet follows: the member keeps 7 (no reset to the rendered 4), the distribution is recorded.
    expect(await replicasIn("east")).toBe(7);
    expect(statusFile(fleet.dir, "status/autoscaling/hpa/shop.web.yaml")).toMatchObject({
      distribution: { east: 7, west: 1 },
    });
    expect(asMap(webStatus().memberHpas)).toMatchObject({
      autoscaler: "web",
      clusters: { east: { replicas: 7, ...resplit.east }, west: { replicas: 1, ...resplit.west } },
    });
    expect(subjects()).toContain("autoscale: web: member HPAs run east=4→7 west=1; bounds split again");
  }, 120_000);
});

describe("a distributed FederatedHPA with members that run their HPAs", () => {
  const withHpas = membersPerTest("gitfleet-autoscale-hpa-", ["east", "west"], { hpaPeriodMs: 200 });
  const on = (name: string) => withHpas.members.find((m) => m.name === name) as SimulatedMember;

  it("follows a member HPA that scales under load, and splits the bounds again", async () => {
    createRepo(withHpas.dir, distributedFleet());
    const controller = await pushController(withHpas.dir, withHpas.kubeconfig);
    const eastReplicas = async () => Number(asMap((await liveObject(on("east"), DEPLOYMENT))?.spec).replicas);
    for (let i = 0; i < 60 && (await liveObject(on("west"), HPA)) === undefined; i++) {
      await controller.round();
      await sleep(100);
    }
    // Only east's pods are loaded: its member HPA (1..8, 50%) scales east up; west stays.
    on("east").faults.load([{ namespace: "shop", selector: { app: "web" }, cpu: "90m" }]);
    const split = splitBounds(2, 10, { east: 8, west: 1 }).clusters;
    for (let i = 0; i < 100; i++) {
      await controller.round();
      const hpa = asMap((await liveObject(on("east"), HPA))?.spec);
      if ((await eastReplicas()) === 8 && hpa.maxReplicas === split.east?.maxReplicas) break;
      await sleep(100);
    }
    expect(await eastReplicas()).toBe(8);
    expect(Number(asMap((await liveObject(on("west"), DEPLOYMENT))?.spec).replicas)).toBe(1);
    expect(asMap((await liveObject(on("east"), HPA))?.spec)).toMatchObject(split.east ?? {});
    const log = gitIn(withHpas.dir, "log", "--format=%s", "gitfleet/status");
    expect(log).toMatch(/^autoscale: web: member HPAs run east=\d+→8 west=1; bounds split again$/m);
  }, 120_000);
});
