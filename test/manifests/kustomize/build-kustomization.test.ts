import { describe, expect, it } from "vitest";
import { buildKustomization } from "../../../src/manifests/kustomize/build-kustomization.js";
import { fileTreeFromText } from "../../../src/model/file-tree.js";
import { formatProblem } from "../../../src/model/problem.js";

// What the kustomize engine refuses, each at the file, line and column of the kustomization.

const CONFIG = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  A: b\n";

describe("kustomizations the engine refuses", () => {
  it.each([
    [
      "a remote base",
      { "app/kustomization.yaml": "resources:\n  - github.com/example/base?ref=v1\n" },
      'app/kustomization.yaml:2:5: error: /resources/0: remote resource "github.com/example/base?ref=v1" refused: gitfleet builds only from the fleet repo (vendor the base into it) [SCHEMA_VIOLATION]',
    ],
    [
      "a URL",
      { "app/kustomization.yaml": "resources:\n  - https://example.com/app.yaml\n" },
      'app/kustomization.yaml:2:5: error: /resources/0: remote resource "https://example.com/app.yaml" refused: gitfleet builds only from the fleet repo (vendor the base into it) [SCHEMA_VIOLATION]',
    ],
    [
      "Helm inflation",
      { "app/kustomization.yaml": "resources: [cm.yaml]\nhelmCharts:\n  - name: x\n", "app/cm.yaml": CONFIG },
      "app/kustomization.yaml:2:1: error: /helmCharts: Helm inflation inside a kustomization is refused: make the chart an app of its own (spec.helm) [SCHEMA_VIOLATION]",
    ],
    [
      "a missing file",
      { "app/kustomization.yaml": "resources:\n  - nothing.yaml\n" },
      'app/kustomization.yaml:2:5: error: /resources/0: "nothing.yaml" does not exist [SCHEMA_VIOLATION]',
    ],
    [
      "a path out of the repo",
      { "app/kustomization.yaml": "resources:\n  - ../../etc/passwd\n" },
      'app/kustomization.yaml:2:5: error: /resources/0: "../../etc/passwd" leaves the fleet repo [SCHEMA_VIOLATION]',
    ],
    [
      "a cycle of bases",
      { "a/kustomization.yaml": "resources: [../b]\n", "b/kustomization.yaml": "resources:\n  - ../a\n" },
      'b/kustomization.yaml:2:5: error: /resources/0: "../a" includes itself (a cycle of bases) [SCHEMA_VIOLATION]',
    ],
    [
      "replicas for a name nothing has",
      {
        "app/kustomization.yaml": "resources: [cm.yaml]\nreplicas:\n  - name: web\n    count: 2\n",
        "app/cm.yaml": CONFIG,
      },
      'app/kustomization.yaml:3:11: error: /replicas/0/name: no Deployment, StatefulSet, ReplicaSet or ReplicationController is named "web" [SCHEMA_VIOLATION]',
    ],
    [
      "a strategic merge patch for an object that is not there",
      {
        "app/kustomization.yaml":
          "resources: [cm.yaml]\npatches:\n  - patch: |\n      apiVersion: v1\n      kind: ConfigMap\n      metadata: {name: other}\n",
        "app/cm.yaml": CONFIG,
      },
      "app/kustomization.yaml:3:5: error: /patches/0: no object is ConfigMap other (nothing for this patch to change) [SCHEMA_VIOLATION]",
    ],
    [
      "a JSON 6902 patch without a target",
      {
        "app/kustomization.yaml":
          "resources: [cm.yaml]\npatches:\n  - patch: '[{op: remove, path: /data}]'\n",
        "app/cm.yaml": CONFIG,
      },
      "app/kustomization.yaml:3:5: error: /patches/0: a JSON 6902 patch needs a target [SCHEMA_VIOLATION]",
    ],
    [
      "a JSON 6902 operation on a path that is not there",
      {
        "app/kustomization.yaml":
          "resources: [cm.yaml]\npatches:\n  - target: {kind: ConfigMap}\n    patch: '[{op: remove, path: /spec}]'\n",
        "app/cm.yaml": CONFIG,
      },
      "app/kustomization.yaml:3:5: error: /patches/0: ConfigMap settings: operation 1 (remove /spec): the path does not exist in the object [SCHEMA_VIOLATION]",
    ],
    [
      "a patch file outside the repo",
      {
        "app/kustomization.yaml": "resources: [cm.yaml]\npatches:\n  - path: ../../secret.yaml\n",
        "app/cm.yaml": CONFIG,
      },
      'app/kustomization.yaml:3:11: error: /patches/0/path: "../../secret.yaml" leaves the fleet repo [SCHEMA_VIOLATION]',
    ],
    [
      "a target pattern that backtracks",
      {
        "app/kustomization.yaml":
          "resources: [cm.yaml]\npatches:\n  - target: {name: '(a+)+$'}\n    patch: '[{op: remove, path: /data}]'\n",
        "app/cm.yaml": CONFIG,
      },
      'app/kustomization.yaml:3:13: error: /patches/0/target: target name "(a+)+$" is too complex a pattern [SCHEMA_VIOLATION]',
    ],
    [
      "a generator that repeats a key",
      { "app/kustomization.yaml": "configMapGenerator:\n  - name: x\n    literals: [A=1, A=2]\n" },
      'app/kustomization.yaml:3:21: error: /configMapGenerator/0/literals/1: the key "A" is repeated [SCHEMA_VIOLATION]',
    ],
    [
      "a generator merging into nothing",
      { "app/kustomization.yaml": "configMapGenerator:\n  - name: x\n    behavior: merge\n" },
      "app/kustomization.yaml:2:5: error: /configMapGenerator/0: there is no ConfigMap x to merge [SCHEMA_VIOLATION]",
    ],
    [
      "a generator creating what exists",
      {
        "app/kustomization.yaml": "resources: [cm.yaml]\nconfigMapGenerator:\n  - name: settings\n",
        "app/cm.yaml": CONFIG,
      },
      "app/kustomization.yaml:3:5: error: /configMapGenerator/0: ConfigMap settings exists already: use behavior merge or replace [SCHEMA_VIOLATION]",
    ],
    [
      "an unquoted label value",
      {
        "app/kustomization.yaml": "resources: [cm.yaml]\ncommonLabels:\n  enabled: yes\n",
        "app/cm.yaml": CONFIG,
      },
      "app/kustomization.yaml:3:12: error: /commonLabels/enabled: true must be a string (quote it) [SCHEMA_VIOLATION]",
    ],
    [
      "a Kustomization under components",
      {
        "app/kustomization.yaml": "resources: [cm.yaml]\ncomponents: [../part]\n",
        "app/cm.yaml": CONFIG,
        "part/kustomization.yaml": "namePrefix: x-\n",
      },
      "part/kustomization.yaml:1:1: error: /kind: a component must be kind: Component [SCHEMA_VIOLATION]",
    ],
    [
      "a transformer plugin",
      {
        "app/kustomization.yaml": "resources: [cm.yaml]\ntransformers: [plugin.yaml]\n",
        "app/cm.yaml": CONFIG,
      },
      "app/kustomization.yaml:2:1: error: /transformers: transformer plugins run code: gitfleet builds only the built-in transformers [SCHEMA_VIOLATION]",
    ],
    [
      "a replacement whose source is missing",
      {
        "app/kustomization.yaml":
          "resources: [cm.yaml]\nreplacements:\n  - source: {kind: Secret, name: none}\n    targets: [{select: {kind: ConfigMap}}]\n",
        "app/cm.yaml": CONFIG,
      },
      "app/kustomization.yaml:3:13: error: /replacements/0/source: the source selects no object [SCHEMA_VIOLATION]",
    ],
  ])("%s", (_case, files, expected) => {
    const dir = Object.keys(files)[0]?.split("/")[0] as string;
    const result = buildKustomization(fileTreeFromText(files), dir);
    expect(result.problems.map(formatProblem)).toEqual([expected]);
    expect(result.objects).toEqual([]);
  });

  it("builds nested bases with each level's transformers", () => {
    const result = buildKustomization(
      fileTreeFromText({
        "base/kustomization.yaml": "resources: [cm.yaml]\nnamePrefix: base-\n",
        "base/cm.yaml": CONFIG,
        "prod/kustomization.yaml": "resources: [../base]\nnamespace: shop\nnamePrefix: prod-\n",
      }),
      "prod",
    );
    expect(result.problems).toEqual([]);
    expect(result.objects.map((o) => [o.file, o.object.metadata])).toEqual([
      ["base/cm.yaml", { name: "prod-base-settings", namespace: "shop" }],
    ]);
  });
});

describe("what the engine builds", () => {
  it("names generated objects with kustomize's content hash and renames the references", () => {
    const result = buildKustomization(
      fileTreeFromText({
        "app/kustomization.yaml":
          "resources: [deploy.yaml]\nnamePrefix: p-\nconfigMapGenerator:\n  - name: settings\nsecretGenerator:\n  - name: creds\n",
        "app/deploy.yaml":
          "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec:\n  template:\n    spec:\n      containers:\n        - name: main\n          envFrom: [{configMapRef: {name: settings}}, {secretRef: {name: creds}}]\n",
      }),
      "app",
    );
    expect(result.problems).toEqual([]);
    // The suffixes kubectl kustomize v5.5 gives an empty ConfigMap and an empty Opaque Secret.
    const names = result.objects.map((o) => (o.object.metadata as { name: string }).name);
    expect(names).toEqual(["p-web", "p-settings-6ct58987ht", "p-creds-46f8b28mk5"]);
    const deployment = JSON.stringify(result.objects[0]?.object);
    expect(deployment).toContain('"name":"p-settings-6ct58987ht"');
    expect(deployment).toContain('"name":"p-creds-46f8b28mk5"');
  });
});
