import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { loadFleetWithBuilds } from "../src/builds/load-with-builds.js";
import { ChartRenderer } from "../src/helm/chart-renderer.js";
import { helmEnvironment } from "../src/helm/helm-environment.js";
import { createParseCache } from "../src/load/load-fleet.js";
import { peakRssMiB } from "./measure.js";

/**
 * Benchmark: a fleet of N Helm apps (the example fleet's status-page chart, each app with its own
 * values and a prod values target) loaded three ways — cold (every `helm template` runs), by a new
 * process on the same cache directory (a restarted controller: the disk cache answers), and again by
 * the same process (a reconcile of an unchanged commit: memory answers). Prints the time of each and
 * how many helm processes each ran. Asserts nothing.
 */
const apps = Number(process.env.BENCH_HELM_APPS ?? 100);
const root = fileURLToPath(new URL("../..", import.meta.url));
const chartDir = join(root, "example-repo/apps/status-page/chart");
const binary =
  process.env.GITFLEET_HELM ??
  execFileSync("bash", [join(root, "scripts/build-helm.sh")], { encoding: "utf8" })
    .trim()
    .split("\n")
    .pop();

const tree = new Map<string, Uint8Array>();
const put = (path: string, text: string) => tree.set(path, new TextEncoder().encode(text));
put(
  "clusters/prod-1.yaml",
  "apiVersion: gitfleet.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: prod-1\n  labels: {env: prod}\nspec: {}\n",
);
put(
  "clusters/staging-1.yaml",
  "apiVersion: gitfleet.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: staging-1\n  labels: {env: staging}\nspec: {}\n",
);
const chartFiles: [string, Uint8Array][] = [];
const walk = (dir: string) => {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) walk(path);
    else chartFiles.push([relative(chartDir, path), readFileSync(path)]);
  }
};
walk(chartDir);
const names: string[] = [];
for (let a = 0; a < apps; a++) {
  const app = `status-${a}`;
  names.push(app);
  for (const [path, bytes] of chartFiles) tree.set(`apps/${app}/chart/${path}`, bytes);
  put(`apps/${app}/values.yaml`, `image:\n  tag: "1.${a}.0"\nbanner: "app ${a}"\n`);
  put(
    `apps/${app}/app.yaml`,
    `apiVersion: gitfleet.io/v1alpha1\nkind: App\nmetadata:\n  name: ${app}\nspec:\n  namespace: team-${a % 10}\n  helm:\n    chart: chart\n    valuesFiles: [values.yaml]\n    targets:\n      - name: prod\n        clusterSelector: {matchLabels: {env: prod}}\n        values: {replicaCount: 3}\n`,
  );
}
put(
  "placements/all.yaml",
  `apiVersion: gitfleet.io/v1alpha1\nkind: Placement\nmetadata:\n  name: all\nspec:\n  apps: [${names.join(", ")}]\n  replicaScheduling:\n    type: Duplicated\n`,
);

const cacheDir = mkdtempSync(join(tmpdir(), "gitfleet-helm-bench-"));
const environment = () => helmEnvironment({ GITFLEET_HELM: binary, GITFLEET_CACHE_DIR: cacheDir });

async function measure(label: string, renderer: ChartRenderer, cache = createParseCache()) {
  const before = { ...renderer.stats };
  const start = performance.now();
  const loaded = await loadFleetWithBuilds(tree, { charts: renderer }, cache);
  const ms = performance.now() - start;
  if (!loaded.model) throw new Error(loaded.problems.map((p) => p.message).join("\n"));
  const objects = loaded.model.apps.reduce((sum, app) => sum + app.resources.length, 0);
  const runs = renderer.stats.helmRuns - before.helmRuns;
  const hits = renderer.stats.hits - before.hits;
  console.log(
    `  ${label.padEnd(44)} ${(ms / 1000).toFixed(2).padStart(7)} s  helm processes ${String(runs).padStart(4)}  cache hits ${String(hits).padStart(4)}  objects ${objects}`,
  );
  return cache;
}

console.log(`helm: ${apps} Helm apps × 2 renders (default + prod values target), ${binary}`);
const first = new ChartRenderer(environment());
const cache = await measure("cold (every helm template runs)", first);
await measure("restarted process, same cache directory", new ChartRenderer(environment()));
await measure("same process, unchanged commit", first, cache);
console.log(`  peak RSS ${peakRssMiB().toFixed(0)} MiB`);
rmSync(cacheDir, { recursive: true, force: true });
