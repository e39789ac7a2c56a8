import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { appBuildsFor, loadFleetWithBuilds } from "../../src/builds/load-with-builds.js";
import { ChartRenderer } from "../../src/helm/chart-renderer.js";
import { ChartSources } from "../../src/helm/chart-sources.js";
import { helmEnvironment } from "../../src/helm/helm-environment.js";
import { createParseCache } from "../../src/load/load-fleet.js";
import type { FileTree } from "../../src/model/file-tree.js";
import { formatProblem } from "../../src/model/problem.js";
import { syncRoleOf } from "../../src/model/sync-annotations.js";
import type { App, Resource } from "../../src/model/types.js";
import { ALL } from "../../src/reconcile/affected-apps.js";
import { EMPTY_STATE, reconcileStep } from "../../src/reconcile/reconcile-step.js";
import { helm, helmBinary, serveDirectory, serveOciRegistry } from "../helpers/helm.js";
import { minimalFleetWith } from "../helpers/minimal-fleet.js";

// Helm apps through the real helm (built from Go modules by scripts/build-helm.sh): a chart in the
// fleet repo, the same chart from a loopback chart repository and a loopback OCI registry, values
// files and per-cluster values, each rendered equal to `helm template` with the same inputs.

const CHART = fileURLToPath(new URL("../fixtures/helm/shop", import.meta.url));
const WIDGET_CRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {kind: Widget, plural: widgets, singular: widget}
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec: {type: object, properties: {size: {type: string}}}
`;
const VALUES_COMMON = "greeting: hello from the fleet\nservice:\n  port: 8080\n";

let binary: string;
let work: string;

function chartFiles(prefix: string): Record<string, string> {
  const files: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else files[`${prefix}/${relative(CHART, path)}`] = readFileSync(path, "utf8");
    }
  };
  walk(CHART);
  return files;
}

function appYaml(helmSpec: string): string {
  return `apiVersion: gitfleet.io/v1alpha1\nkind: App\nmetadata:\n  name: shop\nspec:\n  namespace: shop\n  helm:\n${helmSpec}`;
}

const PLACEMENT =
  "apiVersion: gitfleet.io/v1alpha1\nkind: Placement\nmetadata:\n  name: shop\nspec:\n  apps: [shop]\n  replicaScheduling:\n    type: Duplicated\n";

const TARGETS = `    targets:
      - name: east
        clusterName: east
        values:
          replicaCount: 5
          widget: {size: large}
`;

function fleet(helmSpec: string, extra: Record<string, string | null> = {}): FileTree {
  return minimalFleetWith({
    "apps/shop/app.yaml": appYaml(helmSpec),
    "apps/shop/values-common.yaml": VALUES_COMMON,
    "apps/widgets/crd.yaml": WIDGET_CRD,
    "placements/shop.yaml": PLACEMENT,
    ...extra,
  });
}

const IN_REPO = `    chart: chart\n    valuesFiles: [values-common.yaml]\n    values:\n      image: {tag: "2.5.0"}\n${TARGETS}`;

// A renderer with its own cache; `allowed` are the chart sources the operator lists (loopback
// repositories and registries are refused unless listed).
function renderer(
  cacheDir: string,
  allowed: readonly string[] = [],
  plainHttpHosts: string[] = [],
): ChartRenderer {
  const environment = helmEnvironment({ GITFLEET_HELM: binary, GITFLEET_CACHE_DIR: cacheDir });
  const sources = ChartSources.parse(allowed);
  if ("error" in sources) throw new Error(sources.error);
  return new ChartRenderer({ ...environment, plainHttpHosts }, { sources });
}

// What `helm template` prints for the chart with these values files, as objects by identity, hooks
// without a sync phase (test, delete, rollback) left out.
async function helmTemplate(
  chart: string,
  values: readonly string[],
  extra: readonly string[] = [],
): Promise<Map<string, unknown>> {
  const files = values.map((text, index) => {
    const file = join(work, `expected-values-${index}.yaml`);
    writeFileSync(file, text);
    return ["--values", file];
  });
  const output = await helm(binary, join(work, "home"), [
    "template",
    "shop",
    chart,
    "--namespace",
    "shop",
    "--kube-version",
    "v1.36.0",
    "--include-crds",
    "--api-versions",
    "example.com/v1",
    "--api-versions",
    "example.com/v1/Widget",
    ...files.flat(),
    ...extra,
  ]);
  const objects = new Map<string, unknown>();
  for (const document of parseAllDocuments(output)) {
    const object = document.toJS() as {
      kind: string;
      metadata: { name: string; annotations?: Record<string, string> };
    };
    if (!object || syncRoleOf(object.metadata.annotations).kind === "skip") continue;
    objects.set(`${object.kind}/${object.metadata.name}`, object);
  }
  return objects;
}

// The fixture chart packaged into work/<name> and served on loopback as an indexed chart repository.
async function chartRepository(name: string) {
  const packaged = join(work, name);
  mkdirSync(packaged, { recursive: true });
  await helm(binary, join(work, "home"), ["package", CHART, "--destination", packaged]);
  const repository = await serveDirectory(packaged);
  await helm(binary, join(work, "home"), ["repo", "index", packaged, "--url", `http://${repository.url}`]);
  return { packaged, repository };
}

function objectsOf(resources: Iterable<Resource>): Map<string, unknown> {
  return new Map([...resources].map((r) => [`${r.kind}/${r.name}`, r.object]));
}

function shopApp(loaded: Awaited<ReturnType<typeof loadFleetWithBuilds>>): App {
  if (!loaded.model) throw new Error(loaded.problems.map(formatProblem).join("\n"));
  return loaded.model.apps.find((a) => a.name === "shop") as App;
}

beforeAll(() => {
  binary = helmBinary();
  work = mkdtempSync(join(tmpdir(), "gitfleet-helm-test-"));
}, 20 * 60_000);

afterAll(() => {
  rmSync(work, { recursive: true, force: true });
});

describe("Helm apps", () => {
  it("render a chart in the fleet repo as helm template does, per cluster with its target's values", async () => {
    const loaded = await loadFleetWithBuilds(fleet(IN_REPO, chartFiles("apps/shop/chart")), {
      charts: renderer(join(work, "c1")),
    });
    const app = shopApp(loaded);
    const builds = app.builds;
    if (!builds) throw new Error("no builds");
    const inline = 'image: {tag: "2.5.0"}\n';
    expect(objectsOf(builds.defaults.values())).toEqual(await helmTemplate(CHART, [VALUES_COMMON, inline]));
    expect(objectsOf(builds.targets[0]?.objects.values() ?? [])).toEqual(
      await helmTemplate(CHART, [VALUES_COMMON, inline, "replicaCount: 5\nwidget: {size: large}\n"]),
    );
    expect([...builds.defaults.keys()].length).toBe(7);
    expect(builds.source).toBe("helm chart shop 0.3.1 (apps/shop/chart)");
    expect(builds.targets[0]?.source).toBe("helm chart shop 0.3.1 (apps/shop/chart) (values target east)");
    // The chart's install and upgrade hook runs as a PreSync hook, as Argo CD runs it.
    expect(builds.notApplied ?? []).toEqual([]);
    const migrate = app.resources.find((r) => r.kind === "Job" && r.name === "shop-shop-migrate");
    expect(
      syncRoleOf(
        (migrate?.object.metadata as { annotations?: Record<string, string> } | undefined)?.annotations,
      ),
    ).toEqual({
      kind: "hook",
      wave: 0,
      hook: { phases: ["PreSync"], deletePolicies: ["BeforeHookCreation"] },
    });
    const deployment = app.resources.find((r) => r.kind === "Deployment");
    expect(deployment?.origin.file).toBe("apps/shop/chart/templates/deployment.yaml");
    expect(app.resources.find((r) => r.kind === "CustomResourceDefinition")?.name).toBe(
      "gadgets.example.com",
    );
    expect(app.resources.find((r) => r.kind === "Widget")?.namespace).toBe("shop");
  });

  it("take per-cluster values from an Override rule, merged after the app's values and its target's", async () => {
    const override = `apiVersion: gitfleet.io/v1alpha1
kind: Override
metadata:
  name: shop-capacity
spec:
  apps: [shop]
  overrideRules:
    - targetCluster:
        clusterNames: [west]
      overriders:
        helmValues:
          replicaCount: 7
    - targetCluster:
        labelSelector: {matchLabels: {env: prod}}
      overriders:
        helmValues:
          greeting: from the override
`;
    const tree = fleet(IN_REPO, {
      ...chartFiles("apps/shop/chart"),
      "overrides/shop-capacity.yaml": override,
    });
    const loaded = await loadFleetWithBuilds(tree, { charts: renderer(join(work, "c8")) });
    expect(loaded.problems.filter((p) => p.file !== "apps/widgets/crd.yaml")).toEqual([]);
    const app = shopApp(loaded);
    const targets = app.builds?.targets ?? [];
    expect(targets.map((t) => [t.name, t.clusterName, t.source])).toEqual([
      [
        "cluster-east",
        "east",
        "helm chart shop 0.3.1 (apps/shop/chart) (values target east; Override shop-capacity)",
      ],
      ["cluster-west", "west", "helm chart shop 0.3.1 (apps/shop/chart) (Override shop-capacity)"],
      ["east", "east", "helm chart shop 0.3.1 (apps/shop/chart) (values target east)"],
    ]);
    const inline = 'image: {tag: "2.5.0"}\n';
    const target = "replicaCount: 5\nwidget: {size: large}\n";
    expect(objectsOf(targets[0]?.objects.values() ?? [])).toEqual(
      await helmTemplate(CHART, [VALUES_COMMON, inline, target, "greeting: from the override\n"]),
    );
    expect(objectsOf(targets[1]?.objects.values() ?? [])).toEqual(
      await helmTemplate(CHART, [
        VALUES_COMMON,
        inline,
        "replicaCount: 7\n",
        "greeting: from the override\n",
      ]),
    );
  });

  it("render the same chart from a loopback chart repository and a loopback OCI registry equally", async () => {
    const { packaged, repository } = await chartRepository("repo");
    const registry = await serveOciRegistry();
    try {
      await helm(binary, join(work, "home"), [
        "push",
        join(packaged, "shop-0.3.1.tgz"),
        `oci://${registry.url}/charts`,
        "--plain-http",
      ]);
      const values = `    valuesFiles: [values-common.yaml]\n    values:\n      image: {tag: "2.5.0"}\n${TARGETS}`;
      const expected = await helmTemplate(join(packaged, "shop-0.3.1.tgz"), [
        VALUES_COMMON,
        'image: {tag: "2.5.0"}\n',
      ]);
      const fromRepo = shopApp(
        await loadFleetWithBuilds(
          fleet(`    repo: http://${repository.url}\n    chart: shop\n    version: 0.3.1\n${values}`),
          { charts: renderer(join(work, "c2"), [`http://${repository.url}`]) },
        ),
      );
      const fromRegistry = shopApp(
        await loadFleetWithBuilds(
          fleet(`    chart: oci://${registry.url}/charts/shop\n    version: 0.3.1\n${values}`),
          { charts: renderer(join(work, "c2"), [`oci://${registry.url}/charts`], [registry.url]) },
        ),
      );
      const inRepo = shopApp(
        await loadFleetWithBuilds(fleet(IN_REPO, chartFiles("apps/shop/chart")), {
          charts: renderer(join(work, "c2")),
        }),
      );
      for (const app of [fromRepo, fromRegistry]) {
        expect(objectsOf(app.builds?.defaults.values() ?? [])).toEqual(expected);
        expect(objectsOf(app.builds?.defaults.values() ?? [])).toEqual(
          objectsOf(inRepo.builds?.defaults.values() ?? []),
        );
      }
      expect(fromRepo.builds?.source).toBe(`helm chart http://${repository.url}/shop@0.3.1`);
      expect(fromRegistry.builds?.source).toBe(`helm chart oci://${registry.url}/charts/shop@0.3.1`);
      expect(fromRepo.resources.find((r) => r.kind === "Deployment")?.origin.file).toBe(
        `http://${repository.url}/shop@0.3.1/templates/deployment.yaml`,
      );
      expect(repository.requests).toContain("/shop-0.3.1.tgz");
      expect(registry.requests.some((r) => r.startsWith("GET /v2/charts/shop/blobs/"))).toBe(true);
    } finally {
      await repository.close();
      await registry.close();
    }
  });

  it("answers unchanged charts from the cache without running helm or fetching again", async () => {
    const cacheDir = join(work, "c3");
    const { repository } = await chartRepository("repo3");
    try {
      const tree = fleet(
        `    repo: http://${repository.url}\n    chart: shop\n    version: 0.3.1\n${TARGETS}`,
      );
      const first = renderer(cacheDir, [`http://${repository.url}`]);
      const before = shopApp(await loadFleetWithBuilds(tree, { charts: first }));
      expect(first.stats).toEqual({ hits: 0, helmRuns: 2, fetches: 1 });
      const second = renderer(cacheDir, [`http://${repository.url}`]);
      const after = shopApp(await loadFleetWithBuilds(tree, { charts: second }));
      expect(second.stats).toEqual({ hits: 2, helmRuns: 0, fetches: 0 });
      expect(objectsOf(after.resources)).toEqual(objectsOf(before.resources));
      const requestsBefore = repository.requests.length;
      const changed = fleet(
        `    repo: http://${repository.url}\n    chart: shop\n    version: 0.3.1\n${TARGETS}`,
        {
          "apps/shop/values-common.yaml": "greeting: changed\n",
        },
      );
      await loadFleetWithBuilds(changed, { charts: second });
      expect(second.stats).toEqual({ hits: 4, helmRuns: 0, fetches: 0 });
      const edited = fleet(
        `    repo: http://${repository.url}\n    chart: shop\n    version: 0.3.1\n    values: {greeting: changed}\n`,
      );
      await loadFleetWithBuilds(edited, { charts: second });
      expect(second.stats).toEqual({ hits: 4, helmRuns: 1, fetches: 0 });
      expect(repository.requests.length).toBe(requestsBefore);
    } finally {
      await repository.close();
    }
  });

  it("reports a chart that fails to render at the app's file, and loads no model", async () => {
    const spec = `    chart: chart\n    values:\n      image: {tag: null}\n`;
    const loaded = await loadFleetWithBuilds(fleet(spec, chartFiles("apps/shop/chart")), {
      charts: renderer(join(work, "c4")),
    });
    expect(loaded.model).toBeUndefined();
    const problems = loaded.problems.map(formatProblem);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toBe(
      "apps/shop/app.yaml:8:12: error: /spec/helm/chart: helm template failed for apps/shop/chart: execution error at (apps/shop/chart/templates/deployment.yaml:22:52): image.tag is required [HELM_RENDER_FAILED]",
    );
    expect(problems[0]).not.toContain("gitfleet-helm-");
  });

  it("keeps every rendered object when a later commit's chart fails: the commit is invalid, nothing is pruned", async () => {
    const charts = renderer(join(work, "c9"));
    const cache = createParseCache();
    const good = fleet(IN_REPO, chartFiles("apps/shop/chart"));
    const first = reconcileStep(EMPTY_STATE, {
      sourceCommit: "a".repeat(40),
      tree: good,
      changedPaths: ALL,
      cache,
      charts: (await appBuildsFor(good, { charts }, cache)).charts,
    });
    expect(first.valid).toBe(true);
    // The chart's Secret is a Secret like any other: its value never reaches the status branch.
    const secretValue = "placeholder-not-a-secret";
    expect(first.state.files.has("rendered/east/shop/core.Secret.shop-shop-api.yaml")).toBe(true);
    for (const text of first.state.files.values()) {
      expect(text).not.toContain(secretValue);
      expect(text).not.toContain(Buffer.from(secretValue).toString("base64"));
    }
    const shop = [...first.state.files.keys()].filter((path) => /^rendered\/[^/]+\/shop\//.test(path));
    expect(shop.length).toBeGreaterThan(10);
    const bad = fleet(
      `    chart: chart\n    values:\n      image: {tag: null}\n`,
      chartFiles("apps/shop/chart"),
    );
    const second = reconcileStep(first.state, {
      sourceCommit: "b".repeat(40),
      tree: bad,
      changedPaths: ["apps/shop/app.yaml"],
      cache,
      charts: (await appBuildsFor(bad, { charts }, cache)).charts,
    });
    expect(second.valid).toBe(false);
    expect([...second.changes.keys()].filter((path) => path.startsWith("rendered/"))).toEqual([]);
    for (const path of shop) expect(second.state.files.get(path)).toBe(first.state.files.get(path));
    expect(second.problems.map(formatProblem).join("\n")).toContain(
      "image.tag is required [HELM_RENDER_FAILED]",
    );
  });

  it("checks rendered objects against the Kubernetes schema at the template's path", async () => {
    const spec = `    chart: chart\n    values:\n      replicaCount: -4\n`;
    const loaded = await loadFleetWithBuilds(fleet(spec, chartFiles("apps/shop/chart")), {
      charts: renderer(join(work, "c5")),
    });
    expect(loaded.problems.map(formatProblem)).toEqual([
      "apps/shop/chart/templates/deployment.yaml:12:13: error: /spec/replicas: must be greater than or equal to 0, not -4 [SCHEMA_VIOLATION]",
    ]);
  });

  it.each([
    [
      "a repository chart without a version",
      "    repo: https://charts.example.com\n    chart: shop\n",
      "/spec/helm: a chart from a repository or registry needs an exact version",
    ],
    [
      "a repository that is not http(s)",
      "    repo: file:///etc\n    chart: shop\n    version: 1.0.0\n",
      "/spec/helm/repo: a chart repository is an http:// or https:// URL",
    ],
    [
      "a directory outside the repo",
      "    chart: ../../../etc\n",
      '/spec/helm/chart: "../../../etc" leaves the fleet repo',
    ],
    [
      "a directory without Chart.yaml",
      "    chart: nothing-here\n",
      "/spec/helm/chart: apps/shop/nothing-here/ has no Chart.yaml",
    ],
    [
      "a values file that does not exist",
      "    chart: chart\n    valuesFiles: [missing.yaml]\n",
      "/spec/helm/valuesFiles/0: apps/shop/missing.yaml does not exist",
    ],
    [
      "a target without a cluster",
      "    chart: chart\n    targets:\n      - name: t\n        values: {a: 1}\n",
      "/spec/helm/targets/0: a target needs clusterName or clusterSelector",
    ],
  ])("refuses %s at the App's field, running no helm", async (_name, spec, message) => {
    const charts = renderer(join(work, "c6"));
    const loaded = await loadFleetWithBuilds(fleet(spec, chartFiles("apps/shop/chart")), { charts: charts });
    expect(loaded.model).toBeUndefined();
    expect(loaded.problems.map(formatProblem).join("\n")).toContain(`apps/shop/app.yaml:`);
    expect(loaded.problems.map(formatProblem).join("\n")).toContain(message);
    if (!message.includes("target")) expect(charts.stats.helmRuns).toBe(0);
  });

  it("says helm is missing when no binary is found", async () => {
    const environment = {
      ...helmEnvironment({ GITFLEET_CACHE_DIR: join(work, "c7"), PATH: "" }),
      binary: undefined,
    };
    const loaded = await loadFleetWithBuilds(fleet(IN_REPO, chartFiles("apps/shop/chart")), {
      charts: new ChartRenderer(environment),
    });
    expect(loaded.problems.map(formatProblem).join("\n")).toContain(
      "helm was not found: put helm (v3) on the PATH, set GITFLEET_HELM, or run scripts/build-helm.sh",
    );
  });

  it("never caches the failure of a helm that is missing, and renders once it is there", async () => {
    const cacheDir = join(work, "c8");
    const missing = join(work, "c8-helm");
    // Values of its own: no earlier test's build of the same chart answers for it.
    const spec = IN_REPO.replace('"2.5.0"', '"2.5.8"');
    const broken = new ChartRenderer({
      ...helmEnvironment({ GITFLEET_CACHE_DIR: cacheDir }),
      binary: missing,
    });
    const first = await loadFleetWithBuilds(fleet(spec, chartFiles("apps/shop/chart")), { charts: broken });
    expect(first.problems.map(formatProblem).join("\n")).toContain(
      `helm at ${missing} is not an executable file (GITFLEET_HELM)`,
    );
    // The same chart with a helm that runs, through the same cache directory: rendered, not the old error.
    const working = new ChartRenderer(
      helmEnvironment({ GITFLEET_HELM: binary, GITFLEET_CACHE_DIR: cacheDir }),
    );
    const second = await loadFleetWithBuilds(fleet(spec, chartFiles("apps/shop/chart")), { charts: working });
    expect(second.problems.filter((p) => p.severity === "error")).toEqual([]);
    expect(second.model).toBeDefined();
    // Both targets rendered by helm: nothing of the failed runs was read back from the cache.
    expect(working.stats).toMatchObject({ helmRuns: 2, hits: 0 });
  });
});
