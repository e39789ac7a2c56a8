import { describe, expect, it } from "vitest";
import { loadFleet } from "../../src/load/load-fleet.js";
import { fileTreeFromText } from "../../src/model/file-tree.js";
import { renderFleet } from "../../src/render/render-fleet.js";
import { desiredByCluster, pruneSettings } from "../../src/sync/desired-objects.js";
import { loadWithCharts, readExampleRepo } from "../helpers/example-repo.js";
import { MINIMAL_FLEET } from "../helpers/minimal-fleet.js";

/** What each cluster should hold, from the rendered tree and the fleet: policies, Secret values, pruning rules. */
describe("desiredByCluster", () => {
  it("restores a Secret's values from the fleet repo (the rendered tree holds only their digest)", async () => {
    const { model } = await loadWithCharts(await readExampleRepo());
    if (!model) throw new Error("the example fleet does not validate");
    const render = renderFleet(model);
    const rendered = render.objects.find((o) => o.identity === "/Secret/data/mysql-root");
    expect(rendered?.object.data).toBeUndefined();
    const desired = desiredByCluster(render.objects, model).get(rendered?.cluster ?? "");
    const secret = desired?.find((d) => d.identity === "/Secret/data/mysql-root");
    expect(secret?.object.data).toEqual({ password: "ZXhhbXBsZS1vbmx5" });
    expect(secret?.error).toBeUndefined();
    // The digest is of the rendered text: no value in it.
    expect(secret?.digest).toMatch(/^[0-9a-f]{16}$/);
  });

  it("refuses to render a Secret whose values an Override changed (values are applied only as written)", () => {
    const { model, problems } = loadFleet(
      fileTreeFromText({
        ...MINIMAL_FLEET,
        "apps/web/secret.yaml":
          "apiVersion: v1\nkind: Secret\nmetadata:\n  name: web-token\nstringData:\n  token: not-a-real-token\n",
        "overrides/token.yaml":
          "apiVersion: gitfleet.io/v1alpha1\nkind: Override\nmetadata:\n  name: token\nspec:\n  resourceSelectors:\n    - {apiVersion: v1, kind: Secret}\n  overrideRules:\n    - targetCluster: {clusterNames: [east]}\n      overriders:\n        mergePatch: {stringData: {token: other}}\n",
      }),
    );
    if (!model) throw new Error(JSON.stringify(problems));
    const render = renderFleet(model);
    expect(render.errors).toEqual([
      {
        cluster: "east",
        app: "web",
        resource: "Secret shop/web-token",
        file: "apps/web/secret.yaml",
        message:
          "an Override changed this Secret's values; gitfleet applies Secret values only as the fleet repo writes them (write them in the Secret, or use a Secret per cluster)",
      },
    ]);
    expect(
      render.objects.filter((o) => o.identity === "/Secret/shop/web-token").map((o) => o.cluster),
    ).toEqual(["west"]);
  });

  it.each([
    [{}, {}, { force: false, adopt: false, selfHeal: true }],
    [
      { syncPolicy: { selfHeal: false, forceConflicts: true } },
      {},
      { force: true, adopt: false, selfHeal: false },
    ],
    [{}, { conflictResolution: "Adopt" }, { force: false, adopt: true, selfHeal: true }],
    [{}, { forceConflicts: true }, { force: true, adopt: false, selfHeal: true }],
  ] as const)("app %j and placement %j give the policy %j", (app, placement, policy) => {
    const files: Record<string, string> = { ...MINIMAL_FLEET };
    files["apps/web/app.yaml"] =
      `apiVersion: gitfleet.io/v1alpha1\nkind: App\nmetadata:\n  name: web\nspec:\n  namespace: shop\n${yamlBlock(app)}`;
    files["placements/web.yaml"] = `${MINIMAL_FLEET["placements/web.yaml"]}${yamlBlock(placement)}`;
    const { model, problems } = loadFleet(fileTreeFromText(files));
    if (!model) throw new Error(JSON.stringify(problems));
    const desired = [...desiredByCluster(renderFleet(model).objects, model).values()].flat();
    expect(desired.length).toBeGreaterThan(0);
    for (const d of desired) expect(d.policy).toEqual(policy);
  });

  it("collects the deletion budget, allowPrune tokens and apps that do not prune", () => {
    const files: Record<string, string> = {
      ...MINIMAL_FLEET,
      "fleet.yaml":
        "apiVersion: gitfleet.io/v1alpha1\nkind: Fleet\nmetadata:\n  name: f\nspec:\n  pruning:\n    maxDeletionPercent: 50\n    allowPrune: prune-aaaaaaaaaaaa, prune-bbbbbbbbbbbb\n",
      "apps/web/app.yaml":
        "apiVersion: gitfleet.io/v1alpha1\nkind: App\nmetadata:\n  name: web\nspec:\n  namespace: shop\n  syncPolicy:\n    prune: false\n    allowPrune: prune-cccccccccccc\n",
    };
    const { model, problems } = loadFleet(fileTreeFromText(files));
    if (!model) throw new Error(JSON.stringify(problems));
    const settings = pruneSettings(model);
    expect(settings.maxDeletionPercent).toBe(50);
    expect([...settings.allowedTokens].sort()).toEqual(["prune-aaaaaaaaaaaa", "prune-bbbbbbbbbbbb"]);
    // An app's tokens are its own: they allow deleting that app's objects only.
    expect([...(settings.appTokens?.get("web") ?? [])]).toEqual(["prune-cccccccccccc"]);
    expect(settings.appPrunes("web")).toBe(false);
    expect(settings.appPrunes("other")).toBe(true);
  });
});

// YAML lines for a spec's extra fields (two-space indented under spec:).
function yamlBlock(value: Record<string, unknown>): string {
  return Object.entries(value)
    .map(([key, inner]) =>
      typeof inner === "object" && inner !== null
        ? `  ${key}:\n${Object.entries(inner)
            .map(([k, v]) => `    ${k}: ${String(v)}\n`)
            .join("")}`
        : `  ${key}: ${String(inner)}\n`,
    )
    .join("");
}
