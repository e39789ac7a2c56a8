import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { parseAllDocuments } from "yaml";
import { buildKustomization } from "../src/manifests/kustomize/build-kustomization.js";
import { fileTreeFromText } from "../src/model/file-tree.js";
import { peakRssMiB } from "./measure.js";

/**
 * Benchmark: a fleet kept as Kustomize — N apps, each a base (Deployment, Service, generated
 * ConfigMap, labels, namespace) and one overlay per cluster (an image tag, replicas, a strategic
 * merge patch) — built by gitfleet's engine, every overlay, and by `kubectl kustomize` (v5.5) on a
 * sample of overlays (one process per overlay, as a CI job or Argo CD's repo server runs it). Prints
 * the time per rendered object of each, their ratio, and whether the sample's output is identical.
 * Asserts nothing.
 */
const apps = Number(process.env.BENCH_APPS ?? 1000);
const clusters = Number(process.env.BENCH_CLUSTERS ?? 20);
const sample = Math.min(apps * clusters, Number(process.env.BENCH_KUBECTL_SAMPLE ?? 100));
const run = promisify(execFile);

const files: Record<string, string> = {};
for (let a = 0; a < apps; a++) {
  const app = `app-${a}`;
  files[`${app}/base/kustomization.yaml`] = [
    `namespace: team-${a % 50}`,
    "resources: [deployment.yaml, service.yaml]",
    "labels:",
    `  - pairs: {app.kubernetes.io/name: ${app}}`,
    "    includeSelectors: true",
    "configMapGenerator:",
    "  - name: settings",
    `    literals: [APP=${app}, LEVEL=info]`,
    "",
  ].join("\n");
  files[`${app}/base/deployment.yaml`] = [
    "apiVersion: apps/v1",
    "kind: Deployment",
    `metadata: {name: ${app}}`,
    "spec:",
    "  replicas: 2",
    `  selector: {matchLabels: {app: ${app}}}`,
    "  template:",
    `    metadata: {labels: {app: ${app}}}`,
    "    spec:",
    "      containers:",
    "        - name: main",
    `          image: registry.example.com/${app}:1.0.0`,
    "          envFrom: [{configMapRef: {name: settings}}]",
    "          resources: {requests: {cpu: 100m, memory: 128Mi}}",
    "",
  ].join("\n");
  files[`${app}/base/service.yaml`] = [
    "apiVersion: v1",
    "kind: Service",
    `metadata: {name: ${app}}`,
    "spec:",
    `  selector: {app: ${app}}`,
    "  ports: [{port: 80, targetPort: 8080}]",
    "",
  ].join("\n");
  for (let c = 0; c < clusters; c++) {
    files[`${app}/overlays/cluster-${c}/kustomization.yaml`] = [
      "resources: [../../base]",
      "images:",
      `  - name: registry.example.com/${app}`,
      `    newTag: 1.0.${c}`,
      "replicas:",
      `  - name: ${app}`,
      `    count: ${1 + (c % 4)}`,
      "patches:",
      "  - patch: |",
      "      apiVersion: apps/v1",
      "      kind: Deployment",
      `      metadata: {name: ${app}}`,
      "      spec:",
      "        template:",
      "          metadata:",
      `            annotations: {cluster: cluster-${c}}`,
      "",
    ].join("\n");
  }
}
const tree = fileTreeFromText(files);
const overlays = Array.from(
  { length: apps * clusters },
  (_, i) => `app-${Math.floor(i / clusters)}/overlays/cluster-${i % clusters}`,
);

// gitfleet: every overlay.
global.gc?.();
const started = performance.now();
let objects = 0;
const ours = new Map<string, unknown[]>();
const sampled = new Set(
  overlays.filter((_, i) => i % Math.max(1, Math.floor(overlays.length / sample)) === 0).slice(0, sample),
);
for (const overlay of overlays) {
  const built = buildKustomization(tree, overlay);
  if (built.problems.length > 0) throw new Error(`${overlay}: ${built.problems[0]?.message}`);
  objects += built.objects.length;
  if (sampled.has(overlay))
    ours.set(
      overlay,
      built.objects.map((o) => o.object),
    );
}
const oursMs = performance.now() - started;

// kubectl kustomize: the sample, from files on disk.
const root = mkdtempSync(join(tmpdir(), "gitfleet-kustomize-bench-"));
for (const overlay of sampled) {
  const app = overlay.split("/")[0] as string;
  for (const [path, text] of Object.entries(files))
    if (path.startsWith(`${app}/base/`) || path.startsWith(`${overlay}/`)) {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), text);
    }
}
const kubectlStarted = performance.now();
let theirObjects = 0;
let identical = 0;
for (const overlay of sampled) {
  const { stdout } = await run("kubectl", ["kustomize", join(root, overlay)], { maxBuffer: 2 ** 26 });
  const theirs = parseAllDocuments(stdout).map((d) => d.toJS());
  theirObjects += theirs.length;
  if (JSON.stringify(sortByName(theirs)) === JSON.stringify(sortByName(ours.get(overlay) ?? []))) identical++;
}
const kubectlMs = performance.now() - kubectlStarted;
rmSync(root, { recursive: true, force: true });

const perObject = (ms: number, count: number) => (ms * 1000) / count;
const oursPer = perObject(oursMs, objects);
const theirsPer = perObject(kubectlMs, theirObjects);
console.log(
  `kustomize: ${apps} apps × ${clusters} clusters = ${overlays.length} overlays, ${objects} objects`,
);
console.log(`  gitfleet       ${(oursMs / 1000).toFixed(2)} s for all, ${oursPer.toFixed(1)} µs per object`);
console.log(
  `  kubectl kustomize ${(kubectlMs / 1000).toFixed(2)} s for ${sampled.size} overlays, ${theirsPer.toFixed(1)} µs per object`,
);
console.log(
  `  gitfleet is ${(theirsPer / oursPer).toFixed(0)}× faster per object; sample identical: ${identical}/${sampled.size}`,
);
console.log(`  peak RSS ${peakRssMiB().toFixed(0)} MiB`);

// Objects compared with keys in a stable order, whatever order either tool wrote them in.
function sortByName(list: unknown[]): unknown[] {
  const stable = (value: unknown): unknown =>
    Array.isArray(value)
      ? value.map(stable)
      : value && typeof value === "object"
        ? Object.fromEntries(
            Object.keys(value)
              .sort()
              .map((k) => [k, stable((value as Record<string, unknown>)[k])]),
          )
        : value;
  return list.map(stable).sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));
}
