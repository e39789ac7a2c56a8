import { spawn, spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { asList, asMap, type JsonMap } from "../../src/apimachinery/json.js";
import { fileTreeFromText } from "../../src/model/file-tree.js";
import type { SimulatedMember } from "../../src/sim/member-server.js";
import { commitTree, createRepo, gitIn } from "../helpers/git-repo.js";
import { liveObject, membersPerTest, pushController, statusFile } from "../helpers/sync-fleet.js";

// Migrating apps that already run (created through the Kubernetes API, not by gitfleet) in reviewed
// batches: adoption keeps their pods, unapproved batches are not touched, a rollback detaches.

const fleet = membersPerTest("gitfleet-migrate-", ["east", "west", "north"]);
const BIN = fileURLToPath(new URL("../../bin/gitfleet.js", import.meta.url));

const IMAGE = "ghcr.io/example/checkout:1.0.0";
const BROKEN = "ghcr.io/example/checkout:2.0.0";

/** An app's Deployment as its team runs it (and as the fleet repo renders it, namespace aside). */
function deployment(app: string, image = IMAGE) {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: app, namespace: "shop" },
    spec: {
      replicas: 2,
      progressDeadlineSeconds: 2,
      selector: { matchLabels: { app } },
      template: {
        metadata: { labels: { app } },
        spec: {
          containers: [{ name: app, image, resources: { requests: { cpu: "100m", memory: "64Mi" } } }],
        },
      },
    },
  };
}

const cluster = (name: string) =>
  `apiVersion: gitfleet.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: ${name}\nspec:\n  provider: p\n  region: r-${name}\n`;

interface FleetOptions {
  readonly apps?: readonly string[];
  readonly image?: string;
  readonly onFailure?: "Halt" | "Rollback";
  readonly observe?: string;
}

function fleetRepo(batches: string, options: FleetOptions = {}) {
  const apps = options.apps ?? ["checkout"];
  const files: Record<string, string> = {
    "clusters/east.yaml": cluster("east"),
    "clusters/west.yaml": cluster("west"),
    "clusters/north.yaml": cluster("north"),
    "migrations/shop.yaml": `apiVersion: gitfleet.io/v1alpha1
kind: Migration
metadata:
  name: shop
spec:
  conflictResolution: Adopt
  onFailure: ${options.onFailure ?? "Halt"}
  observe: ${options.observe ?? "1s"}
  batches:
${batches}`,
  };
  for (const app of apps) {
    const { metadata: _, ...rest } = deployment(app, options.image);
    files[`apps/${app}/app.yaml`] =
      `apiVersion: gitfleet.io/v1alpha1\nkind: App\nmetadata:\n  name: ${app}\nspec:\n  namespace: shop\n`;
    files[`apps/${app}/deployment.yaml`] = JSON.stringify(
      { ...rest, metadata: { name: app, labels: { tier: "web" } } },
      null,
      2,
    );
    files[`placements/${app}.yaml`] =
      `apiVersion: gitfleet.io/v1alpha1\nkind: Placement\nmetadata:\n  name: ${app}\nspec:\n  apps: [${app}]\n`;
  }
  return fileTreeFromText(files);
}

const batch = (name: string, clusterName: string, flags = "", apps = ["checkout"]) =>
  `    - name: ${name}\n      apps: [${apps.join(", ")}]\n      clusters: [${clusterName}]\n${flags}`;
const APPROVED = "      approved: true\n";

/** The CLI in a child process, waited for without blocking this one. */
function cli(args: readonly string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args]);
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => {
      stdout += String(chunk);
    });
    child.stderr.on("data", (chunk) => {
      stderr += String(chunk);
    });
    child.on("close", (status) => resolve({ status, stdout, stderr }));
  });
}

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

/** The apps as a team runs them today: created by hand in every member. */
async function runByHand(apps: readonly string[] = ["checkout"]): Promise<void> {
  for (const m of fleet.members) {
    await request(m, "/api/v1/namespaces", {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: "shop" },
    });
    for (const app of apps) await request(m, "/apis/apps/v1/namespaces/shop/deployments", deployment(app));
  }
  for (let i = 0; i < 100 && !(await everywhereReady(apps)); i++) await sleep(50);
}

async function everywhereReady(apps: readonly string[]): Promise<boolean> {
  for (const m of fleet.members)
    for (const app of apps) {
      const live = await liveObject(m, `/apis/apps/v1/namespaces/shop/deployments/${app}`);
      if (asMap(live?.status).readyReplicas !== 2) return false;
    }
  return true;
}

/** The uids of an app's pods, with their phase: "uid Running". */
async function podUids(m: SimulatedMember, app = "checkout"): Promise<string[]> {
  const list = asMap(
    await (await fetch(`${m.url}/api/v1/namespaces/shop/pods?labelSelector=app%3D${app}`)).json(),
  );
  return asList(list.items)
    .map((p) => `${String(asMap(asMap(p).metadata).uid)} ${String(asMap(asMap(p).status).phase)}`)
    .sort();
}

async function labelsIn(m: SimulatedMember, app = "checkout"): Promise<JsonMap> {
  return asMap(
    asMap((await liveObject(m, `/apis/apps/v1/namespaces/shop/deployments/${app}`))?.metadata).labels,
  );
}

function batchStatus(name: string): JsonMap {
  const status = statusFile(fleet.dir, "status/migrations/shop.yaml");
  return asMap(asList(status.batches).find((b) => asMap(b).name === name));
}

/** Stops a controller and starts another on the same repo and members, as a restarted pod would. */
async function restart(_controller: Awaited<ReturnType<typeof pushController>>) {
  return pushController(fleet.dir, fleet.kubeconfig);
}

/** Rounds in which nothing may happen: the callers check that nothing changed afterwards. */
async function rounds(controller: Awaited<ReturnType<typeof pushController>>, count: number) {
  for (let i = 0; i < count; i++) {
    await controller.round();
    // A fixed wait: the members get time to act on anything written, and nothing may change.
    await sleep(100);
  }
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
      fleetRepo(`${batch("test", "east", APPROVED)}${batch("staging", "west")}${batch("prod", "north")}`),
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

    // Restarted while staging waits for approval and prod is Pending: still nothing happens there.
    const waiting = await restart(controller);
    await rounds(waiting, 3);
    expect(batchStates()).toEqual({ test: "Succeeded", staging: "WaitingApproval", prod: "Pending" });
    expect(await labelsIn(member("west"))).toEqual({});
    expect(await podUids(member("east"))).toEqual(before.get("east"));

    // The team changed west by hand since; the pull request that approves staging shows, before it
    // is merged, what adopting changes there: gitfleet plan reads what runs (GETs only).
    const edited = await fetch(
      `${member("west").url}/apis/apps/v1/namespaces/shop/deployments/checkout?fieldManager=kubectl-edit`,
      {
        method: "PATCH",
        headers: { "content-type": "application/merge-patch+json" },
        body: JSON.stringify({ spec: { progressDeadlineSeconds: 600 } }),
      },
    );
    expect(edited.status).toBe(200);
    // A controller restart in the middle of the staging batch continues from the status branch.
    commitTree(
      fleet.dir,
      fleetRepo(
        `${batch("test", "east", APPROVED)}${batch("staging", "west", APPROVED)}${batch("prod", "north")}`,
      ),
      "approve staging",
    );
    // (Not spawnSync: the members answer from this process.)
    const plan = (...extra: string[]) =>
      cli(["plan", "--repo", fleet.dir, "--base", "main~1", "--head", "main", ...extra]);
    const compared = await plan("--kubeconfig", fleet.kubeconfig);
    expect(compared.stderr).toBe("");
    expect(compared.status).toBe(2);
    expect(compared.stdout).toContain(
      [
        "Plan: no rendered object changes; 1 migration batch changes",
        "",
        "Migrations:",
        "  shop/staging starts when merged (every batch before it has Succeeded): its apps are adopted",
        "    checkout in west:",
        "      ~ Deployment shop/checkout: adopted, changing 2 fields",
        '          metadata.labels: (unset) → {"tier":"web"}',
        "          spec.progressDeadlineSeconds: 600 → 2",
        "    nothing is deleted: adopting never deletes",
      ].join("\n"),
    );
    // Without a kubeconfig the plan says what it could not compare.
    expect((await plan()).stdout).toContain(
      "    (what runs was not read: pass --kubeconfig to compare each object with the cluster)\n    checkout in west:\n      ? Deployment shop/checkout: adopted if it runs, else created",
    );
    await waiting.round();
    expect(batchStates().staging).toMatch(/Syncing|Observing/);
    const restarted = await restart(waiting);
    await until(restarted, () => batchStates().staging === "Succeeded");
    expect(batchStates()).toEqual({ test: "Succeeded", staging: "Succeeded", prod: "WaitingApproval" });
    expect(await podUids(member("west"))).toEqual(before.get("west"));

    // Rolling staging back on purpose: detached, the pods keep running, nothing deleted.
    commitTree(
      fleet.dir,
      fleetRepo(
        `${batch("test", "east", APPROVED)}${batch("staging", "west", `${APPROVED}      rollback: true\n`)}${batch("prod", "north")}`,
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
    // Restarted after the rollback: the detached app stays detached (the label adoption set stays, as it runs).
    const afterRollback = await restart(restarted);
    await rounds(afterRollback, 3);
    expect(await labelsIn(member("west"))).toEqual({ tier: "web" });
    expect(batchStates().staging).toBe("RolledBack");
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
  });

  it.each([
    ["Halt", "Failed"],
    ["Rollback", "RolledBack"],
  ] as const)(
    "an app that degrades while its batch is observed: onFailure %s → %s, and the approved later batches wait",
    async (onFailure, failedState) => {
      await runByHand();
      const before = await podUids(member("east"));
      // Every batch approved at once: the later ones wait for the first.
      const batches = `${batch("test", "east", APPROVED)}${batch("staging", "west", APPROVED)}${batch("prod", "north", APPROVED)}`;
      createRepo(fleet.dir, fleetRepo(batches, { onFailure, observe: "10m" }));
      const first = await pushController(fleet.dir, fleet.kubeconfig);
      await until(first, () => batchStates().test === "Observing");
      expect(batchStates()).toEqual({ test: "Observing", staging: "Pending", prod: "Pending" });
      expect(batchStatus("staging").reason).toBe("waits for batch test");
      // Restarted while observing: the window goes on from when it started.
      const since = batchStatus("test").observingSince;
      const controller = await restart(first);
      await rounds(controller, 2);
      expect(batchStatus("test")).toMatchObject({ state: "Observing", observingSince: since });

      // A new image that east cannot pull: the rollout stalls past its progress deadline — Degraded.
      member("east").faults.unpullableImages([BROKEN]);
      commitTree(
        fleet.dir,
        fleetRepo(batches, { onFailure, observe: "10m", image: BROKEN }),
        "checkout 2.0.0",
      );
      await until(controller, () => batchStates().test === failedState);
      expect(batchStatus("test").reason).toBe(`checkout in east Degraded; onFailure: ${onFailure}`);
      const log = gitIn(fleet.dir, "log", "--format=%s", "gitfleet/status");
      expect(log).toContain(
        `migration: shop/test: Observing → ${failedState} (checkout in east Degraded; onFailure: ${onFailure})`,
      );
      // The old pods never stopped: the stalled rollout keeps them.
      expect((await podUids(member("east"))).filter((p) => before.includes(p))).toEqual(before);

      // Restarted after the failure: the later batches still wait, though approved; west and north untouched.
      const later = await restart(controller);
      await rounds(later, 3);
      expect(batchStates()).toEqual({ test: failedState, staging: "Pending", prod: "Pending" });
      expect(batchStatus("staging").reason).toBe("waits for batch test");
      expect(await labelsIn(member("west"))).toEqual({});
      expect(await labelsIn(member("north"))).toEqual({});
      const east = await labelsIn(member("east"));
      if (onFailure === "Rollback") {
        // Detached: no longer gitfleet's, still running, nothing deleted.
        expect(east["gitfleet.io/app"]).toBeUndefined();
        const inventory = statusFile(fleet.dir, "status/inventory/east.yaml");
        expect(JSON.stringify(inventory)).not.toContain("checkout");
        expect((await podUids(member("east"))).filter((p) => before.includes(p))).toEqual(before);
      } else expect(east["gitfleet.io/app"]).toBe("checkout");
    },
  );

  it("detaches an app removed from a started batch and keeps managing the others", async () => {
    const apps = ["checkout", "catalog"];
    await runByHand(apps);
    const before = await podUids(member("east"), "catalog");
    createRepo(fleet.dir, fleetRepo(`${batch("test", "east", APPROVED, apps)}`, { apps, observe: "0s" }));
    const controller = await pushController(fleet.dir, fleet.kubeconfig);
    await until(controller, () => batchStates().test === "Succeeded");
    expect(await labelsIn(member("east"), "catalog")).toMatchObject({ "gitfleet.io/app": "catalog" });

    commitTree(
      fleet.dir,
      fleetRepo(`${batch("test", "east", APPROVED)}`, { apps, observe: "0s" }),
      "take catalog out of the migration",
    );
    await until(
      controller,
      async () => (await labelsIn(member("east"), "catalog"))["gitfleet.io/app"] === undefined,
    );
    expect(await podUids(member("east"), "catalog")).toEqual(before);
    expect(await labelsIn(member("east"))).toMatchObject({ "gitfleet.io/app": "checkout" });
    expect(asList(statusFile(fleet.dir, "status/migrations/shop.yaml").detached)).toEqual(["catalog/east"]);
    expect(gitIn(fleet.dir, "log", "--format=%s", "gitfleet/status")).toContain(
      "migration: shop: catalog/east removed from the migration: detached",
    );
    // Not in any migration's started batch and not adopted: never touched again, here or elsewhere.
    await rounds(controller, 3);
    expect(await labelsIn(member("east"), "catalog")).toEqual({ tier: "web" });
    expect(await labelsIn(member("west"), "catalog")).toEqual({});
  });
});
