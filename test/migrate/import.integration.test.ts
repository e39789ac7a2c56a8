import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { asList, asMap, type JsonMap } from "../../src/apimachinery/json.js";
import { fileTreeFromText } from "../../src/model/file-tree.js";
import type { SimulatedMember } from "../../src/sim/member-server.js";
import { gitfleetAsync as cli } from "../helpers/cli.js";
import { createRepo, gitIn } from "../helpers/git-repo.js";
import { liveObject, membersPerTest, pushController, statusFile } from "../helpers/sync-fleet.js";

// `gitfleet import`: an app a team runs by hand in three members becomes fleet repo files that
// validate, and the Migration they hold adopts every object where it runs, restarting no pod.

const fleet = membersPerTest("gitfleet-import-", ["east", "west", "north"]);

const member = (name: string) => fleet.members.find((m) => m.name === name) as SimulatedMember;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function create(m: SimulatedMember, path: string, body: unknown): Promise<void> {
  const response = await fetch(`${m.url}${path}?fieldManager=kubectl-create`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (response.status >= 300) throw new Error(`${path}: ${response.status} ${await response.text()}`);
}

const REPLICAS: Record<string, number> = { east: 2, west: 2, north: 3 };

function deployment(replicas: number): JsonMap {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "checkout", namespace: "shop", labels: { app: "checkout" } },
    spec: {
      replicas,
      selector: { matchLabels: { app: "checkout" } },
      template: {
        metadata: { labels: { app: "checkout" } },
        spec: {
          containers: [
            {
              name: "checkout",
              image: "ghcr.io/example/checkout:1.4.2",
              resources: { requests: { cpu: "100m", memory: "64Mi" } },
            },
          ],
        },
      },
    },
  };
}

/** The app as its team runs it today: made by hand in every member, a little differently in each. */
async function runByHand(): Promise<void> {
  for (const m of fleet.members) {
    await create(m, "/api/v1/namespaces", {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: "shop" },
    });
    await create(m, "/apis/apps/v1/namespaces/shop/deployments", deployment(REPLICAS[m.name] as number));
    await create(m, "/api/v1/namespaces/shop/services", {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "checkout", labels: { app: "checkout" } },
      spec: { selector: { app: "checkout" }, ports: [{ name: "http", port: 80, targetPort: 8080 }] },
    });
    await create(m, "/api/v1/namespaces/shop/configmaps", {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "checkout-config", labels: { app: "checkout" } },
      data: { currency: m.name === "north" ? "SEK" : "EUR", timeout: "30s" },
    });
    await create(m, "/api/v1/namespaces/shop/secrets", {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "checkout-db", labels: { app: "checkout" } },
      stringData: { password: "not-a-real-password" },
    });
  }
  await create(member("east"), "/api/v1/namespaces/shop/configmaps", {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "east-only", labels: { app: "checkout-extra" } },
    data: { k: "v" },
  });
  for (let i = 0; i < 200 && !(await everywhereReady()); i++) await sleep(50);
  expect(await everywhereReady()).toBe(true);
}

async function everywhereReady(): Promise<boolean> {
  for (const m of fleet.members) {
    const live = await liveObject(m, "/apis/apps/v1/namespaces/shop/deployments/checkout");
    if (asMap(live?.status).readyReplicas !== REPLICAS[m.name]) return false;
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

const cluster = (name: string) =>
  `apiVersion: gitfleet.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: ${name}\nspec:\n  provider: p\n  region: r-${name}\n`;

function fleetRepo(): void {
  createRepo(
    fleet.dir,
    fileTreeFromText({
      "clusters/east.yaml": cluster("east"),
      "clusters/west.yaml": cluster("west"),
      "clusters/north.yaml": cluster("north"),
      // A pull-mode member gitfleet holds no credentials for: an import passes it over unless named.
      "clusters/far.yaml": `${cluster("far")}  connection:\n    mode: pull\n`,
    }),
  );
  gitIn(fleet.dir, "config", "user.name", "Pat Platform");
  gitIn(fleet.dir, "config", "user.email", "pat@example.com");
}

const file = (path: string) => readFileSync(join(fleet.dir, path), "utf8");

describe("gitfleet import", () => {
  it("writes an app that validates and whose migration adopts every object where it runs, restarting no pod", async () => {
    await runByHand();
    fleetRepo();
    const before = new Map(
      await Promise.all(fleet.members.map(async (m) => [m.name, await podUids(m)] as const)),
    );
    const services = new Map(
      await Promise.all(
        fleet.members.map(
          async (m) =>
            [
              m.name,
              asMap((await liveObject(m, "/api/v1/namespaces/shop/services/checkout"))?.metadata).uid,
            ] as const,
        ),
      ),
    );

    const imported = await cli([
      "import",
      "checkout",
      "--repo",
      fleet.dir,
      "-n",
      "shop",
      "--kubeconfig",
      fleet.kubeconfig,
    ]);
    expect(imported.stderr).toContain("Secret checkout-db not imported: a Secret's values never go to Git");
    expect(imported.stderr).toContain("ConfigMap east-only runs in only some of east, north, west");
    expect(imported.stderr).toContain("gitfleet: far not read: a pull-mode cluster without credentials");
    expect(imported.code, imported.stderr).toBe(0);
    expect(gitIn(fleet.dir, "status", "--porcelain")).toBe("");
    expect(gitIn(fleet.dir, "show", "--name-only", "--format=%s", "HEAD").split("\n")).toEqual([
      "Import checkout: 4 object(s) of namespace shop from east, north, west",
      "",
      "apps/checkout/app.yaml",
      "apps/checkout/configmap-checkout-config.yaml",
      "apps/checkout/configmap-east-only.yaml",
      "apps/checkout/deployment-checkout.yaml",
      "apps/checkout/service-checkout.yaml",
      "migrations/checkout.yaml",
      "overrides/checkout-configmap-checkout-config.yaml",
      "placements/checkout-configmap-east-only.yaml",
      "placements/checkout-deployment-checkout.yaml",
      "placements/checkout.yaml",
    ]);
    // What the server set is not in the templates; the pod template is as it runs.
    const service = parse(file("apps/checkout/service-checkout.yaml")) as JsonMap;
    expect(asMap(service.spec).clusterIP).toBeUndefined();
    expect(asMap(service.metadata)).toEqual({ name: "checkout", labels: { app: "checkout" } });
    const workload = parse(file("apps/checkout/deployment-checkout.yaml")) as JsonMap;
    expect(asMap(workload.spec).replicas).toBe(7);
    expect(workload.status).toBeUndefined();
    expect(file("placements/checkout-deployment-checkout.yaml")).toContain(
      "ran 2 in east, 3 in north, 2 in west",
    );
    expect(parse(file("overrides/checkout-configmap-checkout-config.yaml")).spec.overrideRules).toEqual([
      {
        targetCluster: { clusterNames: ["north"] },
        overriders: { jsonPatch: [{ op: "replace", path: "/data/currency", value: "SEK" }] },
      },
    ]);
    expect(gitIn(fleet.dir, "log", "-p", "--all")).not.toContain("not-a-real-password");

    const valid = await cli(["validate", fleet.dir]);
    expect(valid.code, valid.stdout + valid.stderr).toBe(0);

    // Nothing is adopted before a batch is approved; then every batch adopts in place.
    const controller = await pushController(fleet.dir, fleet.kubeconfig);
    await controller.round();
    expect(
      asMap(
        asMap(
          (await liveObject(member("east"), "/apis/apps/v1/namespaces/shop/deployments/checkout"))?.metadata,
        ).labels,
      )["app.kubernetes.io/managed-by"],
    ).toBeUndefined();
    const migration = file("migrations/checkout.yaml")
      .replaceAll("approved: false", "approved: true")
      .replace("observe: 10m", "observe: 1s");
    createRepoCommit("migrations/checkout.yaml", migration, "Approve every batch of checkout");
    for (let i = 0; i < 100 && !allSucceeded(); i++) {
      await controller.round();
      await sleep(100);
    }
    expect(batchStates()).toEqual({ east: "Succeeded", north: "Succeeded", west: "Succeeded" });
    for (const m of fleet.members) {
      expect(await podUids(m), m.name).toEqual(before.get(m.name));
      const live = await liveObject(m, "/apis/apps/v1/namespaces/shop/deployments/checkout");
      expect(asMap(live?.spec).replicas, m.name).toBe(REPLICAS[m.name]);
      expect(asMap(live?.metadata).labels).toMatchObject({ "app.kubernetes.io/managed-by": "gitfleet" });
      const config = await liveObject(m, "/api/v1/namespaces/shop/configmaps/checkout-config");
      expect(asMap(config?.data).currency).toBe(m.name === "north" ? "SEK" : "EUR");
      const svc = await liveObject(m, "/api/v1/namespaces/shop/services/checkout");
      expect(asMap(svc?.metadata).uid).toBe(services.get(m.name));
      const eastOnly = await liveObject(m, "/api/v1/namespaces/shop/configmaps/east-only");
      expect(eastOnly !== undefined, m.name).toBe(m.name === "east");
    }
  });

  it("prints a patch git apply takes and changes nothing with --patch", async () => {
    await runByHand();
    fleetRepo();
    const head = gitIn(fleet.dir, "rev-parse", "HEAD");
    const result = await cli([
      "import",
      "checkout",
      "--repo",
      fleet.dir,
      "-n",
      "shop",
      "--kubeconfig",
      fleet.kubeconfig,
      "--cluster",
      "east,west",
      "-l",
      "app=checkout",
      "--patch",
    ]);
    expect(result.code, result.stderr).toBe(0);
    expect(gitIn(fleet.dir, "rev-parse", "HEAD")).toBe(head);
    expect(gitIn(fleet.dir, "status", "--porcelain")).toBe("");
    expect(result.stdout).toContain("diff --git a/placements/checkout.yaml b/placements/checkout.yaml");
    const patch = join(fleet.dir, "..", `${fleet.dir.split("/").pop()}.patch`);
    writeFileSync(patch, result.stdout);
    gitIn(fleet.dir, "apply", patch);
    // Two clusters with equal replicas: the whole app Duplicated, no Placement of the workload's own.
    expect(parse(file("placements/checkout.yaml")).spec).toMatchObject({
      apps: ["checkout"],
      clusterAffinity: { clusterNames: ["east", "west"] },
      replicaScheduling: { type: "Duplicated" },
    });
    expect(parse(file("migrations/checkout.yaml")).spec.batches).toEqual([
      { name: "east", apps: ["checkout"], clusters: ["east"], approved: false },
      { name: "west", apps: ["checkout"], clusters: ["west"], approved: false },
    ]);
    const valid = await cli(["validate", fleet.dir]);
    expect(valid.code, valid.stdout + valid.stderr).toBe(0);
  });

  it.each([
    [["import", "Bad_Name", "-n", "shop"], 64, 'app name "Bad_Name"'],
    [["import", "checkout", "-n", "Shop"], 64, '--namespace "Shop"'],
    [["import", "checkout", "-n", "shop", "--cluster", "south"], 64, "no cluster south in the fleet"],
    [["import", "checkout", "-n", "shop", "-l", "a in (b"], 64, "--selector"],
    [["import", "checkout", "-n", "shop", "--kind", "Widget"], 64, '--kind "Widget"'],
    [["import", "checkout", "-n", "shop", "--observe", "soon"], 64, '--observe "soon"'],
    [
      ["import", "checkout", "-n", "shop", "--cluster", "far"],
      1,
      "cannot read far: a pull-mode cluster without credentials",
    ],
    [["import", "checkout", "-n", "empty"], 1, "nothing to import: no object of namespace empty"],
  ])("refuses %j with exit %i", async (args, code, message) => {
    fleetRepo();
    const result = await cli([...args, "--repo", fleet.dir, "--kubeconfig", fleet.kubeconfig]);
    expect(result.stderr).toContain(message);
    expect(result.code).toBe(code);
    expect(gitIn(fleet.dir, "log", "--format=%s")).toBe("Initial fleet");
  });
});

function createRepoCommit(path: string, text: string, message: string): void {
  writeFileSync(join(fleet.dir, path), text);
  gitIn(fleet.dir, "commit", "-qam", message);
}

function batchStates(): Record<string, string> {
  const status = statusFile(fleet.dir, "status/migrations/checkout.yaml");
  return Object.fromEntries(
    asList(status.batches).map((b) => [String(asMap(b).name), String(asMap(b).state)]),
  );
}

function allSucceeded(): boolean {
  const states = Object.values(batchStates());
  return states.length === 3 && states.every((s) => s === "Succeeded");
}
