import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Inventory, InventoryEntry } from "../../src/sync/inventory.js";
import { type PruneSettings, parseAllowPrune, planPrune, pruneToken } from "../../src/sync/prune-plan.js";

const entry = (
  kind: string,
  name: string,
  namespace: string | undefined = "shop",
  app = "web",
): InventoryEntry => {
  const apiVersion =
    kind === "Deployment"
      ? "apps/v1"
      : kind === "CustomResourceDefinition"
        ? "apiextensions.k8s.io/v1"
        : "v1";
  const group = apiVersion.includes("/") ? apiVersion.split("/")[0] : "";
  return {
    identity: `${group}/${kind}/${namespace ?? ""}/${name}`,
    apiVersion,
    kind,
    namespace,
    name,
    app,
    uid: `uid-${name}`,
    digest: "d",
  };
};

const inventoryOf = (...entries: InventoryEntry[]): Inventory => new Map(entries.map((e) => [e.identity, e]));

const settings = (overrides: Partial<PruneSettings> = {}): PruneSettings => ({
  maxDeletionPercent: 30,
  allowedTokens: new Set(),
  appPrunes: () => true,
  ...overrides,
});

// Ten objects: a namespace and nine of app "web" or "api".
const TEN = inventoryOf(
  entry("Namespace", "shop", undefined, "platform"),
  ...Array.from({ length: 6 }, (_, i) => entry("ConfigMap", `web-${i}`)),
  ...Array.from({ length: 3 }, (_, i) => entry("Deployment", `api-${i}`, "shop", "api")),
);
const all = new Set(TEN.keys());
const without = (...names: string[]) =>
  new Set([...all].filter((identity) => !names.some((name) => identity.endsWith(`/${name}`))));

describe("planPrune", () => {
  it("deletes only inventory objects that left the rendered tree, namespaced before cluster-scoped", () => {
    const plan = planPrune("east", TEN, without("api-0", "web-5"), settings());
    expect(plan.delete.map((e) => e.name)).toEqual(["web-5", "api-0"]);
    expect(plan.blocked).toBeUndefined();
  });

  it("deletes nothing when everything is still rendered", () => {
    expect(planPrune("east", TEN, all, settings())).toEqual({ delete: [], retained: [] });
  });

  it("blocks a deletion set over the budget, with a token and the reason", () => {
    const plan = planPrune("east", TEN, without("web-0", "web-1", "web-2", "web-3"), settings());
    expect(plan.delete).toEqual([]);
    expect(plan.blocked?.reasons).toEqual(["would delete 4 of 10 objects (40%), more than the 30% budget"]);
    expect(plan.blocked?.token).toMatch(/^prune-[0-9a-f]{12}$/);
    expect(plan.blocked?.entries).toHaveLength(4);
  });

  it("blocks any Namespace, PVC or CRD however small the share", () => {
    const inventory = inventoryOf(...[...TEN.values()], entry("PersistentVolumeClaim", "data"));
    const plan = planPrune(
      "east",
      inventory,
      new Set([...inventory.keys()].filter((i) => !i.endsWith("/data"))),
      settings(),
    );
    expect(plan.blocked?.reasons).toEqual(["would delete PersistentVolumeClaim shop/data"]);
  });

  it("lets the exact blocked set through once its token is allowed, and no other set", () => {
    const desired = without("web-0", "web-1", "web-2", "web-3");
    const token = planPrune("east", TEN, desired, settings()).blocked?.token ?? "";
    const allowed = planPrune("east", TEN, desired, settings({ allowedTokens: new Set([token]) }));
    expect(allowed.delete).toHaveLength(4);
    const other = planPrune(
      "east",
      TEN,
      without("web-0", "web-1", "web-2", "web-4"),
      settings({ allowedTokens: new Set([token]) }),
    );
    expect(other.delete).toEqual([]);
    expect(other.blocked?.token).not.toBe(token);
    expect(
      planPrune("west", TEN, desired, settings({ allowedTokens: new Set([token]) })).blocked,
    ).toBeDefined();
  });

  it("retains the objects of apps that do not prune", () => {
    const plan = planPrune(
      "east",
      TEN,
      without("api-0", "web-0"),
      settings({ appPrunes: (app) => app !== "api" }),
    );
    expect(plan.delete.map((e) => e.name)).toEqual(["web-0"]);
    expect(plan.retained.map((e) => e.name)).toEqual(["api-0"]);
  });

  it.each([
    // deleting, of, budget %, blocked
    [3, 10, 30, false],
    [4, 10, 30, true],
    [2, 10, 30, false],
    [1, 2, 50, false],
    [2, 3, 66, true],
    [2, 3, 67, false],
    // Shares floating point puts just above the budget: (11 / 20) * 100 is 55.00000000000001.
    [11, 20, 55, false],
    [12, 20, 55, true],
    [7, 25, 28, false],
    [8, 25, 28, true],
    [1, 1, 100, false],
    [1, 1, 99, true],
  ])("deleting %i of %i at a %i%% budget: blocked %s", (count, size, percent, blocked) => {
    const inventory = inventoryOf(...Array.from({ length: size }, (_, i) => entry("ConfigMap", `c${i}`)));
    const desired = new Set([...inventory.keys()].slice(count));
    const plan = planPrune("east", inventory, desired, settings({ maxDeletionPercent: percent }));
    expect(plan.blocked !== undefined).toBe(blocked);
    expect(plan.delete).toHaveLength(blocked ? 0 : count);
  });

  it("does not count a failed-over app's objects against the budget", () => {
    const leaving = without("web-0", "web-1", "web-2", "web-3");
    const failedOver = (cluster: string, app: string) => cluster === "east" && app === "web";
    const plan = planPrune("east", TEN, leaving, settings({ failedOver }));
    expect(plan.blocked).toBeUndefined();
    expect(plan.delete).toHaveLength(4);
    // The same deletion where web did not fail over is over the budget.
    expect(planPrune("west", TEN, leaving, settings({ failedOver })).blocked?.reasons).toEqual([
      "would delete 4 of 10 objects (40%), more than the 30% budget",
    ]);
  });

  it("deletes namespaced objects first, then cluster-scoped ones, then Namespaces, CRDs last", () => {
    const clusterScoped = (kind: string, name: string, group: string): InventoryEntry => ({
      ...entry(kind, name),
      apiVersion: group ? `${group}/v1` : "v1",
      namespace: undefined,
      identity: `${group}/${kind}//${name}`,
    });
    const crd = clusterScoped("CustomResourceDefinition", "widgets.example.com", "apiextensions.k8s.io");
    const namespace = clusterScoped("Namespace", "team", "");
    const role = clusterScoped("ClusterRole", "reader", "rbac.authorization.k8s.io");
    const volume = clusterScoped("ValidatingWebhookConfiguration", "data", "admissionregistration.k8s.io");
    const config = entry("ConfigMap", "settings");
    const deployment = entry("Deployment", "api");
    const inventory = inventoryOf(crd, namespace, role, volume, config, deployment);
    const plan = planPrune("east", inventory, new Set(), settings({ maxDeletionPercent: 100 }));
    expect(plan.blocked?.reasons).toEqual([
      "would delete Namespace team, CustomResourceDefinition widgets.example.com",
    ]);
    const allowed = planPrune(
      "east",
      inventory,
      new Set(),
      settings({ maxDeletionPercent: 100, allowedTokens: new Set([plan.blocked?.token ?? ""]) }),
    );
    expect(allowed.delete.map((e) => e.name)).toEqual([
      "settings",
      "api",
      "data",
      "reader",
      "team",
      "widgets.example.com",
    ]);
  });

  it.each([
    ["a hosted control plane's Secret", "v1", "gitfleet-cp-pc-1", true],
    ["a shared etcd's Secret", "v1", "gitfleet-etcd-main", true],
    ["an app's Secret", "v1", "web", false],
    ["a Secret kind of another group", "example.com/v1", "gitfleet-cp-pc-1", false],
    ["a hosted control plane's ConfigMap", "v1", "gitfleet-cp-pc-1", false, "ConfigMap"],
  ])("protects %s whatever the share: %s", (_case, apiVersion, app, blocked, kind = "Secret") => {
    const group = apiVersion.includes("/") ? apiVersion.split("/")[0] : "";
    const secret: InventoryEntry = {
      ...entry(kind, "tls", "pc-1", app),
      apiVersion,
      identity: `${group}/${kind}/pc-1/tls`,
    };
    const inventory = inventoryOf(secret, ...[...TEN.values()]);
    const plan = planPrune("east", inventory, all, settings());
    expect(plan.blocked !== undefined).toBe(blocked);
    expect(plan.delete).toHaveLength(blocked ? 0 : 1);
  });

  it("a larger budget allows more", () => {
    const plan = planPrune(
      "east",
      TEN,
      without("web-0", "web-1", "web-2", "web-3"),
      settings({ maxDeletionPercent: 50 }),
    );
    expect(plan.delete).toHaveLength(4);
  });

  it("never deletes what is rendered or what is not in the inventory (property)", () => {
    const names = fc.uniqueArray(fc.stringMatching(/^[a-z]{1,6}$/), { minLength: 1, maxLength: 30 });
    fc.assert(
      fc.property(
        names,
        fc.array(fc.boolean(), { maxLength: 30 }),
        fc.integer({ min: 0, max: 100 }),
        (list, keep, percent) => {
          const inventory = inventoryOf(...list.map((name) => entry("ConfigMap", name)));
          const desired = new Set([
            ...list.filter((_, i) => keep[i] ?? true).map((name) => entry("ConfigMap", name).identity),
            entry("ConfigMap", "not-in-inventory-x").identity,
          ]);
          const plan = planPrune("east", inventory, desired, settings({ maxDeletionPercent: percent }));
          for (const deleted of plan.delete) {
            expect(inventory.has(deleted.identity)).toBe(true);
            expect(desired.has(deleted.identity)).toBe(false);
          }
          const leaving = [...inventory.keys()].filter((identity) => !desired.has(identity));
          if (plan.blocked) expect(plan.delete).toEqual([]);
          else expect(plan.delete.length).toBe(leaving.length);
          // Both ways, in whole numbers: over the budget blocks, at or under it deletes (ConfigMaps
          // only: nothing protected, nothing adopted).
          if (leaving.length * 100 > percent * inventory.size) expect(plan.blocked).toBeDefined();
          else expect(plan.blocked).toBeUndefined();
        },
      ),
    );
  });
});

describe("pruneToken and parseAllowPrune", () => {
  it("binds a token to the cluster and to the source commit the deletion was reviewed against", () => {
    const set = [entry("ConfigMap", "a")];
    const token = pruneToken("east", set, "c0ffee");
    expect(pruneToken("east", set, "c0ffee")).toBe(token);
    expect(pruneToken("west", set, "c0ffee")).not.toBe(token);
    expect(pruneToken("east", set, "decade")).not.toBe(token);
    expect(pruneToken("east", set)).not.toBe(token);
  });

  it("a token tells identities apart however their characters split", () => {
    const split = (first: string, second: string) => [
      { ...entry("ConfigMap", "x"), identity: first },
      { ...entry("ConfigMap", "y"), identity: second },
    ];
    expect(pruneToken("east", split("/ConfigMap/shop/ab", "c"))).not.toBe(
      pruneToken("east", split("/ConfigMap/shop/a", "bc")),
    );
  });

  it("names every adopted object a blocked deletion would remove, comma-separated", () => {
    const adopted = (name: string) => ({ ...entry("ConfigMap", name), adopted: true });
    const inventory = inventoryOf(
      ...Array.from({ length: 10 }, (_, i) => entry("ConfigMap", `keep-${i}`)),
      adopted("a"),
      adopted("b"),
    );
    const rendered = new Set([...inventory.keys()].filter((id) => id.includes("keep-")));
    const plan = planPrune("east", inventory, rendered, settings());
    expect(plan.blocked?.reasons).toContain(
      "would delete what gitfleet adopted and did not create: ConfigMap shop/a, ConfigMap shop/b",
    );
  });

  it("a token does not depend on the order of the set", () => {
    const a = entry("ConfigMap", "a");
    const b = entry("ConfigMap", "b");
    expect(pruneToken("east", [a, b])).toBe(pruneToken("east", [b, a]));
    expect(pruneToken("east", [a, b])).not.toBe(pruneToken("east", [a]));
  });

  it.each([
    [undefined, []],
    ["", []],
    ["prune-abc", ["prune-abc"]],
    ["prune-a, prune-b  prune-c", ["prune-a", "prune-b", "prune-c"]],
  ] as const)("%j → %j", (text, tokens) => {
    expect(parseAllowPrune(text)).toEqual(tokens);
  });
});
