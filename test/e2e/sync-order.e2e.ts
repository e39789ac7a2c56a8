import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { asList, asMap, type JsonMap } from "../../src/apimachinery/json.js";
import { MemberClient } from "../../src/kube/member-client.js";
import { fileTreeFromText } from "../../src/model/file-tree.js";
import { appStatusPath } from "../../src/status/status-files.js";
import { commitTree, createRepo, tempDir } from "../helpers/git-repo.js";
import { pushController, statusFile } from "../helpers/sync-fleet.js";
import { type ControlPlanes, startControlPlanes } from "./cluster/control-plane.js";
import { NodeSimulator } from "./cluster/node-simulator.js";

/**
 * The second tier's check of ordering: one app with a PreSync migration Job, a CRD in wave -1, its
 * operator in wave 0, a custom resource in wave 1 and a PostSync smoke test, synced by the controller
 * to a real kube-apiserver with kube-controller-manager (Jobs complete, Deployments become ready) —
 * each step must appear only once the one before it is done, as on simulated members.
 */

const BUILD = fileURLToPath(new URL("./cluster/build.sh", import.meta.url));
const CLUSTER = "ordered";

let planes: ControlPlanes;
let nodes: NodeSimulator;
let client: MemberClient;
let repo: { dir: string; cleanup: () => void };

beforeAll(async () => {
  const binDir = execFileSync("bash", [BUILD], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] })
    .trim()
    .split("\n")
    .pop() as string;
  planes = await startControlPlanes({ binDir, names: [CLUSTER] });
  const config = new k8s.KubeConfig();
  config.loadFromFile(planes.kubeconfig);
  client = new MemberClient(CLUSTER, config, { retries: 2 });
  nodes = new NodeSimulator({
    cluster: CLUSTER,
    client,
    nodes: 2,
    allocatable: { cpu: "4", memory: "16Gi", pods: "110" },
  });
  await nodes.start();
  repo = tempDir("gitfleet-sync-order-e2e-");
}, 900_000);

afterAll(async () => {
  nodes?.stop();
  await planes?.stop();
  repo?.cleanup();
});

const job = (name: string, annotations: string, image: string) => `apiVersion: batch/v1
kind: Job
metadata:
  name: ${name}
  annotations:
${annotations}spec:
  backoffLimit: 0
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: main
          image: ${image}
          resources: {requests: {cpu: 10m, memory: 16Mi}}
`;

function fleet(version: string) {
  return fileTreeFromText({
    "fleet.yaml": "apiVersion: gitfleet.io/v1alpha1\nkind: Fleet\nmetadata:\n  name: t\n",
    [`clusters/${CLUSTER}.yaml`]: `apiVersion: gitfleet.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: ${CLUSTER}\nspec:\n  region: r1\n`,
    "apps/shop/app.yaml":
      "apiVersion: gitfleet.io/v1alpha1\nkind: App\nmetadata:\n  name: shop\nspec:\n  namespace: shop\n",
    "apps/shop/crd.yaml": `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
  annotations:
    argocd.argoproj.io/sync-wave: "-1"
spec:
  group: example.com
  scope: Namespaced
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
  versions:
    - name: v1
      served: true
      storage: true
      schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
`,
    "apps/shop/operator.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: storefront
spec:
  replicas: 2
  selector: {matchLabels: {app: storefront}}
  template:
    metadata: {labels: {app: storefront}}
    spec:
      containers:
        - name: main
          image: ghcr.io/example/storefront:${version}
          resources: {requests: {cpu: 50m, memory: 32Mi}}
`,
    "apps/shop/widget.yaml":
      'apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: gadget\n  annotations:\n    gitfleet.io/sync-wave: "1"\nspec:\n  size: 3\n',
    "apps/shop/migrate.yaml": job(
      "migrate",
      "    argocd.argoproj.io/hook: PreSync\n",
      `ghcr.io/example/migrate:${version}`,
    ),
    "apps/shop/smoke.yaml": job(
      "smoke",
      "    gitfleet.io/hook: PostSync\n    gitfleet.io/hook-delete-policy: HookSucceeded\n",
      "ghcr.io/example/smoke:1.0.0",
    ),
    "placements/shop.yaml": `apiVersion: gitfleet.io/v1alpha1\nkind: Placement\nmetadata:\n  name: shop\nspec:\n  apps: [shop]\n  replicaScheduling: {type: Divided}\n`,
  });
}

async function get(path: string): Promise<JsonMap | undefined> {
  return (await client.raw("GET", path).catch((error: unknown) => {
    if (/404|not found/i.test(String(error))) return undefined;
    throw error;
  })) as JsonMap | undefined;
}

const PATHS = {
  migrate: "/apis/batch/v1/namespaces/shop/jobs/migrate",
  crd: "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com",
  storefront: "/apis/apps/v1/namespaces/shop/deployments/storefront",
  widget: "/apis/example.com/v1/namespaces/shop/widgets/gadget",
  smoke: "/apis/batch/v1/namespaces/shop/jobs/smoke",
} as const;

const complete = (job: JsonMap | undefined) =>
  asList(asMap(job?.status).conditions).some(
    (c) => asMap(c).type === "Complete" && asMap(c).status === "True",
  );
// The hooks status/apps/ reports for the cluster (none before the first status commit).
function hooks(): JsonMap {
  try {
    return asMap(asMap(asMap(statusFile(repo.dir, appStatusPath("shop")).observed)[CLUSTER]).hooks);
  } catch {
    return {};
  }
}

// Each object the first time it is seen, with what stood then: the migration done, the replicas ready.
async function noteAppearances(order: string[], seenWhen: Map<string, JsonMap>): Promise<void> {
  for (const [name, path] of Object.entries(PATHS)) {
    if (order.includes(name) || !(await get(path))) continue;
    order.push(name);
    seenWhen.set(name, {
      migrateComplete: complete(await get(PATHS.migrate)),
      storefrontReady: asMap((await get(PATHS.storefront))?.status).readyReplicas ?? 0,
    });
  }
}

describe("hooks and sync waves on a real API server", () => {
  it("runs PreSync, then each wave once the one before is Healthy, then PostSync; a new version runs the migration again", async () => {
    createRepo(repo.dir, fleet("1.0.0"));
    const controller = await pushController(repo.dir, planes.kubeconfig);
    const order: string[] = [];
    const seenWhen = new Map<string, JsonMap>();
    const deadline = Date.now() + 240_000;
    while (Date.now() < deadline && hooks()["PostSync Job shop/smoke"] !== "Succeeded") {
      await controller.round();
      await noteAppearances(order, seenWhen);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(order).toEqual(["migrate", "crd", "storefront", "widget", "smoke"]);
    // Nothing of the app before the migration completed; the widget and the smoke test after the
    // storefront's replicas were ready.
    expect(seenWhen.get("crd")?.migrateComplete).toBe(true);
    expect(seenWhen.get("widget")?.storefrontReady).toBe(2);
    expect(seenWhen.get("smoke")?.storefrontReady).toBe(2);
    expect(hooks()).toEqual({
      "PreSync Job shop/migrate": "Succeeded",
      "PostSync Job shop/smoke": "Succeeded",
    });
    // HookSucceeded: the smoke test's Job is gone; the migration's stays until the next run replaces it.
    expect(await get(PATHS.smoke)).toBeUndefined();
    const first = String(asMap((await get(PATHS.migrate))?.metadata).uid);

    commitTree(repo.dir, fleet("1.1.0"), "storefront 1.1.0");
    let storefrontBeforeMigration = false;
    const image = async () =>
      String(
        asMap(asList(asMap(asMap(asMap((await get(PATHS.storefront))?.spec).template).spec).containers)[0])
          .image,
      );
    while (Date.now() < deadline && !(await image()).endsWith(":1.1.0")) {
      await controller.round();
      const migrate = await get(PATHS.migrate);
      const rerun =
        migrate !== undefined && String(asMap(migrate.metadata).uid) !== first && complete(migrate);
      if ((await image()).endsWith(":1.1.0") && !rerun) storefrontBeforeMigration = true;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect(await image()).toMatch(/:1\.1\.0$/);
    expect(storefrontBeforeMigration).toBe(false);
    const again = await get(PATHS.migrate);
    expect(String(asMap(again?.metadata).uid)).not.toBe(first);
    expect(String(asMap(asList(asMap(asMap(asMap(again?.spec).template).spec).containers)[0]).image)).toMatch(
      /migrate:1\.1\.0$/,
    );
  }, 600_000);

  it("never replaces what an operator made: a hook whose identity a live object holds is a conflict, the object keeps its uid", async () => {
    // What an operator made with kubectl create: a Namespace with a ConfigMap in it, and a ConfigMap.
    await client.raw("POST", "/api/v1/namespaces?fieldManager=kubectl-create", {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: "prod-db" },
    });
    await client.raw("POST", "/api/v1/namespaces/prod-db/configmaps?fieldManager=kubectl-create", {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "precious" },
      data: { data: "IMPORTANT" },
    });
    await client.raw("POST", "/api/v1/namespaces/shop/configmaps?fieldManager=kubectl-create", {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "settings" },
      data: { mode: "operator" },
    });
    const uidOf = async (path: string) => String(asMap((await get(path))?.metadata).uid);
    const before = {
      namespace: await uidOf("/api/v1/namespaces/prod-db"),
      precious: await uidOf("/api/v1/namespaces/prod-db/configmaps/precious"),
      settings: await uidOf("/api/v1/namespaces/shop/configmaps/settings"),
    };
    const ops = fileTreeFromText({
      ...Object.fromEntries(
        [...fleet("1.1.0")].map(([path, bytes]) => [path, new TextDecoder().decode(bytes)]),
      ),
      "apps/ops/app.yaml":
        "apiVersion: gitfleet.io/v1alpha1\nkind: App\nmetadata:\n  name: ops\nspec:\n  namespace: shop\n",
      "apps/ops/hooks.yaml":
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: prod-db\n  annotations:\n    argocd.argoproj.io/hook: PreSync\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  annotations:\n    argocd.argoproj.io/hook: PreSync\ndata:\n  mode: hook\n",
      "placements/ops.yaml":
        "apiVersion: gitfleet.io/v1alpha1\nkind: Placement\nmetadata:\n  name: ops\nspec:\n  apps: [ops]\n",
    });
    commitTree(repo.dir, ops, "ops: hooks");
    // The operator allows Namespace hooks, so only the sync's ownership check stands in the way.
    const controller = await pushController(
      repo.dir,
      planes.kubeconfig,
      {},
      {
        policy: { maxAppObjects: 10_000, hookKinds: new Set(["/Namespace"]) },
      },
    );
    const reported = () =>
      asMap(asMap(asMap(statusFile(repo.dir, appStatusPath("ops")).observed)[CLUSTER]).hooks);
    const deadline = Date.now() + 120_000;
    while (
      Date.now() < deadline &&
      !String(reported()["PreSync ConfigMap shop/settings"] ?? "").includes("conflict")
    ) {
      await controller.round();
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    for (let i = 0; i < 3; i++) await controller.round();
    expect(String(reported()["PreSync ConfigMap shop/settings"])).toContain(
      "conflict: ConfigMap shop/settings exists and is not a hook gitfleet made for app ops",
    );
    expect(String(reported()["PreSync Namespace prod-db"])).toContain("conflict: Namespace prod-db exists");
    expect({
      namespace: await uidOf("/api/v1/namespaces/prod-db"),
      precious: await uidOf("/api/v1/namespaces/prod-db/configmaps/precious"),
      settings: await uidOf("/api/v1/namespaces/shop/configmaps/settings"),
    }).toEqual(before);
    expect(asMap((await get("/api/v1/namespaces/shop/configmaps/settings"))?.data)).toEqual({
      mode: "operator",
    });
  }, 300_000);
});
