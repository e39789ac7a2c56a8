import { describe, expect, it } from "vitest";
import { asList, asMap, type JsonMap } from "../../src/apimachinery/json.js";
import { fileTreeFromText } from "../../src/model/file-tree.js";
import type { SimulatedMember } from "../../src/sim/member-server.js";
import { appStatusPath } from "../../src/status/status-files.js";
import { commitTree, createRepo } from "../helpers/git-repo.js";
import { liveObject, membersPerTest, pushController, statusFile } from "../helpers/sync-fleet.js";
import { clusterYaml } from "../helpers/two-clusters.js";

// Ordering and control of what syncs when, end to end: the controller reconciling a fleet repo and
// syncing simulated members round by round — apps that depend on apps, sync waves, hooks, health of
// custom resources by the kstatus conventions, suspend, and sync windows.

const fleet = membersPerTest("gitfleet-sync-order-", ["east", "west"]);
const member = (name: string) => fleet.members.find((m) => m.name === name) as SimulatedMember;
const CLUSTERS = ["east", "west"] as const;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const app = (name: string, extra = "") =>
  `apiVersion: gitfleet.io/v1alpha1\nkind: App\nmetadata:\n  name: ${name}\nspec:\n  namespace: shop\n${extra}`;

const placement = (name: string, apps: readonly string[], scheduling = "{type: Duplicated}") =>
  `apiVersion: gitfleet.io/v1alpha1\nkind: Placement\nmetadata:\n  name: ${name}\nspec:\n  apps: [${apps.join(", ")}]\n  clusterAffinity:\n    clusterNames: [east, west]\n  replicaScheduling: ${scheduling}\n`;

function deployment(name: string, options: { replicas?: number; image?: string; annotations?: string } = {}) {
  return `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${name}
  labels: {app: ${name}}
${options.annotations ? `  annotations:\n${options.annotations}` : ""}spec:
  replicas: ${options.replicas ?? 1}
  selector: {matchLabels: {app: ${name}}}
  template:
    metadata: {labels: {app: ${name}}}
    spec:
      containers:
        - name: main
          image: ${options.image ?? `ghcr.io/example/${name}:1.0.0`}
          resources: {requests: {cpu: 50m, memory: 32Mi}}
`;
}

function job(name: string, annotations: string, extra = "") {
  return `apiVersion: batch/v1
kind: Job
metadata:
  name: ${name}
  annotations:
${annotations}spec:
  backoffLimit: 0
${extra}  template:
    metadata: {labels: {job: ${name}}}
    spec:
      restartPolicy: Never
      containers:
        - name: main
          image: ghcr.io/example/${name}:1.0.0
          resources: {requests: {cpu: 10m, memory: 16Mi}}
`;
}

function repo(files: Record<string, string>, fleetYaml = "") {
  return fileTreeFromText({
    "fleet.yaml": `apiVersion: gitfleet.io/v1alpha1\nkind: Fleet\nmetadata:\n  name: t\n${fleetYaml ? `spec:\n${fleetYaml}` : ""}`,
    "clusters/east.yaml": clusterYaml("east"),
    "clusters/west.yaml": clusterYaml("west"),
    ...files,
  });
}

const path = {
  deployment: (name: string) => `/apis/apps/v1/namespaces/shop/deployments/${name}`,
  job: (name: string) => `/apis/batch/v1/namespaces/shop/jobs/${name}`,
  widget: (name: string) => `/apis/example.com/v1/namespaces/shop/widgets/${name}`,
  crd: "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com",
};

const observed = (app: string, cluster: string) =>
  asMap(asMap(statusFile(fleet.dir, appStatusPath(app)).observed)[cluster]);

type Controller = Awaited<ReturnType<typeof pushController>>;

/** Rounds until `done` holds (at most `rounds`); `each` sees every round. */
async function rounds(
  controller: Controller,
  done: () => boolean | Promise<boolean>,
  each: (round: number) => Promise<void> = async () => {},
  max = 120,
): Promise<void> {
  for (let i = 0; i < max; i++) {
    await controller.round();
    await each(i);
    if (await done()) return;
    await sleep(30);
  }
  throw new Error(`not reached after ${max} rounds`);
}

// A JSON merge patch by another field manager (a person with kubectl, an operator).
const patch = (cluster: string, at: string, body: JsonMap) =>
  fetch(`${member(cluster).url}${at}?fieldManager=kubectl-edit`, {
    method: "PATCH",
    headers: { "content-type": "application/merge-patch+json" },
    body: JSON.stringify(body),
  });

const gitfleetLabels = (app: string) => ({
  "app.kubernetes.io/managed-by": "gitfleet",
  "gitfleet.io/app": app,
});

const exists = async (cluster: string, at: string) => (await liveObject(member(cluster), at)) !== undefined;
const image = (live: JsonMap | undefined) =>
  String(asMap(asList(asMap(asMap(asMap(live?.spec).template).spec).containers)[0]).image ?? "");
const uid = (live: JsonMap | undefined) => String(asMap(live?.metadata).uid ?? "");

// Every cluster with every one of the apps.
const pairs = (apps: readonly string[]) =>
  CLUSTERS.flatMap((cluster) => apps.map((app) => [cluster, app] as const));

const CHAIN = {
  "apps/db/app.yaml": app("db"),
  "apps/db/deployment.yaml": deployment("db"),
  "apps/api/app.yaml": app("api", "  dependsOn: [db]\n"),
  "apps/api/deployment.yaml": deployment("api"),
  "apps/web/app.yaml": app("web", "  dependsOn: [api]\n"),
  "apps/web/deployment.yaml": deployment("web"),
  "placements/all.yaml": placement("all", ["db", "api", "web"]),
};

describe("dependsOn between apps", () => {
  it("lands a database → api → web chain in order in each cluster, and says what each waits for", async () => {
    createRepo(fleet.dir, repo(CHAIN));
    const controller = await pushController(fleet.dir, fleet.kubeconfig);
    const firstSeen = new Map<string, number>();
    const messages = new Set<string>();
    await rounds(
      controller,
      async () => firstSeen.size === 6,
      async (round) => {
        for (const [cluster, name] of pairs(["db", "api", "web"]))
          if (!firstSeen.has(`${cluster}/${name}`) && (await exists(cluster, path.deployment(name))))
            firstSeen.set(`${cluster}/${name}`, round);
        for (const [cluster, name] of pairs(["api", "web"])) {
          const waiting = observed(name, cluster).dependsOn;
          if (typeof waiting === "string") messages.add(waiting.replace(/ \(.*$/, ""));
        }
      },
    );
    for (const cluster of CLUSTERS) {
      const at = (name: string) => firstSeen.get(`${cluster}/${name}`) ?? -1;
      expect(at("db")).toBeLessThan(at("api"));
      expect(at("api")).toBeLessThan(at("web"));
    }
    expect(messages).toEqual(
      new Set([
        "waiting for db in east",
        "waiting for db in west",
        "waiting for api in east",
        "waiting for api in west",
      ]),
    );
  });

  it("keeps dependents on what they run while a dependency is Degraded, in that cluster only", async () => {
    createRepo(fleet.dir, repo(CHAIN));
    const controller = await pushController(fleet.dir, fleet.kubeconfig);
    await rounds(controller, async () =>
      CLUSTERS.every((c) => observed("web", c).health === "Healthy" && !observed("web", c).dependsOn),
    );
    // A new database version crash-loops in east; api and web get new versions in the same commit.
    member("east").faults.podFaults([{ namespace: "shop", selector: { app: "db" }, crashLoop: true }]);
    commitTree(
      fleet.dir,
      repo({
        ...CHAIN,
        "apps/db/deployment.yaml": deployment("db", { image: "ghcr.io/example/db:2.0.0" }).replace(
          "spec:\n  replicas",
          "spec:\n  progressDeadlineSeconds: 1\n  replicas",
        ),
        "apps/api/deployment.yaml": deployment("api", { image: "ghcr.io/example/api:2.0.0" }),
        "apps/web/deployment.yaml": deployment("web", { image: "ghcr.io/example/web:2.0.0" }),
      }),
      "db, api and web 2.0.0",
    );
    await rounds(
      controller,
      async () =>
        image(await liveObject(member("west"), path.deployment("web"))).endsWith(":2.0.0") &&
        observed("db", "east").health === "Degraded",
    );
    for (let i = 0; i < 5; i++) await controller.round();
    expect(image(await liveObject(member("east"), path.deployment("db")))).toMatch(/:2\.0\.0$/);
    expect(image(await liveObject(member("east"), path.deployment("api")))).toMatch(/:1\.0\.0$/);
    expect(image(await liveObject(member("east"), path.deployment("web")))).toMatch(/:1\.0\.0$/);
    expect(String(observed("api", "east").dependsOn)).toMatch(/^waiting for db in east \(Degraded: /);
    expect(image(await liveObject(member("west"), path.deployment("api")))).toMatch(/:2\.0\.0$/);
  });
});

describe("sync waves", () => {
  it("applies a CRD, then its operator, then the custom resource, each wave once the one before is Healthy", async () => {
    const wave = (n: number, key = "gitfleet.io/sync-wave") => `    ${key}: "${n}"\n`;
    createRepo(
      fleet.dir,
      repo({
        "apps/widgets/app.yaml": app("widgets"),
        "apps/widgets/crd.yaml": widgetCrd(`  annotations:\n${wave(-1, "argocd.argoproj.io/sync-wave")}`),
        "apps/widgets/operator.yaml": deployment("widget-operator", { replicas: 2 }),
        "apps/widgets/widget.yaml": `apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: gadget\n  annotations:\n${wave(1)}spec:\n  size: 3\n`,
        "placements/widgets.yaml": placement("widgets", ["widgets"]),
      }),
    );
    const controller = await pushController(fleet.dir, fleet.kubeconfig);
    const order: string[] = [];
    const waits = new Set<string>();
    let operatorReadyAtWidget: unknown;
    await rounds(
      controller,
      async () => exists("east", path.widget("gadget")),
      async () => {
        const steps = [
          ["crd", path.crd],
          ["operator", path.deployment("widget-operator")],
          ["widget", path.widget("gadget")],
        ] as const;
        for (const [name, at] of steps)
          if (!order.includes(name) && (await exists("east", at))) order.push(name);
        // The custom resource appears only once its operator's replicas are ready.
        if (order.includes("widget") && operatorReadyAtWidget === undefined)
          operatorReadyAtWidget = asMap(
            (await liveObject(member("east"), path.deployment("widget-operator")))?.status,
          ).readyReplicas;
        const waiting = observed("widgets", "east").syncWave;
        if (typeof waiting === "string") waits.add(waiting);
      },
    );
    expect(order).toEqual(["crd", "operator", "widget"]);
    expect(operatorReadyAtWidget).toBe(2);
    expect(waits).toContain("sync wave 1 waits for wave 0 to be Healthy");
  });

  it("judges a custom resource by its Ready condition without a ResourceInterpreter", async () => {
    createRepo(
      fleet.dir,
      repo({
        "apps/widgets/app.yaml": app("widgets"),
        "apps/widgets/crd.yaml": widgetCrd(),
        "apps/widgets/widget.yaml":
          "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: gadget\nspec:\n  size: 3\n",
        "placements/widgets.yaml": placement("widgets", ["widgets"]),
      }),
    );
    const controller = await pushController(fleet.dir, fleet.kubeconfig);
    await rounds(controller, async () => observed("widgets", "east").health === "Healthy");
    // Its operator reports it not ready, as a kstatus-compatible controller does.
    const response = await patch("east", path.widget("gadget"), {
      status: {
        conditions: [
          { type: "Ready", status: "False", reason: "QuotaExceeded", message: "no room for 3 widgets" },
        ],
      },
    });
    expect(response.status).toBe(200);
    await rounds(controller, async () => observed("widgets", "east").health === "Degraded");
    expect(String(observed("widgets", "east").reason)).toBe(
      "Widget shop/gadget: not ready: QuotaExceeded: no room for 3 widgets",
    );
    expect(observed("widgets", "west").health).toBe("Healthy");
  });
});

// The Widget CRD, with extra metadata lines (annotations) when given.
function widgetCrd(metadata = "") {
  return `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
${metadata}spec:
  group: example.com
  scope: Namespaced
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
  versions:
    - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}
`;
}

const MIGRATE_HOOK = `    argocd.argoproj.io/hook: PreSync\n    argocd.argoproj.io/hook-delete-policy: BeforeHookCreation\n`;

function shopWithHooks(version: string) {
  return {
    "apps/shop/app.yaml": app("shop"),
    "apps/shop/deployment.yaml": deployment("storefront", {
      replicas: 4,
      image: `ghcr.io/example/storefront:${version}`,
    }),
    "apps/shop/migrate.yaml": job("migrate", MIGRATE_HOOK, "  parallelism: 1\n").replace(
      "migrate:1.0.0",
      `migrate:${version}`,
    ),
    "apps/shop/smoke.yaml": job(
      "smoke",
      "    gitfleet.io/hook: PostSync\n    gitfleet.io/hook-delete-policy: HookSucceeded\n",
    ),
    "placements/shop.yaml": placement("shop", ["shop"], "{type: Divided}"),
  };
}

describe("hooks", () => {
  it("runs a PreSync migration once per cluster per commit, never divided, and PostSync once the app is Healthy", async () => {
    createRepo(fleet.dir, repo(shopWithHooks("1.0.0")));
    const controller = await pushController(fleet.dir, fleet.kubeconfig);
    let deploymentBeforeJobDone = false;
    const smokeStarts: { cluster: string; ready: number }[] = [];
    await rounds(
      controller,
      async () =>
        CLUSTERS.every(
          (c) => String(asMap(observed("shop", c).hooks)["PostSync Job shop/smoke"]) === "Succeeded",
        ),
      async () => {
        for (const cluster of CLUSTERS) {
          const migrate = await liveObject(member(cluster), path.job("migrate"));
          const storefront = await liveObject(member(cluster), path.deployment("storefront"));
          const done = asList(asMap(migrate?.status).conditions).some((c) => asMap(c).type === "Complete");
          if (storefront && !done) deploymentBeforeJobDone = true;
          const smoke = await liveObject(member(cluster), path.job("smoke"));
          if (smoke && !smokeStarts.some((s) => s.cluster === cluster))
            smokeStarts.push({ cluster, ready: Number(asMap(storefront?.status).readyReplicas ?? 0) });
        }
      },
    );
    expect(deploymentBeforeJobDone).toBe(false);
    // PostSync started only once the storefront's 2 replicas per cluster were ready; then deleted on success.
    expect(smokeStarts.map((s) => s.ready)).toEqual([2, 2]);
    for (const cluster of CLUSTERS) {
      const migrate = await liveObject(member(cluster), path.job("migrate"));
      // A hook is never divided: each cluster runs the Job as written.
      expect(asMap(migrate?.spec).parallelism).toBe(1);
      expect(asMap(migrate?.status).succeeded).toBe(1);
      expect(await exists(cluster, path.job("smoke"))).toBe(false);
      expect(observed("shop", cluster).hooks).toEqual({
        "PreSync Job shop/migrate": "Succeeded",
        "PostSync Job shop/smoke": "Succeeded",
      });
    }
    const first = new Map<string, string>();
    for (const cluster of CLUSTERS)
      first.set(cluster, uid(await liveObject(member(cluster), path.job("migrate"))));
    // Rounds and a commit elsewhere in the fleet do not run it again…
    for (let i = 0; i < 3; i++) await controller.round();
    commitTree(fleet.dir, repo({ ...shopWithHooks("1.0.0"), "README.md": "the shop fleet\n" }), "readme");
    for (let i = 0; i < 3; i++) await controller.round();
    for (const cluster of CLUSTERS)
      expect(uid(await liveObject(member(cluster), path.job("migrate")))).toBe(first.get(cluster));
    // …a new version of the app does, once per cluster, before the new version runs.
    commitTree(fleet.dir, repo(shopWithHooks("1.1.0")), "shop 1.1.0");
    await rounds(controller, async () => {
      for (const cluster of CLUSTERS)
        if (!image(await liveObject(member(cluster), path.deployment("storefront"))).endsWith(":1.1.0"))
          return false;
      return true;
    });
    for (const cluster of CLUSTERS) {
      const migrate = await liveObject(member(cluster), path.job("migrate"));
      expect(uid(migrate)).not.toBe(first.get(cluster));
      expect(image(migrate)).toMatch(/migrate:1\.1\.0$/);
    }
  });

  it("stops only the cluster whose PreSync hook fails, reports it, and runs SyncFail there", async () => {
    const failing = (version: string) => ({
      ...shopWithHooks(version),
      "apps/shop/notify.yaml": job("notify-failure", "    gitfleet.io/hook: SyncFail\n"),
    });
    createRepo(fleet.dir, repo(failing("1.0.0")));
    const controller = await pushController(fleet.dir, fleet.kubeconfig);
    await rounds(controller, async () =>
      CLUSTERS.every(
        (c) => String(asMap(observed("shop", c).hooks)["PostSync Job shop/smoke"]) === "Succeeded",
      ),
    );
    member("west").faults.podFaults([{ namespace: "shop", selector: { job: "migrate" }, crashLoop: true }]);
    commitTree(fleet.dir, repo(failing("1.1.0")), "shop 1.1.0");
    await rounds(
      controller,
      async () =>
        image(await liveObject(member("east"), path.deployment("storefront"))).endsWith(":1.1.0") &&
        (await exists("west", path.job("notify-failure"))),
    );
    for (let i = 0; i < 3; i++) await controller.round();
    expect(image(await liveObject(member("west"), path.deployment("storefront")))).toMatch(/:1\.0\.0$/);
    expect(String(observed("shop", "west").hook)).toMatch(
      /^PreSync hook Job shop\/migrate failed: Job has reached the specified backoff limit; the objects stay as they run until a new commit$/,
    );
    expect(asMap(observed("shop", "west").hooks)["PreSync Job shop/migrate"]).toBe(
      "Failed: Job has reached the specified backoff limit",
    );
    expect(await exists("east", path.job("notify-failure"))).toBe(false);
  });
});

describe("suspend", () => {
  it("leaves a suspended app as it runs: a commit is ignored and drift is reported, not corrected", async () => {
    const files = (extra: string, version: string) => ({
      "apps/web/app.yaml": app("web", extra),
      "apps/web/deployment.yaml": deployment("web", { replicas: 2, image: `ghcr.io/example/web:${version}` }),
      "placements/web.yaml": placement("web", ["web"]),
    });
    createRepo(fleet.dir, repo(files("", "1.0.0")));
    const controller = await pushController(fleet.dir, fleet.kubeconfig);
    await rounds(controller, async () => observed("web", "east").health === "Healthy");
    commitTree(fleet.dir, repo(files("  suspend: true\n", "1.0.0")), "suspend web");
    await controller.round();
    commitTree(fleet.dir, repo(files("  suspend: true\n", "2.0.0")), "web 2.0.0");
    // Someone edits it by hand in east.
    await patch("east", path.deployment("web"), { metadata: { labels: { app: null, edited: "by-hand" } } });
    for (let i = 0; i < 4; i++) await controller.round();
    const east = await liveObject(member("east"), path.deployment("web"));
    expect(image(east)).toMatch(/:1\.0\.0$/);
    expect(asMap(asMap(east?.metadata).labels)).toEqual({ edited: "by-hand", ...gitfleetLabels("web") });
    expect(observed("web", "east").suspended).toBe("suspended (App spec.suspend)");
    const drift = asList(observed("web", "east").problems).flatMap((p) => asList(asMap(p).drift).map(String));
    expect(drift).toEqual(
      expect.arrayContaining(["metadata.labels.app", "spec.template.spec.containers[0].image"]),
    );
    // Resumed: the commit lands and the drift is corrected.
    commitTree(fleet.dir, repo(files("", "2.0.0")), "resume web");
    await rounds(controller, async () =>
      image(await liveObject(member("east"), path.deployment("web"))).endsWith(":2.0.0"),
    );
    const resumed = await liveObject(member("east"), path.deployment("web"));
    expect(asMap(asMap(resumed?.metadata).labels).app).toBe("web");
  });
});

describe("sync windows", () => {
  it("defers a change while a deny window is open and lets it through when it closes; failover still moves replicas", async () => {
    let offset = 0;
    const now = () => Date.now() + offset;
    const hour = new Date().getUTCHours();
    const windows = `  syncWindows:\n    - name: business-hours\n      kind: deny\n      schedule: "0 ${hour} * * *"\n      duration: 2h\n`;
    const files = (version: string) => ({
      "apps/web/app.yaml": app("web"),
      "apps/web/deployment.yaml": deployment("web", { replicas: 4, image: `ghcr.io/example/web:${version}` }),
      "placements/web.yaml": `${placement("web", ["web"], "{type: Divided}")}  failover:\n    application:\n      unschedulableSeconds: 1\n`,
    });
    createRepo(fleet.dir, repo(files("1.0.0")));
    const controller = await pushController(fleet.dir, fleet.kubeconfig, {}, { now });
    await rounds(controller, async () => CLUSTERS.every((c) => observed("web", c).health === "Healthy"));
    commitTree(fleet.dir, repo(files("2.0.0"), windows), "web 2.0.0, in a deny window");
    for (let i = 0; i < 4; i++) await controller.round();
    // Deferred: both clusters run 1.0.0 and say why.
    for (const cluster of CLUSTERS)
      expect(image(await liveObject(member(cluster), path.deployment("web")))).toMatch(/:1\.0\.0$/);
    expect(String(observed("web", "east").syncWindow)).toMatch(
      /^sync window: deny window business-hours is open until \d{4}-\d\d-\d\dT\d\d:00:00\.000Z$/,
    );
    // west loses its nodes: failover moves its replicas to east inside the window.
    member("west").faults.loseNodes(3);
    await rounds(controller, async () => {
      const east = await liveObject(member("east"), path.deployment("web"));
      return asMap(east?.spec).replicas === 4;
    });
    // The window closes: the change goes through.
    offset = 3 * 3_600_000;
    await rounds(controller, async () =>
      image(await liveObject(member("east"), path.deployment("web"))).endsWith(":2.0.0"),
    );
    expect(observed("web", "east").syncWindow).toBeUndefined();
  });
});
