import { describe, expect, it } from "vitest";
import { loadFleet } from "../../src/load/load-fleet.js";
import { formatProblem } from "../../src/model/problem.js";
import { renderFleet } from "../../src/render/render-fleet.js";
import { minimalFleetWith } from "../helpers/minimal-fleet.js";

// Apps built by kustomize, through loading and rendering: the default build for every cluster, a
// target's build for the clusters it matches (first match wins), and errors at their file and line.

const BASE = {
  "apps/web/deployment.yaml": null,
  "apps/web/config.yaml": null,
  "apps/web/base/kustomization.yaml":
    "resources: [deployment.yaml]\nconfigMapGenerator:\n  - name: web-config\n    literals: [MODE=base]\n",
  "apps/web/base/deployment.yaml": `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
        - name: web
          image: ghcr.io/example/web:1.0.0
          envFrom: [{configMapRef: {name: web-config}}]
`,
  "apps/web/kustomization.yaml": "resources: [base]\n",
  "apps/web/overlays/prod/kustomization.yaml":
    "resources: [../../base]\nimages:\n  - name: ghcr.io/example/web\n    newTag: 2.0.0\nreplicas:\n  - name: web\n    count: 5\nconfigMapGenerator:\n  - name: web-config\n    behavior: merge\n    literals: [MODE=prod]\n",
  "apps/web/overlays/east/kustomization.yaml":
    "resources: [../../base]\nimages:\n  - name: ghcr.io/example/web\n    newTag: 3.0.0-east\n",
  "placements/web.yaml":
    "apiVersion: gitfleet.io/v1alpha1\nkind: Placement\nmetadata:\n  name: web\nspec:\n  apps: [web]\n  replicaScheduling:\n    type: Duplicated\n",
};

const appWithTargets = (targets: string) =>
  `apiVersion: gitfleet.io/v1alpha1\nkind: App\nmetadata:\n  name: web\nspec:\n  namespace: shop\n  kustomize:\n    targets:\n${targets}`;

function rendered(changes: Record<string, string | null>) {
  const loaded = loadFleet(minimalFleetWith({ ...BASE, ...changes }));
  expect(loaded.problems.filter((p) => p.severity === "error").map(formatProblem)).toEqual([]);
  const result = renderFleet(loaded.model as NonNullable<typeof loaded.model>);
  expect(result.errors).toEqual([]);
  const byCluster: Record<string, Record<string, unknown>> = {};
  for (const o of result.objects) {
    const spec = o.object.spec as {
      replicas?: number;
      template?: { spec: { containers: { image: string }[] } };
    };
    const name = (o.object.metadata as { name: string }).name;
    const summary =
      o.object.kind === "Deployment"
        ? `${spec.replicas} × ${spec.template?.spec.containers[0]?.image}`
        : JSON.stringify(o.object.data);
    const cluster = byCluster[o.cluster] ?? {};
    cluster[`${String(o.object.kind)} ${name}`] = summary;
    byCluster[o.cluster] = cluster;
  }
  return byCluster;
}

describe("apps built by kustomize", () => {
  it("sends every cluster the default build when no target is declared", () => {
    expect(rendered({})).toEqual({
      east: {
        "ConfigMap web-config-btf6f9dc9c": '{"MODE":"base"}',
        "Deployment web": "2 × ghcr.io/example/web:1.0.0",
      },
      west: {
        "ConfigMap web-config-btf6f9dc9c": '{"MODE":"base"}',
        "Deployment web": "2 × ghcr.io/example/web:1.0.0",
      },
    });
  });

  it("builds a cluster's objects from the first target that matches it", () => {
    const app = appWithTargets(
      "      - {name: east, clusterName: east, path: overlays/east}\n      - {name: prod, clusterSelector: {matchLabels: {env: prod}}, path: overlays/prod}\n",
    );
    const byCluster = rendered({ "apps/web/app.yaml": app });
    expect(byCluster.east).toEqual({
      "ConfigMap web-config-btf6f9dc9c": '{"MODE":"base"}',
      "Deployment web": "2 × ghcr.io/example/web:3.0.0-east",
    });
    // The prod overlay's count holds on a Duplicated workload; its merged ConfigMap has its own hash.
    expect(byCluster.west).toEqual({
      "ConfigMap web-config-2h42td9ggm": '{"MODE":"prod"}',
      "Deployment web": "5 × ghcr.io/example/web:2.0.0",
    });
  });

  it("reports a kustomization's error at its file, line and column, and loads no model", () => {
    const loaded = loadFleet(
      minimalFleetWith({
        ...BASE,
        "apps/web/kustomization.yaml":
          "resources: [base]\nimages:\n  - name: x\n    newTag: 1\nhelmCharts: []\n",
      }),
    );
    expect(loaded.model).toBeUndefined();
    expect(loaded.problems.map(formatProblem)).toEqual([
      "apps/web/kustomization.yaml:5:1: error: /helmCharts: Helm inflation inside a kustomization is refused: make the chart an app of its own (spec.helm) [SCHEMA_VIOLATION]",
    ]);
  });

  it("refuses a target whose directory has no kustomization, at the App's line", () => {
    const app = appWithTargets("      - {name: prod, clusterName: east, path: overlays/missing}\n");
    const loaded = loadFleet(minimalFleetWith({ ...BASE, "apps/web/app.yaml": app }));
    expect(loaded.problems.map(formatProblem)).toEqual([
      "apps/web/app.yaml:9:47: error: /spec/kustomize/targets/0/path: apps/web/overlays/missing/ has no kustomization.yaml [UNKNOWN_REFERENCE]",
    ]);
  });

  it("checks built objects like manifests, at the line of the file they came from", () => {
    const loaded = loadFleet(
      minimalFleetWith({
        ...BASE,
        "apps/web/base/deployment.yaml": (BASE["apps/web/base/deployment.yaml"] as string).replace(
          "metadata: {name: web}",
          "metadata: {name: Web_1}",
        ),
      }),
    );
    expect(loaded.problems.map((p) => `${p.file}:${p.line} ${p.code}`)).toContain(
      "apps/web/base/deployment.yaml:3 INVALID_NAME",
    );
  });
});
