import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { loadFleet } from "../../src/load/load-fleet.js";
import type { ChartRenders } from "../../src/manifests/helm/chart-request.js";
import type { FileTree } from "../../src/model/file-tree.js";
import type { FleetModel } from "../../src/model/types.js";
import { formatRenderError, formatRenderedTree } from "../../src/render/format-render.js";
import { renderFleet } from "../../src/render/render-fleet.js";
import { chartsOf, readExampleRepo } from "../helpers/example-repo.js";
import { minimalFleetWith } from "../helpers/minimal-fleet.js";

function modelOf(tree: FileTree, charts?: ChartRenders): FleetModel {
  const result = loadFleet(tree, undefined, charts);
  if (!result.model) throw new Error(result.problems.map((p) => p.message).join("\n"));
  return result.model;
}

describe("rendering the example fleet", () => {
  let tree: FileTree;
  let model: FleetModel;
  let charts: ChartRenders | undefined;
  beforeAll(async () => {
    tree = await readExampleRepo();
    charts = await chartsOf(tree);
    model = modelOf(tree, charts);
  });

  it("matches the reviewed golden tree byte for byte", async () => {
    const result = renderFleet(model);
    expect(result.errors).toEqual([]);
    await expect(formatRenderedTree(result)).toMatchFileSnapshot("../golden/example-rendered.yaml");
  });

  it("renders every scheduled replica into exactly one cluster's object", () => {
    const result = renderFleet(model);
    for (const { resource, decision } of result.decisions) {
      const [kind = "", qualified = ""] = resource.split(" ");
      const [namespace, name] = qualified.split("/");
      const rendered = result.objects.filter(
        (o) =>
          o.object.kind === kind &&
          (o.object.metadata as { name?: string }).name === name &&
          (o.object.metadata as { namespace?: string }).namespace === namespace,
      );
      const field = kind === "Job" ? "parallelism" : "replicas";
      const counts = Object.fromEntries(
        rendered.map((o) => [o.cluster, (o.object.spec as Record<string, number>)[field]]),
      );
      const expected = Object.keys(decision.clusters).length > 0 ? decision.clusters : {};
      expect(counts, resource).toEqual(expected);
    }
  });

  it("sends dependents where their workloads run, drops member-owned fields and never writes a Secret value", () => {
    const result = renderFleet(model);
    const clustersOf = (path: string) =>
      result.objects.filter((o) => o.path.endsWith(path)).map((o) => o.cluster);
    expect(clustersOf("/games/core.Secret.arena-rcon.yaml")).toEqual(
      clustersOf("/games/apps.kruise.io.CloneSet.arena.yaml"),
    );
    expect(clustersOf("/shop/core.ConfigMap.web-config.yaml")).toEqual(
      clustersOf("/shop/apps.Deployment.web.yaml"),
    );
    const cloneSet = result.objects.find((o) => o.path.endsWith("apps.kruise.io.CloneSet.arena.yaml"));
    const spec = cloneSet?.object.spec as { scaleStrategy?: Record<string, unknown> } | undefined;
    expect(spec?.scaleStrategy).toEqual({ maxUnavailable: 2 });
    const all = result.objects.map((o) => o.text).join("\n");
    for (const value of ["not-a-real-password-example", "ZXhhbXBsZS1vbmx5", "example-only"])
      expect(all).not.toContain(value);
  });

  it("is byte-identical for any order of the input files", () => {
    const expected = formatRenderedTree(renderFleet(model));
    fc.assert(
      fc.property(fc.array(fc.integer(), { minLength: 1, maxLength: 60 }), (keys) => {
        const entries = [...tree.entries()]
          .map((entry, i) => ({ entry, key: keys[i % keys.length] ?? 0 }))
          .sort((a, b) => a.key - b.key);
        expect(formatRenderedTree(renderFleet(modelOf(new Map(entries.map((e) => e.entry)), charts)))).toBe(
          expected,
        );
      }),
      { numRuns: 20 },
    );
  });
});

describe("non-workloads", () => {
  it("go to the union of the clusters of every Placement that selects them", () => {
    const placement = (name: string, cluster: string) =>
      `apiVersion: gitfleet.io/v1alpha1\nkind: Placement\nmetadata:\n  name: ${name}\nspec:\n  apps: [shared]\n  clusterAffinity:\n    clusterNames: [${cluster}]\n`;
    const result = renderFleet(
      modelOf(
        minimalFleetWith({
          "apps/shared/settings.yaml":
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: shop\ndata:\n  MODE: shared\n",
          "placements/shared-east.yaml": placement("shared-east", "east"),
          "placements/shared-west.yaml": placement("shared-west", "west"),
        }),
      ),
    );
    const copies = result.objects.filter((o) => o.path.endsWith("core.ConfigMap.settings.yaml"));
    expect(copies.map((o) => o.cluster)).toEqual(["east", "west"]);
    expect(
      copies.map(
        (o) =>
          (o.object.metadata as { annotations: Record<string, string> }).annotations["gitfleet.io/placement"],
      ),
    ).toEqual(["shared-east,shared-west", "shared-east,shared-west"]);
  });
});

describe("render errors", () => {
  it("names the Override file, rule, cluster and object when an overrider fails, and renders nothing for it", () => {
    const files = {
      "overrides/broken.yaml":
        "apiVersion: gitfleet.io/v1alpha1\nkind: Override\nmetadata:\n  name: broken\nspec:\n  apps: [web]\n  overrideRules:\n    - targetCluster:\n        clusterNames: [west]\n      overriders:\n        jsonPatch:\n          - op: replace\n            path: /spec/strategy/type\n            value: Recreate\n",
    };
    const result = renderFleet(modelOf(minimalFleetWith(files)));
    expect(result.errors.map((e) => formatRenderError(e))).toEqual([
      "overrides/broken.yaml rule 0: cluster west: ConfigMap shop/web-config: jsonPatch: operation 1 (replace /spec/strategy/type): the path does not exist in the object [RENDER_FAILED]",
      "overrides/broken.yaml rule 0: cluster west: Deployment shop/web: jsonPatch: operation 1 (replace /spec/strategy/type): the path does not exist in the object [RENDER_FAILED]",
    ]);
    expect(result.objects.map((o) => o.path)).toEqual([
      "rendered/east/shop/apps.Deployment.web.yaml",
      "rendered/east/shop/core.ConfigMap.web-config.yaml",
    ]);
  });
  it.each([
    [
      "a port name where a number goes",
      "mergePatch:\n          spec:\n            template:\n              spec:\n                containers:\n                  - name: web\n                    ports: [{containerPort: http}]\n",
      'overrides/bad.yaml rule 1: cluster west: Deployment shop/web: after this rule the object is invalid for Kubernetes 1.36: /spec/template/spec/containers/0/ports/0/containerPort: must be an integer, not the string "http" [RENDER_FAILED]',
    ],
    [
      "an unknown field",
      "jsonPatch:\n          - {op: add, path: /spec/replica, value: 3}\n",
      'overrides/bad.yaml rule 1: cluster west: Deployment shop/web: after this rule the object is invalid for Kubernetes 1.36: /spec/replica: unknown field "replica" [RENDER_FAILED]',
    ],
  ])("checks an object an Override changed against its schema again: %s", (_name, overriders, error) => {
    const override = `apiVersion: gitfleet.io/v1alpha1\nkind: Override\nmetadata:\n  name: bad\nspec:\n  resourceSelectors:\n    - {apiVersion: apps/v1, kind: Deployment}\n  overrideRules:\n    - overriders:\n        labelsOverrider: [{operator: add, value: {tier: web}}]\n    - targetCluster:\n        clusterNames: [west]\n      overriders:\n        ${overriders}`;
    const result = renderFleet(modelOf(minimalFleetWith({ "overrides/bad.yaml": override })));
    expect(result.errors.map((e) => formatRenderError(e))).toEqual([error]);
    expect(result.objects.map((o) => o.path)).toEqual([
      "rendered/east/shop/apps.Deployment.web.yaml",
      "rendered/east/shop/core.ConfigMap.web-config.yaml",
      "rendered/west/shop/core.ConfigMap.web-config.yaml",
    ]);
  });
});
