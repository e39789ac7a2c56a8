import { describe, expect, it } from "vitest";
import { fileTreeFromText } from "../../../src/model/file-tree.js";
import { buildKustomization } from "../../../src/model/kustomize/build-kustomization.js";
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
      "a field not supported yet",
      { "app/kustomization.yaml": "resources: [cm.yaml]\nhelmCharts:\n  - name: x\n", "app/cm.yaml": CONFIG },
      "app/kustomization.yaml:2:1: error: /helmCharts: helmCharts is not supported by gitfleet's kustomize engine yet [SCHEMA_VIOLATION]",
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
