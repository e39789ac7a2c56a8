import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { SimulatedMember } from "../../src/member/member-server.js";
import { fileTreeFromText } from "../../src/model/file-tree.js";
import { asList, asMap, type JsonMap } from "../../src/model/json.js";
import { commitTree, createRepo, gitIn } from "../helpers/git-repo.js";
import { liveObject, membersPerTest, pushController, statusFile } from "../helpers/sync-fleet.js";

// Migrating apps that already run (created through the Kubernetes API, not by gitfleet) in reviewed
// batches: adoption keeps their pods, unapproved batches are not touched, a rollback detaches.

const fleet = membersPerTest("gitfleet-migrate-", ["east", "west", "north"]);
const BIN = fileURLToPath(new URL("../../bin/gitfleet.js", import.meta.url));

const DEPLOYMENT = {
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "checkout", namespace: "shop" },
  spec: {
    replicas: 2,
    selector: { matchLabels: { app: "checkout" } },
    template: {
      metadata: { labels: { app: "checkout" } },
      spec: {
        containers: [
          {
            name: "checkout",
            image: "ghcr.io/example/checkout:1.0.0",
            resources: { requests: { cpu: "100m", memory: "64Mi" } },
          },
        ],
      },
    },
  },
};

const cluster = (name: string) =>
  `apiVersion: gitfleet.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: ${name}\nspec:\n  provider: p\n  region: r-${name}\n`;

function fleetRepo(batches: string) {
  return fileTreeFromText({
    "clusters/east.yaml": cluster("east"),
    "clusters/west.yaml": cluster("west"),
    "clusters/north.yaml": cluster("north"),
    "apps/checkout/app.yaml":
      "apiVersion: gitfleet.io/v1alpha1\nkind: App\nmetadata:\n  name: checkout\nspec:\n  namespace: shop\n",
    "apps/checkout/deployment.yaml": JSON.stringify(
      { ...DEPLOYMENT, metadata: { name: "checkout" } },
      null,
      2,
    ),
    "placements/checkout.yaml":
      "apiVersion: gitfleet.io/v1alpha1\nkind: Placement\nmetadata:\n  name: checkout\nspec:\n  apps: [checkout]\n",
    "migrations/shop.yaml": `apiVersion: gitfleet.io/v1alpha1
kind: Migration
metadata:
  name: shop
spec:
  conflictResolution: Adopt
  onFailure: Halt
  observe: 1s
  batches:
${batches}`,
  });
}

const batch = (name: string, clusterName: string, flags = "") =>
  `    - name: ${name}\n      apps: [checkout]\n      clusters: [${clusterName}]\n${flags}`;

const member = (name: string) => fleet.members.find((m) => m.name === name) as SimulatedMember;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function request(m: SimulatedMember, path: string, body: unknown): Promise<void> {
  const response = await fetch(`${m.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (response.status >= 300) throw new Error(`${path}: ${response.status} ${await response.text()}`);
}

/** The app as a team runs it today: created by hand in every member. */
async function runByHand(): Promise<void> {
  for (const m of fleet.members) {
    await request(m, "/api/v1/namespaces", {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: "shop" },
    });
    await request(m, "/apis/apps/v1/namespaces/shop/deployments", DEPLOYMENT);
  }
  for (let i = 0; i < 100 && !(await everywhereReady()); i++) await sleep(50);
}

async function everywhereReady(): Promise<boolean> {
  for (const m of fleet.members) {
    const live = await liveObject(m, "/apis/apps/v1/namespaces/shop/deployments/checkout");
    if (asMap(live?.status).readyReplicas !== 2) return false;
  }
  return true;
}

async function podUids(m: SimulatedMember): Promise<string[]> {
  const list = asMap(
    await (await fetch(`${m.url}/api/v1/namespaces/shop/pods?labelSelector=app%3Dcheckout`)).json(),
  );
  return asList(list.items)
    .map((p) => String(asMap(asMap(p).metadata).uid))
    .sort();
}

async function labelsIn(m: SimulatedMember): Promise<JsonMap> {
  return asMap(
    asMap((await liveObject(m, "/apis/apps/v1/namespaces/shop/deployments/checkout"))?.metadata).labels,
  );
}

function batchStates(): Record<string, string> {
  const status = statusFile(fleet.dir, "status/migrations/shop.yaml");
  return Object.fromEntries(
    asList(status.batches).map((b) => [String(asMap(b).name), String(asMap(b).state)]),
  );
}

async function until(
  controller: Awaited<ReturnType<typeof pushController>>,
  done: () => boolean | Promise<boolean>,
) {
  for (let i = 0; i < 60; i++) {
    await controller.round();
    if (await done()) return;
    await sleep(100);
  }
  throw new Error(`not reached; batches ${JSON.stringify(batchStates())}`);
}

describe("migrating running apps in batches", () => {
  it("adopts an approved batch without restarting pods, leaves the others alone, and detaches on rollback", async () => {
    await runByHand();
    const before = new Map(
      await Promise.all(fleet.members.map(async (m) => [m.name, await podUids(m)] as const)),
    );
    for (const uids of before.values()) expect(uids).toHaveLength(2);
    createRepo(
      fleet.dir,
      fleetRepo(
        `${batch("test", "east", "      approved: true\n")}${batch("staging", "west")}${batch("prod", "north")}`,
      ),
    );
    const controller = await pushController(fleet.dir, fleet.kubeconfig);

    await until(controller, () => batchStates().test === "Succeeded");
    expect(batchStates()).toEqual({ test: "Succeeded", staging: "WaitingApproval", prod: "Pending" });
    // Adopted: gitfleet's labels on the Deployment, the same pods.
    expect(await labelsIn(member("east"))).toMatchObject({ "gitfleet.io/app": "checkout" });
    expect(await podUids(member("east"))).toEqual(before.get("east"));
    // Not approved: untouched.
    expect(await labelsIn(member("west"))).toEqual({});
    expect(await labelsIn(member("north"))).toEqual({});
    const log = gitIn(fleet.dir, "log", "--format=%s", "gitfleet/status");
    expect(log).toContain("migration: shop/test: new → Syncing (adopting)");
    expect(log).toMatch(/migration: shop\/test: Observing → Succeeded/);

    // A controller restart in the middle of the staging batch continues from the status branch.
    commitTree(
      fleet.dir,
      fleetRepo(
        `${batch("test", "east", "      approved: true\n")}${batch("staging", "west", "      approved: true\n")}${batch("prod", "north")}`,
      ),
      "approve staging",
    );
    await controller.round();
    expect(batchStates().staging).toMatch(/Syncing|Observing/);
    controller.controller.stop();
    const restarted = await pushController(fleet.dir, fleet.kubeconfig);
    await until(restarted, () => batchStates().staging === "Succeeded");
    expect(batchStates()).toEqual({ test: "Succeeded", staging: "Succeeded", prod: "WaitingApproval" });
    expect(await podUids(member("west"))).toEqual(before.get("west"));

    // Rolling staging back on purpose: detached, the pods keep running, nothing deleted.
    commitTree(
      fleet.dir,
      fleetRepo(
        `${batch("test", "east", "      approved: true\n")}${batch("staging", "west", "      approved: true\n      rollback: true\n")}${batch("prod", "north")}`,
      ),
      "roll staging back",
    );
    await until(restarted, async () => (await labelsIn(member("west")))["gitfleet.io/app"] === undefined);
    expect(batchStates().staging).toBe("RolledBack");
    expect(await podUids(member("west"))).toEqual(before.get("west"));
    expect(
      asMap((await liveObject(member("west"), "/apis/apps/v1/namespaces/shop/deployments/checkout"))?.status)
        .readyReplicas,
    ).toBe(2);
    expect(await labelsIn(member("north"))).toEqual({});
    // `gitfleet migrate status` prints the batches from the status branch.
    const printed = spawnSync(process.execPath, [BIN, "migrate", "status", "shop", "--repo", fleet.dir], {
      encoding: "utf8",
    });
    expect(printed.status).toBe(0);
    const lines = printed.stdout.split("\n");
    expect(lines[0]).toBe("migration shop");
    expect(lines[1]).toMatch(/^BATCH +STATE +SINCE +APPS +REASON$/);
    expect(lines[2]).toMatch(/^test +Succeeded +\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ +checkout east=Healthy$/);
    expect(lines[3]).toMatch(/^staging +RolledBack +\S+ +checkout west=\w+ +rollback: true in the source$/);
    expect(lines[4]).toMatch(/^prod +Pending +\S+ +checkout north=Healthy +waits for batch staging$/);
    expect(lines[5]).toBe("detached (left alone): checkout/west");
    const unknown = spawnSync(process.execPath, [BIN, "migrate", "status", "nope", "--repo", fleet.dir], {
      encoding: "utf8",
    });
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toContain('no migration "nope"');
    const timeline = gitIn(fleet.dir, "log", "--format=%s", "gitfleet/status").split("\n");
    console.log(timeline.filter((l) => l.startsWith("migration")).join("\n"));
  });
});
