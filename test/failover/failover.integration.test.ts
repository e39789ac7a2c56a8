import { describe, expect, it } from "vitest";
import { asList, asMap, type JsonMap } from "../../src/apimachinery/json.js";
import { loadFleet } from "../../src/load/load-fleet.js";
import { fileTreeFromText } from "../../src/model/file-tree.js";
import type { FleetModel } from "../../src/model/types.js";
import { formatPlanText } from "../../src/plan/format-plan.js";
import { planChange } from "../../src/plan/plan.js";
import { renderFleet } from "../../src/render/render-fleet.js";
import type { SimulatedMember } from "../../src/sim/member-server.js";
import { appStatusPath } from "../../src/status/status-files.js";
import { commitTree, createRepo, gitIn } from "../helpers/git-repo.js";
import { webDeployment } from "../helpers/minimal-fleet.js";
import { liveObject, membersPerTest, pushController, statusFile } from "../helpers/sync-fleet.js";
import { clusterYaml } from "../helpers/two-clusters.js";

// Failover end to end: simulated members with fault injection, the controller probing, reconciling
// and syncing them, every decision a commit on the status branch.

const fleet = membersPerTest("gitfleet-failover-", ["east", "west", "north"]);

const FLEET_YAML = `apiVersion: gitfleet.io/v1alpha1
kind: Fleet
metadata:
  name: t
spec:
  clusterHealth:
    failureThreshold: 2
    successThreshold: 2
    noExecuteAfter: 1s
`;

const cluster = (name: string, extra = "") => clusterYaml(name, { extra });

const deployment = (replicas: number) => webDeployment(replicas, "100m");

const PLACEMENT = `apiVersion: gitfleet.io/v1alpha1
kind: Placement
metadata:
  name: web
spec:
  apps: [web]
  replicaScheduling:
    type: Divided
  failover:
    cluster:
      tolerationSeconds: 0
      purgeMode: Gracefully
      gracePeriodSeconds: 120
    application:
      unschedulableSeconds: 1
      coolDownSeconds: 600
  rollout:
    strategy: Serial
    order: [west, east, north]
`;

function fleetRepo(overrides: Record<string, string> = {}) {
  return fileTreeFromText({
    "fleet.yaml": FLEET_YAML,
    "clusters/east.yaml": cluster("east"),
    "clusters/west.yaml": cluster("west"),
    "clusters/north.yaml": cluster("north"),
    "apps/web/app.yaml":
      "apiVersion: gitfleet.io/v1alpha1\nkind: App\nmetadata:\n  name: web\nspec:\n  namespace: shop\n",
    "apps/web/deployment.yaml": deployment(6),
    "apps/web/config.yaml":
      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web-config\ndata:\n  MODE: production\n",
    "placements/web.yaml": PLACEMENT,
    ...overrides,
  });
}

function modelOf(tree: ReturnType<typeof fleetRepo>): FleetModel {
  const loaded = loadFleet(tree);
  if (!loaded.model) throw new Error(loaded.problems.map((p) => p.message).join("\n"));
  return loaded.model;
}

const member = (name: string) => fleet.members.find((m) => m.name === name) as SimulatedMember;
const DEPLOYMENT = "/apis/apps/v1/namespaces/shop/deployments/web";

async function readyIn(name: string): Promise<number> {
  const live = await liveObject(member(name), DEPLOYMENT).catch(() => undefined);
  return Number(asMap(live?.status).readyReplicas ?? 0);
}

function webStatus(): JsonMap {
  return asMap(asList(statusFile(fleet.dir, appStatusPath("web")).workloads)[0]);
}

const decided = () => asMap(asMap(webStatus().decision).clusters);
const keeping = () => asList(asMap(webStatus().failover).keeping);
const subjects = () => gitIn(fleet.dir, "log", "--format=%s", "gitfleet/status").split("\n");
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs controller rounds (probing first) until `done` holds; `each` sees every round. */
async function until(
  controller: Awaited<ReturnType<typeof pushController>>,
  done: () => boolean | Promise<boolean>,
  each: () => Promise<void> = async () => {},
  rounds = 80,
): Promise<void> {
  for (let i = 0; i < rounds; i++) {
    await controller.prober.probeOnce();
    await controller.round();
    await each();
    if (await done()) return;
    await sleep(100);
  }
  const ready = await Promise.all(["east", "west", "north"].map(async (c) => `${c}=${await readyIn(c)}`));
  throw new Error(
    `not reached after ${rounds} rounds; web decided ${JSON.stringify(decided())}, ready ${ready.join(" ")}, keeping ${JSON.stringify(keeping())}`,
  );
}

async function allReady(counts: Record<string, number>): Promise<boolean> {
  for (const [name, count] of Object.entries(counts)) if ((await readyIn(name)) !== count) return false;
  return true;
}

describe("failover on simulated members", () => {
  it("moves a dead member's replicas after the grace period, keeps availability, and moves nothing back when it returns", async () => {
    createRepo(fleet.dir, fleetRepo());
    const controller = await pushController(fleet.dir, fleet.kubeconfig);
    await until(controller, () => allReady({ east: 2, west: 2, north: 2 }));

    const downAt = Date.now();
    await member("west").faults.down();
    let lowest = Number.POSITIVE_INFINITY;
    const sample = async () => {
      lowest = Math.min(lowest, (await readyIn("east")) + (await readyIn("north")));
    };
    await until(
      controller,
      async () => (await allReady({ east: 3, north: 3 })) && keeping().length === 0,
      sample,
    );
    const healthyElsewhereMs = Date.now() - downAt;
    // Gracefully: the reachable clusters never ran fewer than before the failure while replicas moved.
    expect(lowest).toBeGreaterThanOrEqual(4);
    expect(decided()).toEqual({ east: 3, north: 3 });
    const failover = subjects().find((s) => s.startsWith("failover: cluster west"));
    expect(failover).toMatch(/^failover: cluster west Unreachable for \d+s; web 2 → east \+1, north \+1$/);
    expect(subjects().some((s) => /^failover: web: the 2 old replicas on west are removed/.test(s))).toBe(
      true,
    );
    console.log(
      `failover: west down → all 6 replicas ready in east and north after ${healthyElsewhereMs} ms`,
    );

    // The member comes back: Ready after two good probes; nothing moves back, and its old objects go.
    await member("west").faults.up();
    await until(controller, async () => (await liveObject(member("west"), DEPLOYMENT)) === undefined);
    await controller.prober.probeOnce();
    await controller.round();
    expect(decided()).toEqual({ east: 3, north: 3 });
    expect(await allReady({ east: 3, north: 3 })).toBe(true);
    const condition = asMap(asMap(statusFile(fleet.dir, "status/clusters/west.yaml").observed).condition);
    expect(condition.ready).toBe(true);
  });

  it("continues a failover after a controller restart, from the status branch", async () => {
    createRepo(fleet.dir, fleetRepo());
    const first = await pushController(fleet.dir, fleet.kubeconfig);
    await until(first, () => allReady({ east: 2, west: 2, north: 2 }));
    await member("west").faults.down();
    await until(first, () => keeping().length > 0);
    // A new controller knows nothing in memory: the condition, the move and the kept replicas come from Git.
    const second = await pushController(fleet.dir, fleet.kubeconfig);
    const seen = new Set<string>();
    await until(
      second,
      async () => (await allReady({ east: 3, north: 3 })) && keeping().length === 0,
      async () => {
        seen.add(JSON.stringify(decided()));
      },
    );
    expect(seen).toEqual(new Set([JSON.stringify({ east: 3, north: 3 })]));
    expect(subjects().filter((s) => s.includes("Ready again"))).toEqual([]);
    const condition = asMap(asMap(statusFile(fleet.dir, "status/clusters/west.yaml").observed).condition);
    expect(condition).toMatchObject({ ready: false, reason: "Unreachable" });
  });

  it("moves replicas a member cannot schedule (its nodes lost) after unschedulableSeconds", async () => {
    createRepo(fleet.dir, fleetRepo());
    const controller = await pushController(fleet.dir, fleet.kubeconfig);
    await until(controller, () => allReady({ east: 2, west: 2, north: 2 }));
    member("west").faults.loseNodes(3);
    await until(controller, () => allReady({ east: 3, north: 3 }));
    expect(decided()).toEqual({ east: 3, north: 3 });
    const capped = asList(asMap(webStatus().failover).capped);
    expect(capped).toMatchObject([{ cluster: "west", replicas: 0 }]);
    expect(String(asMap(capped[0]).reason)).toMatch(/^2 replicas Unschedulable for \d+s$/);
    expect(
      subjects().some((s) =>
        /^failover: west: 2 replicas Unschedulable for \d+s; web 2 → east \+1, north \+1$/.test(s),
      ),
    ).toBe(true);
    // The nodes return: nothing moves back.
    member("west").faults.restoreNodes();
    await until(controller, async () => (await liveObject(member("west"), DEPLOYMENT)) === undefined);
    expect(decided()).toEqual({ east: 3, north: 3 });
  });

  it("cordons and drains a cluster from a commit; the plan of the drain shows where the replicas go", async () => {
    createRepo(fleet.dir, fleetRepo());
    const controller = await pushController(fleet.dir, fleet.kubeconfig);
    await until(controller, () => allReady({ east: 2, west: 2, north: 2 }));

    // Cordon, then scale up: west keeps its 2 and takes none of the new ones.
    commitTree(
      fleet.dir,
      fleetRepo({
        "clusters/west.yaml": cluster("west", "  unschedulable: true\n"),
        "apps/web/deployment.yaml": deployment(10),
      }),
      "cordon west, scale web to 10",
    );
    await until(controller, () => allReady({ east: 4, west: 2, north: 4 }));
    expect(decided()).toEqual({ east: 4, north: 4, west: 2 });

    // Drain: the plan for the pull request names every move.
    const base = fleetRepo({
      "clusters/west.yaml": cluster("west", "  unschedulable: true\n"),
      "apps/web/deployment.yaml": deployment(10),
    });
    const head = fleetRepo({
      "clusters/west.yaml": cluster("west", "  unschedulable: true\n  drain: true\n"),
      "apps/web/deployment.yaml": deployment(10),
    });
    // The base as the clusters run it: rendered on top of the render before the cordon.
    const baseRender = renderFleet(modelOf(base), { previous: renderFleet(modelOf(fleetRepo())) });
    const plan = formatPlanText(planChange(baseRender, renderFleet(modelOf(head), { previous: baseRender })));
    expect(plan).toContain("Deployment shop/web (app web): east 4 → 5, north 4 → 5, west 2 → 0");
    expect(plan).toContain(
      "! Deployment shop/web no longer placed here: untolerated taint {gitfleet.io/drain:NoExecute}; its 2 replicas stay until the new ones are ready elsewhere (purgeMode Gracefully)",
    );
    commitTree(fleet.dir, head, "drain west");
    let lowest = Number.POSITIVE_INFINITY;
    const measure = async () => {
      lowest = Math.min(lowest, (await readyIn("east")) + (await readyIn("north")) + (await readyIn("west")));
    };
    // A drain is a person's change: its deletions go through the budget, which this one exceeds —
    // west keeps web until a commit allows the token the sync reports.
    await until(
      controller,
      async () =>
        (await allReady({ east: 5, north: 5 })) &&
        controller.syncer.latest().get("west")?.pruneBlocked !== undefined,
      measure,
    );
    expect(await liveObject(member("west"), DEPLOYMENT)).toBeDefined();
    const token = controller.syncer.latest().get("west")?.pruneBlocked?.token as string;
    commitTree(
      fleet.dir,
      new Map([
        ...head,
        ...fileTreeFromText({ "fleet.yaml": `${FLEET_YAML}  pruning:\n    allowPrune: ${token}\n` }),
      ]),
      "allow the drain's deletions on west",
    );
    await until(
      controller,
      async () => (await liveObject(member("west"), DEPLOYMENT)) === undefined,
      measure,
    );
    expect(lowest).toBeGreaterThanOrEqual(10);
    expect(decided()).toEqual({ east: 5, north: 5 });
  });

  it("does not ping-pong replicas when a member flaps", async () => {
    createRepo(fleet.dir, fleetRepo());
    const controller = await pushController(fleet.dir, fleet.kubeconfig);
    await until(controller, () => allReady({ east: 2, west: 2, north: 2 }));
    const west = member("west");
    const seen: string[] = [];
    // Down for two probes' worth, up for two, again and again: the condition may flip, but the
    // NoExecute grace period is never reached, so nothing moves.
    for (let cycle = 0; cycle < 4; cycle++) {
      await west.faults.down();
      for (let i = 0; i < 2; i++) {
        await controller.prober.probeOnce();
        await controller.round();
        seen.push(JSON.stringify(decided()));
        // A fixed wait: the flap is timed (two probes down, two up), and nothing may move.
        await sleep(150);
      }
      await west.faults.up();
      for (let i = 0; i < 2; i++) {
        await controller.prober.probeOnce();
        await controller.round();
        seen.push(JSON.stringify(decided()));
        // A fixed wait: the flap is timed (two probes down, two up), and nothing may move.
        await sleep(150);
      }
    }
    expect(new Set(seen)).toEqual(new Set([JSON.stringify({ east: 2, north: 2, west: 2 })]));
    // The status branch tells the story, and no commit moved a replica.
    const failovers = subjects().filter((s) => s.startsWith("failover:"));
    expect(failovers).toContain(
      "failover: cluster west Unreachable: its replicas stay, it takes no new ones",
    );
    expect(failovers).toContain("failover: cluster west Ready again; nothing moves back");
    expect(failovers.filter((s) => s.includes("→"))).toEqual([]);
  });
});
