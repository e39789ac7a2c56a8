import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { asList, asMap, type JsonMap } from "../../src/apimachinery/json.js";
import { syncCluster } from "../../src/kube/cluster-sync.js";
import type { ClusterSyncInput } from "../../src/kube/cluster-sync-input.js";
import { detachApp } from "../../src/kube/detach-app.js";
import { MemberClient } from "../../src/kube/member-client.js";
import { syncRoleOf } from "../../src/model/sync-annotations.js";
import { memberClientConfig } from "../../src/sim/kubeconfig.js";
import { type SimulatedMember, startMember } from "../../src/sim/member-server.js";
import type { DesiredObject } from "../../src/sync/desired-objects.js";
import { type Inventory, inventoryFromData, textDigest } from "../../src/sync/inventory.js";
import type { PruneSettings } from "../../src/sync/prune-plan.js";
import { customResourceDefinition, OPEN_SPEC } from "../helpers/crd.js";

/** One cluster's sync against a simulated member, through HTTP only. */
let member: SimulatedMember;
let client: MemberClient;

beforeEach(async () => {
  member = await startMember({ name: "east" });
  client = new MemberClient("east", memberClientConfig(member), {
    retries: 1,
    backoffMs: 10,
    timeoutMs: 2000,
  });
});
afterEach(() => member.close());

const tracking = (app: string) => ({ "app.kubernetes.io/managed-by": "gitfleet", "gitfleet.io/app": app });

function desired(object: JsonMap, app = "web", policy: Partial<DesiredObject["policy"]> = {}): DesiredObject {
  const metadata = asMap(object.metadata);
  const apiVersion = String(object.apiVersion);
  const group = apiVersion.includes("/") ? apiVersion.split("/")[0] : "";
  const withLabels = {
    ...object,
    metadata: { ...metadata, labels: { ...asMap(metadata.labels), ...tracking(app) } },
  };
  return {
    identity: `${group}/${String(object.kind)}/${String(metadata.namespace ?? "")}/${String(metadata.name)}`,
    app,
    object: withLabels,
    role: syncRoleOf(asMap(metadata.annotations)),
    digest: textDigest(JSON.stringify(withLabels)),
    policy: { force: false, adopt: false, selfHeal: true, ...policy },
  };
}

const namespace = (name: string) =>
  desired({ apiVersion: "v1", kind: "Namespace", metadata: { name } }, "platform");
const configMap = (name: string, value = "1", app = "web") =>
  desired(
    { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: "shop" }, data: { value } },
    app,
  );
const deployment = (replicas: number, image = "web:1", policy: Partial<DesiredObject["policy"]> = {}) =>
  desired(
    {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "web", namespace: "shop" },
      spec: {
        replicas,
        selector: { matchLabels: { app: "web" } },
        template: { metadata: { labels: { app: "web" } }, spec: { containers: [{ name: "web", image }] } },
      },
    },
    "web",
    policy,
  );

const PRUNE_ALL: PruneSettings = { maxDeletionPercent: 100, allowedTokens: new Set(), appPrunes: () => true };

function sync(objects: DesiredObject[], extra: Partial<ClusterSyncInput> = {}) {
  return syncCluster({
    cluster: "east",
    client,
    sourceCommit: "c".repeat(40),
    desired: objects,
    prune: PRUNE_ALL,
    knownInventory: new Map(),
    ...extra,
  });
}

const CONTENT_TYPES = {
  json: "application/json",
  merge: "application/merge-patch+json",
  apply: "application/apply-patch+yaml",
} as const;

// A raw request to the member, as another client (a person, a controller) would make it.
function send(
  method: "POST" | "PATCH",
  path: string,
  body: unknown,
  type: keyof typeof CONTENT_TYPES = "json",
) {
  return fetch(`${member.url}${path}`, {
    method,
    headers: { "content-type": CONTENT_TYPES[type] },
    body: JSON.stringify(body),
  });
}

async function live(path: string): Promise<JsonMap | undefined> {
  const response = await fetch(`${member.url}${path}`);
  return response.status === 404 ? undefined : ((await response.json()) as JsonMap);
}

async function memberInventory(): Promise<Inventory> {
  const configMap = await live("/api/v1/namespaces/gitfleet-system/configmaps/gitfleet-inventory");
  return inventoryFromData(asMap(configMap?.data)).inventory;
}

const actions = (result: { objects: readonly { identity: string; action: string }[] }) =>
  Object.fromEntries(result.objects.map((o) => [o.identity, o.action]));

describe("syncCluster", () => {
  it("creates a namespace before what lives in it, records the inventory in the member, and leaves unchanged objects alone", async () => {
    const objects = [deployment(2), configMap("settings"), namespace("shop")];
    const first = await sync(objects);
    expect(first.reachable).toBe(true);
    expect(first.objects.map((o) => o.identity)).toEqual([
      "/Namespace//shop",
      "/ConfigMap/shop/settings",
      "apps/Deployment/shop/web",
    ]);
    expect(new Set(first.objects.map((o) => o.action))).toEqual(new Set(["created"]));
    const inventory = await memberInventory();
    expect([...inventory.keys()].sort()).toEqual([
      "/ConfigMap/shop/settings",
      "/Namespace//shop",
      "apps/Deployment/shop/web",
    ]);
    const deploymentLive = await live("/apis/apps/v1/namespaces/shop/deployments/web");
    expect(inventory.get("apps/Deployment/shop/web")?.uid).toBe(asMap(deploymentLive?.metadata).uid);
    const managers = (asMap(deploymentLive?.metadata).managedFields as JsonMap[]).map((m) => m.manager);
    expect(managers).toContain("gitfleet");

    const version = asMap(deploymentLive?.metadata).resourceVersion;
    const second = await sync(objects);
    expect(new Set(second.objects.map((o) => o.action))).toEqual(new Set(["unchanged"]));
    expect(
      asMap((await live("/apis/apps/v1/namespaces/shop/deployments/web"))?.metadata).resourceVersion,
    ).toBe(version);
  });

  it("applies a change, reports desired replicas, and prunes what left the rendered tree", async () => {
    await sync([namespace("shop"), configMap("a"), configMap("b"), deployment(2)]);
    const result = await sync([namespace("shop"), configMap("a", "2"), deployment(3)]);
    expect(actions(result)).toMatchObject({
      "/ConfigMap/shop/a": "configured",
      "apps/Deployment/shop/web": "configured",
    });
    expect(result.objects.find((o) => o.identity === "apps/Deployment/shop/web")).toMatchObject({
      desiredReplicas: 3,
    });
    expect(result.pruned).toEqual([{ identity: "/ConfigMap/shop/b", app: "web", outcome: "deleted" }]);
    expect(await live("/api/v1/namespaces/shop/configmaps/b")).toBeUndefined();
    expect(asMap((await live("/api/v1/namespaces/shop/configmaps/a"))?.data).value).toBe("2");
    expect((await memberInventory()).has("/ConfigMap/shop/b")).toBe(false);
  });

  it("never deletes a hand-made object with gitfleet's labels that is not in the inventory, and refuses to take it over", async () => {
    await sync([namespace("shop"), configMap("a")]);
    const handMade = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "handmade", namespace: "shop", labels: tracking("web") },
    };
    await send("POST", `/api/v1/namespaces/shop/configmaps`, handMade);
    const result = await sync([namespace("shop"), configMap("a")]);
    expect(result.pruned).toEqual([]);
    expect(await live("/api/v1/namespaces/shop/configmaps/handmade")).toBeDefined();

    const takeOver = await sync([namespace("shop"), configMap("a"), configMap("handmade", "mine")]);
    const refused = takeOver.objects.find((o) => o.identity === "/ConfigMap/shop/handmade");
    expect(refused).toMatchObject({ action: "conflict" });
    expect(refused?.error).toMatch(/gitfleet did not create it; set conflictResolution: Adopt/);
    expect(asMap((await live("/api/v1/namespaces/shop/configmaps/handmade"))?.data).value).toBeUndefined();
    // Refused objects are not in the inventory, so removing them from the render deletes nothing.
    expect((await memberInventory()).has("/ConfigMap/shop/handmade")).toBe(false);
  });

  it("adopts an existing object without recreating it when the Placement says Adopt", async () => {
    await sync([namespace("shop")]);
    await send("POST", `/apis/apps/v1/namespaces/shop/deployments`, {
      ...deployment(2).object,
      metadata: { name: "web", namespace: "shop" },
    });
    const uid = asMap((await live("/apis/apps/v1/namespaces/shop/deployments/web"))?.metadata).uid;
    const result = await sync([namespace("shop"), deployment(2, "web:1", { adopt: true })]);
    expect(actions(result)["apps/Deployment/shop/web"]).toBe("configured");
    const adopted = await live("/apis/apps/v1/namespaces/shop/deployments/web");
    expect(asMap(adopted?.metadata).uid).toBe(uid);
    expect(asMap(asMap(adopted?.metadata).labels)["app.kubernetes.io/managed-by"]).toBe("gitfleet");
    expect((await memberInventory()).get("apps/Deployment/shop/web")?.uid).toBe(uid);
  });

  it("reports a conflict with another field manager, naming it, and takes the field only with force", async () => {
    await sync([namespace("shop"), deployment(2)]);
    const response = await send(
      "PATCH",
      `/apis/apps/v1/namespaces/shop/deployments/web?fieldManager=hpa-controller&force=true`,
      {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: "web", namespace: "shop" },
        spec: { replicas: 7 },
      },
      "apply",
    );
    expect(response.status).toBe(200);
    const result = await sync([namespace("shop"), deployment(4)]);
    const web = result.objects.find((o) => o.identity === "apps/Deployment/shop/web");
    expect(web?.action).toBe("conflict");
    expect(web?.error).toMatch(/hpa-controller/);
    expect(asMap((await live("/apis/apps/v1/namespaces/shop/deployments/web"))?.spec).replicas).toBe(7);

    const forced = await sync([namespace("shop"), deployment(4, "web:1", { force: true })]);
    expect(actions(forced)["apps/Deployment/shop/web"]).toBe("configured");
    expect(asMap((await live("/apis/apps/v1/namespaces/shop/deployments/web"))?.spec).replicas).toBe(4);
  });

  it("stops applying replicas of a workload a member-side HPA scales", async () => {
    await sync([namespace("shop"), deployment(2)]);
    await send("POST", `/apis/autoscaling/v2/namespaces/shop/horizontalpodautoscalers`, {
      apiVersion: "autoscaling/v2",
      kind: "HorizontalPodAutoscaler",
      metadata: { name: "web", namespace: "shop" },
      spec: {
        scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: "web" },
        minReplicas: 2,
        maxReplicas: 10,
      },
    });
    const scale = await send(
      "PATCH",
      `/apis/apps/v1/namespaces/shop/deployments/web/scale?fieldManager=hpa`,
      { spec: { replicas: 6 } },
      "merge",
    );
    expect(scale.status).toBe(200);
    const result = await sync([namespace("shop"), deployment(2, "web:2")]);
    expect(result.objects.find((o) => o.identity === "apps/Deployment/shop/web")).toMatchObject({
      action: "configured",
      desiredReplicas: 6,
    });
    const web = await live("/apis/apps/v1/namespaces/shop/deployments/web");
    expect(asMap(web?.spec).replicas).toBe(6);
    const containers = asMap(asMap(asMap(web?.spec).template).spec).containers as JsonMap[];
    expect(containers[0]?.image).toBe("web:2");
    // Nothing to correct on the next pass: replicas are the autoscaler's.
    const again = await sync([namespace("shop"), deployment(2, "web:2")]);
    expect(again.objects.find((o) => o.identity === "apps/Deployment/shop/web")?.action).toBe("unchanged");
  });

  it("creates a workload an HPA will scale with the rendered replicas, then keeps the member's count", async () => {
    const hpa = desired({
      apiVersion: "autoscaling/v2",
      kind: "HorizontalPodAutoscaler",
      metadata: { name: "web", namespace: "shop" },
      spec: { scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: "web" }, maxReplicas: 10 },
    });
    await sync([namespace("shop"), deployment(3), hpa]);
    expect(asMap((await live("/apis/apps/v1/namespaces/shop/deployments/web"))?.spec).replicas).toBe(3);
    // gitfleet still owns replicas (the autoscaler has not acted): a new total is not applied, nor is the field dropped.
    const result = await sync([namespace("shop"), deployment(5, "web:2"), hpa]);
    expect(result.objects.find((o) => o.identity === "apps/Deployment/shop/web")).toMatchObject({
      action: "configured",
      desiredReplicas: 3,
    });
    expect(asMap((await live("/apis/apps/v1/namespaces/shop/deployments/web"))?.spec).replicas).toBe(3);
  });

  it("corrects drift, or only reports it when selfHeal is off", async () => {
    await sync([namespace("shop"), configMap("a", "1")]);
    const edit = () =>
      send(
        "PATCH",
        `/api/v1/namespaces/shop/configmaps/a?fieldManager=kubectl-edit`,
        { data: { value: "by hand" } },
        "merge",
      );
    await edit();
    const healed = await sync([namespace("shop"), configMap("a", "1")]);
    expect(healed.objects.find((o) => o.identity === "/ConfigMap/shop/a")).toMatchObject({
      action: "corrected",
      drift: ["data.value"],
    });
    expect(asMap((await live("/api/v1/namespaces/shop/configmaps/a"))?.data).value).toBe("1");

    await edit();
    const noHeal = { ...configMap("a", "1"), policy: { force: false, adopt: false, selfHeal: false } };
    const reported = await sync([namespace("shop"), noHeal]);
    expect(reported.objects.find((o) => o.identity === "/ConfigMap/shop/a")).toMatchObject({
      action: "drifted",
      drift: ["data.value"],
    });
    expect(asMap((await live("/api/v1/namespaces/shop/configmaps/a"))?.data).value).toBe("by hand");
  });

  it("blocks a prune over the budget with a token, and deletes once the token is allowed", async () => {
    const all = [namespace("shop"), configMap("a"), configMap("b"), configMap("c"), configMap("d")];
    const budget = { maxDeletionPercent: 30, allowedTokens: new Set<string>(), appPrunes: () => true };
    await sync(all, { prune: budget });
    const blocked = await sync([namespace("shop"), configMap("a")], { prune: budget });
    expect(blocked.pruned).toEqual([]);
    expect(blocked.pruneBlocked?.reasons).toEqual([
      "would delete 3 of 5 objects (60%), more than the 30% budget",
    ]);
    expect(await live("/api/v1/namespaces/shop/configmaps/b")).toBeDefined();
    expect((await memberInventory()).size).toBe(5);
    const token = blocked.pruneBlocked?.token ?? "";
    const allowed = await sync([namespace("shop"), configMap("a")], {
      prune: { ...budget, allowedTokens: new Set([token]) },
    });
    expect(allowed.pruned.map((p) => p.outcome)).toEqual(["deleted", "deleted", "deleted"]);
    expect((await memberInventory()).size).toBe(2);
  });

  it("keeps an object marked gitfleet.io/prune: disabled, and one replaced by a look-alike", async () => {
    await sync([namespace("shop"), configMap("keep"), configMap("replaced"), configMap("stay")]);
    await send(
      "PATCH",
      `/api/v1/namespaces/shop/configmaps/keep`,
      { metadata: { annotations: { "gitfleet.io/prune": "disabled" } } },
      "merge",
    );
    await fetch(`${member.url}/api/v1/namespaces/shop/configmaps/replaced`, { method: "DELETE" });
    await send("POST", `/api/v1/namespaces/shop/configmaps`, {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "replaced", namespace: "shop", labels: tracking("web") },
    });
    const result = await sync([namespace("shop"), configMap("stay")]);
    expect(Object.fromEntries(result.pruned.map((p) => [p.identity, p.outcome]))).toEqual({
      "/ConfigMap/shop/keep": "prune-disabled",
      "/ConfigMap/shop/replaced": "replaced",
    });
    expect(await live("/api/v1/namespaces/shop/configmaps/keep")).toBeDefined();
    expect(await live("/api/v1/namespaces/shop/configmaps/replaced")).toBeDefined();
    expect((await memberInventory()).size).toBe(2);
  });

  it("applies a CRD, waits until it is served, then applies its objects in the same sync", async () => {
    const crd = desired(
      // Its spec kept whole: a schema that names no field prunes every one, as a real server does.
      customResourceDefinition({
        group: "games.example.com",
        kind: "Arena",
        plural: "arenas",
        singular: "arena",
        schema: OPEN_SPEC,
      }),
      "platform",
    );
    const arena = desired({
      apiVersion: "games.example.com/v1",
      kind: "Arena",
      metadata: { name: "main", namespace: "shop" },
      spec: { size: 3 },
    });
    const result = await sync([arena, namespace("shop"), crd]);
    expect(result.objects.map((o) => [o.identity, o.action, o.health.status])).toEqual([
      ["apiextensions.k8s.io/CustomResourceDefinition//arenas.games.example.com", "created", "Healthy"],
      ["/Namespace//shop", "created", "Healthy"],
      ["games.example.com/Arena/shop/main", "created", "Healthy"],
    ]);
    expect(asMap((await live("/apis/games.example.com/v1/namespaces/shop/arenas/main"))?.spec).size).toBe(3);
  });

  it("detaches an app: objects keep running without gitfleet's labels or ownership, and are never pruned", async () => {
    await member.close();
    member = await startMember({ name: "east", world: { readyDelayMs: 10 } });
    client = new MemberClient("east", memberClientConfig(member), {
      retries: 1,
      backoffMs: 10,
      timeoutMs: 2000,
    });
    await sync([namespace("shop"), deployment(2), configMap("a")]);
    const podUids = async () => {
      const pods = asMap(await live("/api/v1/namespaces/shop/pods"));
      return (pods.items as JsonMap[]).map((p) => String(asMap(p.metadata).uid)).sort();
    };
    let before: string[] = [];
    for (let i = 0; i < 100 && before.length < 2; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      before = await podUids();
    }
    expect(before).toHaveLength(2);
    const result = await detachApp({
      cluster: "east",
      client,
      app: "web",
      sourceCommit: "c".repeat(40),
      knownInventory: new Map(),
    });
    expect(result.objects.map((o) => [o.identity, o.outcome]).sort()).toEqual([
      ["/ConfigMap/shop/a", "detached"],
      ["apps/Deployment/shop/web", "detached"],
    ]);
    const web = await live("/apis/apps/v1/namespaces/shop/deployments/web");
    const metadata = asMap(web?.metadata);
    expect(asMap(metadata.labels)["app.kubernetes.io/managed-by"]).toBeUndefined();
    expect(asMap(metadata.labels)["gitfleet.io/app"]).toBeUndefined();
    expect(asMap(metadata.labels).app).toBeUndefined();
    expect(asList(metadata.managedFields).map((m) => asMap(m).manager)).not.toContain("gitfleet");
    expect(asMap(web?.spec).replicas).toBe(2);
    expect([...(await memberInventory()).keys()]).toEqual(["/Namespace//shop"]);
    // The app leaves the rendered tree: nothing of it is pruned, no pod restarted.
    const after = await sync([namespace("shop")]);
    expect(after.pruned).toEqual([]);
    expect(await live("/apis/apps/v1/namespaces/shop/deployments/web")).toBeDefined();
    expect(await podUids()).toEqual(before);
  });

  it("holds an app its rollout has not reached, and still makes the namespace other apps need from it", async () => {
    // The namespace belongs to app "platform", whose rollout has not reached this cluster yet.
    const result = await sync([namespace("shop"), configMap("a")], {
      held: new Map([["platform", { reason: "waiting for west to be Healthy", by: "rollout" as const }]]),
    });
    expect(result.objects.find((o) => o.identity === "/Namespace//shop")).toMatchObject({
      action: "held",
      held: "waiting for west to be Healthy",
      heldBy: "rollout",
    });
    expect(result.objects.find((o) => o.identity === "/ConfigMap/shop/a")?.action).toBe("created");
    // Made bare, not recorded: the held Namespace joins the inventory when its rollout arrives.
    expect((await memberInventory()).has("/Namespace//shop")).toBe(false);
    const arrived = await sync([namespace("shop"), configMap("a")]);
    expect(arrived.objects.find((o) => o.identity === "/Namespace//shop")?.action).toBe("configured");
    expect((await memberInventory()).has("/Namespace//shop")).toBe(true);
  });

  it("reports an unreachable member and changes nothing", async () => {
    await member.faults.down();
    const result = await sync([namespace("shop")]);
    expect(result.reachable).toBe(false);
    expect(result.error).toMatch(/^east did not answer: connection refused/);
    await member.faults.up();
  });
});
