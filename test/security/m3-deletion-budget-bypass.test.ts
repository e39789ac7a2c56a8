import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadFleet } from "../../src/load/load-fleet.js";
import { formatProblem } from "../../src/model/problem.js";
import { planChange } from "../../src/plan/plan.js";
import { renderFleet } from "../../src/render/render-fleet.js";
import { type SimulatedMember, startMember } from "../../src/sim/member-server.js";
import { pruneSettings } from "../../src/sync/desired-objects.js";
import type { Inventory, InventoryEntry } from "../../src/sync/inventory.js";
import { type PruneSettings, planPrune } from "../../src/sync/prune-plan.js";
import { appConfigMap, syncMember } from "../helpers/member-sync.js";
import { minimalFleetWith } from "../helpers/minimal-fleet.js";

/**
 * M3 (security audit): prune tokens were a hash of the cluster and the set, accepted from any app's
 * syncPolicy — so a pull request could delete other apps' objects with a token it computed itself —
 * and a drain or NoExecute taint written in a Cluster file deleted everything with no token at all.
 * Now an app's token covers only that app's objects, fleet-wide tokens live in fleet.yaml, every
 * token is bound to the source commit the cluster ran when the deletion was reviewed, and drains
 * and taints written by people go through the budget (and the plan says so).
 */

const entry = (app: string, name: string): InventoryEntry => ({
  identity: `/ConfigMap/shop/${name}`,
  apiVersion: "v1",
  kind: "ConfigMap",
  namespace: "shop",
  name,
  app,
  uid: `uid-${name}`,
  digest: "",
});
const inventoryOf = (...entries: InventoryEntry[]): Inventory => new Map(entries.map((e) => [e.identity, e]));
// Apps a and b have three objects each, c one: removing a and b deletes 6 of 7 (86%).
const INVENTORY = inventoryOf(
  ...["a1", "a2", "a3"].map((n) => entry("a", n)),
  ...["b1", "b2", "b3"].map((n) => entry("b", n)),
  entry("c", "c1"),
);
const KEEP = new Set(["/ConfigMap/shop/c1"]);
const BASE = "b".repeat(40);
const settings = (extra: Partial<PruneSettings> = {}): PruneSettings => ({
  maxDeletionPercent: 30,
  allowedTokens: new Set(),
  appPrunes: () => true,
  ...extra,
});

// The prune settings of a fleet whose app c lists `token` in its syncPolicy, as the audit's pull request did.
function attackerSettings(token: string): PruneSettings {
  const { model, problems } = loadFleet(
    minimalFleetWith({
      "apps/c/app.yaml": `apiVersion: gitfleet.io/v1alpha1\nkind: App\nmetadata:\n  name: c\nspec:\n  namespace: shop\n  syncPolicy:\n    allowPrune: ${token}\n`,
      "apps/c/config.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c1\ndata:\n  k: v\n",
    }),
  );
  if (!model) throw new Error(problems.map(formatProblem).join("\n"));
  return pruneSettings(model);
}

describe("M3: prune tokens are scoped and bound", () => {
  const token = (planPrune("east", INVENTORY, KEEP, settings(), BASE).blocked?.token ?? "") as string;

  it("the audit's bypass: a token in app c's syncPolicy does not delete apps a's and b's objects", () => {
    const plan = planPrune("east", INVENTORY, KEEP, attackerSettings(token), BASE);
    expect(plan.delete).toEqual([]);
    expect(plan.blocked?.token).toBe(token);
  });

  it("one app's token is not enough for a set that spans two apps; both apps' tokens are", () => {
    const onlyA = settings({ appTokens: new Map([["a", new Set([token])]]) });
    expect(planPrune("east", INVENTORY, KEEP, onlyA, BASE).delete).toEqual([]);
    const both = settings({
      appTokens: new Map([
        ["a", new Set([token])],
        ["b", new Set([token])],
      ]),
    });
    expect(planPrune("east", INVENTORY, KEEP, both, BASE).delete).toHaveLength(6);
  });

  it("fleet.yaml's token allows the set", () => {
    expect(
      planPrune("east", INVENTORY, KEEP, settings({ allowedTokens: new Set([token]) }), BASE).delete,
    ).toHaveLength(6);
  });

  it("a token reviewed against one source commit does not allow the same set after the cluster moved on", () => {
    const later = planPrune(
      "east",
      INVENTORY,
      KEEP,
      settings({ allowedTokens: new Set([token]) }),
      "d".repeat(40),
    );
    expect(later.delete).toEqual([]);
    expect(later.blocked?.token).not.toBe(token);
  });

  it("app-level tokens come only from each app's own syncPolicy", () => {
    const { model, problems } = loadFleet(
      minimalFleetWith({
        "apps/web/app.yaml":
          "apiVersion: gitfleet.io/v1alpha1\nkind: App\nmetadata:\n  name: web\nspec:\n  namespace: shop\n  syncPolicy:\n    allowPrune: prune-0123456789ab\n",
      }),
    );
    if (!model) throw new Error(problems.map(formatProblem).join("\n"));
    const built = pruneSettings(model);
    expect([...built.allowedTokens]).toEqual([]);
    expect([...(built.appTokens?.get("web") ?? [])]).toEqual(["prune-0123456789ab"]);
  });
});

describe("M3: through a member", () => {
  let member: SimulatedMember;
  beforeEach(async () => {
    member = await startMember({ name: "east" });
  });
  afterEach(() => member.close());

  it("an app's own token, computed in the same commit, cannot delete another app's objects; the reviewed fleet token can", async () => {
    const all = [
      ...["a1", "a2", "a3"].map((n) => appConfigMap(n, "a")),
      ...["b1", "b2", "b3"].map((n) => appConfigMap(n, "b")),
      appConfigMap("c1", "c"),
    ];
    await syncMember(member, all, { sourceCommit: BASE });
    const first = await syncMember(member, all.slice(6), { sourceCommit: "e".repeat(40) });
    const token = first.pruneBlocked?.token as string;
    expect(token).toMatch(/^prune-/);
    // The attacker's own app lists the token: nothing is deleted, the prune stays blocked.
    const attacker = await syncMember(member, all.slice(6), {
      sourceCommit: "f".repeat(40),
      prune: attackerSettings(token),
    });
    expect(attacker.pruned).toEqual([]);
    expect(attacker.pruneBlocked?.token).toBe(token);
    const allowed = await syncMember(member, all.slice(6), {
      sourceCommit: "f".repeat(40),
      prune: settings({ allowedTokens: new Set([token]) }),
    });
    expect(allowed.pruned.filter((p) => p.outcome === "deleted")).toHaveLength(6);
  });
});

describe("M3: drains and NoExecute taints written in Cluster files", () => {
  const DRAINED = (spec: string) =>
    minimalFleetWith({
      "placements/web.yaml":
        "apiVersion: gitfleet.io/v1alpha1\nkind: Placement\nmetadata:\n  name: web\nspec:\n  apps: [web]\n  replicaScheduling:\n    type: Divided\n  failover:\n    cluster:\n      tolerationSeconds: 0\n      purgeMode: Directly\n",
      "clusters/west.yaml": `apiVersion: gitfleet.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: west\n  labels:\n    env: prod\nspec:\n  provider: gcp\n  region: eu-west\n${spec}`,
    });

  it.each([
    ["drain: true", "  drain: true\n"],
    ["a NoExecute taint", "  taints:\n    - {key: maintenance, effect: NoExecute}\n"],
  ])("%s: the plan shows the budget's verdict, and the failover exemption does not apply", (_name, spec) => {
    const base = loadFleet(DRAINED(""));
    const head = loadFleet(DRAINED(spec));
    if (!base.model || !head.model) throw new Error("invalid");
    const before = renderFleet(base.model);
    const after = renderFleet(head.model, { previous: before });
    const settingsOf = pruneSettings(head.model, after.decisions);
    expect(settingsOf.failedOver?.("west", "web")).toBe(false);
    const west = planChange(before, after, settingsOf).clusters.find((c) => c.cluster === "west");
    expect(west?.removed.length).toBeGreaterThan(0);
    expect(west?.pruneBlocked?.reasons.join(" ")).toMatch(/more than the 30% budget/);
  });
});
