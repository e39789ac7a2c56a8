import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { parseAllDocuments, stringify } from "yaml";
import { fileTreeFromText } from "../../../src/model/file-tree.js";
import type { JsonMap } from "../../../src/model/json.js";
import { buildKustomization } from "../../../src/model/kustomize/build-kustomization.js";

// gitfleet's kustomize engine against `kubectl kustomize` (kustomize v5.5, preinstalled): random
// kustomizations over a Deployment, a Service, a ConfigMap, a Secret and a ServiceAccount, with an
// overlay on top of the base half the time; both must build the same objects.

const root = mkdtempSync(join(tmpdir(), "gitfleet-kustomize-"));
afterAll(() => (process.env.KEEP_KUSTOMIZE ? undefined : rmSync(root, { recursive: true, force: true })));

const IMAGES = [
  "nginx",
  "nginx:1.25",
  "registry.example.com:5000/team/app:2.0",
  `busybox@sha256:${"a".repeat(64)}`,
];
const nameArb = fc.constantFrom("web", "api", "cache");
const labelsArb = fc.dictionary(
  fc.constantFrom("team", "env", "tier", "app.kubernetes.io/part-of"),
  fc.constantFrom("a", "prod", "x-1"),
  { maxKeys: 2 },
);

const transformersArb = fc.record(
  {
    namespace: fc.constantFrom("shop", "games"),
    namePrefix: fc.constantFrom("p-", "team-"),
    nameSuffix: fc.constantFrom("-v2", "-x"),
    commonLabels: labelsArb,
    commonAnnotations: fc.dictionary(fc.constantFrom("note", "owner"), fc.constantFrom("x", "platform"), {
      maxKeys: 2,
    }),
    labels: fc.array(
      fc.record(
        { pairs: labelsArb, includeSelectors: fc.boolean(), includeTemplates: fc.boolean() },
        { requiredKeys: ["pairs"] },
      ),
      // One entry: kustomize v5.5 shares field lists between several (a deviation gitfleet lists).
      { maxLength: 1 },
    ),
    replicas: fc.array(fc.record({ name: nameArb, count: fc.integer({ min: 0, max: 9 }) }), { maxLength: 2 }),
    images: fc.array(
      fc.oneof(
        fc.record({ name: fc.constantFrom("nginx", "busybox"), newTag: fc.constantFrom("1.26", "stable") }),
        fc.record({
          name: fc.constantFrom("nginx", "registry.example.com:5000/team/app"),
          newName: fc.constantFrom("mirror.example.com/nginx", "local/app"),
        }),
        fc.record({
          name: fc.constantFrom("nginx", "busybox"),
          digest: fc.constant(`sha256:${"b".repeat(64)}`),
        }),
      ),
      { maxLength: 2 },
    ),
  },
  { requiredKeys: [] },
);

const caseArb = fc.record({
  workload: nameArb,
  image: fc.constantFrom(...IMAGES),
  initImage: fc.option(fc.constantFrom(...IMAGES), { nil: undefined }),
  replicas: fc.integer({ min: 1, max: 5 }),
  base: transformersArb,
  overlay: fc.option(transformersArb, { nil: undefined }),
});

type Case = typeof caseArb extends fc.Arbitrary<infer T> ? T : never;

function files(c: Case) {
  const deployment = {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: c.workload, labels: { app: c.workload } },
    spec: {
      replicas: c.replicas,
      selector: { matchLabels: { app: c.workload } },
      template: {
        metadata: { labels: { app: c.workload } },
        spec: {
          serviceAccountName: "runner",
          ...(c.initImage ? { initContainers: [{ name: "init", image: c.initImage }] } : {}),
          containers: [
            {
              name: "main",
              image: c.image,
              envFrom: [{ configMapRef: { name: "settings" } }],
              env: [{ name: "TOKEN", valueFrom: { secretKeyRef: { name: "creds", key: "token" } } }],
            },
          ],
          volumes: [{ name: "config", configMap: { name: "settings" } }],
        },
      },
    },
  };
  const service = {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: c.workload },
    spec: { selector: { app: c.workload }, ports: [{ port: 80, targetPort: 8080 }] },
  };
  const configMap = {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "settings" },
    data: { LEVEL: "info" },
  };
  const secret = {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "creds" },
    type: "Opaque",
    stringData: { token: "placeholder" },
  };
  const account = { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "runner" } };
  const out: Record<string, string> = {
    "base/workload.yaml": [deployment, service].map((d) => stringify(d)).join("---\n"),
    "base/config.yaml": [configMap, secret, account].map((d) => stringify(d)).join("---\n"),
    "base/kustomization.yaml": stringify({ resources: ["workload.yaml", "config.yaml"], ...clean(c.base) }),
  };
  if (c.overlay)
    out["overlay/kustomization.yaml"] = stringify({ resources: ["../base"], ...clean(c.overlay) });
  return out;
}

// Empty lists and maps are left out, as a person writing the file would.
function clean(spec: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(spec).filter(
      ([, v]) =>
        !(Array.isArray(v) && v.length === 0) &&
        !(typeof v === "object" && v !== null && !Array.isArray(v) && Object.keys(v).length === 0),
    ),
  );
}

function sortObjects(objects: readonly JsonMap[]): JsonMap[] {
  const key = (o: JsonMap) => {
    const m = (o.metadata ?? {}) as JsonMap;
    return `${String(o.kind)}/${String(m.namespace ?? "")}/${String(m.name)}`;
  };
  return [...objects].sort((a, b) => (key(a) < key(b) ? -1 : 1));
}

describe("the kustomize engine against kubectl kustomize", () => {
  it("builds what kubectl kustomize builds for 120 random kustomizations", () => {
    const cases = fc.sample(caseArb, { numRuns: 120, seed: 20261201 });
    const differences: string[] = [];
    cases.forEach((c, i) => {
      const difference = compareWithKubectl(c, join(root, `case-${i}`));
      if (difference) differences.push(`case ${i}: ${difference}`);
    });
    expect(differences.slice(0, 2)).toEqual([]);
  });
});

// Builds one case with kubectl and with gitfleet; says how they differ, or undefined when they agree.
function compareWithKubectl(c: Case, dir: string): string | undefined {
  const text = files(c);
  for (const [path, content] of Object.entries(text)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  const target = c.overlay ? "overlay" : "base";
  const kubectl = spawnSync("kubectl", ["kustomize", join(dir, target)], { encoding: "utf8" });
  const built = buildKustomization(fileTreeFromText(text), target);
  if (kubectl.status !== 0)
    return built.problems.length === 0
      ? `kubectl failed (${kubectl.stderr.trim()}), gitfleet built it`
      : undefined;
  const theirs = sortObjects(parseAllDocuments(kubectl.stdout).map((d) => d.toJS() as JsonMap));
  const ours = sortObjects(built.objects.map((o) => o.object));
  if (deepEqual(ours, theirs)) return undefined;
  return `${join(dir, target)}\n  kubectl ${JSON.stringify(theirs)}\n  gitfleet ${JSON.stringify(ours)}\n  problems ${JSON.stringify(built.problems)}`;
}

function deepEqual(a: unknown, b: unknown): boolean {
  try {
    expect(a).toEqual(b);
    return true;
  } catch {
    return false;
  }
}
