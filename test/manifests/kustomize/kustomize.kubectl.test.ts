import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { parseAllDocuments, stringify } from "yaml";
import type { JsonMap } from "../../../src/apimachinery/json.js";
import { buildKustomization } from "../../../src/manifests/kustomize/build-kustomization.js";
import { fileTreeFromText } from "../../../src/model/file-tree.js";
import { mapConcurrently } from "../../../src/util/map-concurrently.js";

const run = promisify(execFile);

// gitfleet's kustomize engine against `kubectl kustomize` (kustomize v5.5, preinstalled): random
// kustomizations over a Deployment, a Service, a ConfigMap, a Secret and a ServiceAccount, with an
// overlay on top of the base half the time; both must build the same objects.

const root = mkdtempSync(join(tmpdir(), "gitfleet-kustomize-"));
// Five hundred cases' directories: removed asynchronously, with time for a loaded machine.
afterAll(
  () => (process.env.KEEP_KUSTOMIZE ? undefined : rm(root, { recursive: true, force: true })),
  120_000,
);

const IMAGES = [
  "nginx",
  "nginx:1.25",
  "registry.example.com:5000/team/app:2.0",
  // A registry port and no tag: the port's colon is not a tag's.
  "registry.example.com:5000/team/app",
  `registry.example.com:5000/team/app@sha256:${"a".repeat(64)}`,
  `busybox@sha256:${"a".repeat(64)}`,
];
// The Deployment is "web" and the StatefulSet "db"; "api" names nothing, so a few cases check that
// both refuse a replicas entry or a patch for an object that is not there.
const rarely = <T>(usual: fc.Arbitrary<T>, rare: fc.Arbitrary<T>) =>
  fc.oneof({ arbitrary: usual, weight: 30 }, { arbitrary: rare, weight: 1 });
const nameArb = rarely(fc.constantFrom("web", "db"), fc.constant("api"));
const deploymentNameArb = rarely(fc.constant("web"), fc.constant("api"));
const labelValueArb = fc.constantFrom("a", "prod", "x-1");
const labelsArb = fc.dictionary(fc.constantFrom("team", "env"), labelValueArb, { maxKeys: 2 });
// A `labels` entry that reaches selectors uses keys of its own, and one that does not uses a key of
// its layer: when a later layer gives a key a new value through an entry that reaches fewer places,
// kustomize v5.5's result depends on field lists it shares between entries (a deviation the README
// lists).
const labelEntryArb = (ownKey: string) =>
  fc.oneof(
    fc.record({
      pairs: fc.dictionary(fc.constantFrom("tier", "team"), labelValueArb, { maxKeys: 2 }),
      includeSelectors: fc.constant(true),
    }),
    fc.record(
      {
        pairs: fc.dictionary(fc.constant(ownKey), labelValueArb, { maxKeys: 1 }),
        includeSelectors: fc.constant(false),
        includeTemplates: fc.boolean(),
      },
      { requiredKeys: ["pairs"] },
    ),
  );

const replicasArb = fc.array(fc.record({ name: nameArb, count: fc.integer({ min: 0, max: 9 }) }), {
  maxLength: 2,
});
const imagesArb = fc.array(
  fc.oneof(
    fc.record({
      name: fc.constantFrom("nginx", "busybox", "registry.example.com:5000/team/app"),
      newTag: fc.constantFrom("1.26", "stable"),
    }),
    fc.record({
      name: fc.constantFrom("nginx", "registry.example.com:5000/team/app"),
      newName: fc.constantFrom("mirror.example.com/nginx", "local/app"),
    }),
    fc.record({ name: fc.constantFrom("nginx", "busybox"), digest: fc.constant(`sha256:${"b".repeat(64)}`) }),
  ),
  { maxLength: 2 },
);

// Strategic merge patches of the Deployment: fields merged by key, lists replaced, directives.
const deploymentSpecPatchArb = fc.oneof(
  fc.record({ replicas: fc.integer({ min: 0, max: 9 }) }),
  fc.constant({
    template: { spec: { containers: [{ name: "main", env: [{ name: "PATCHED", value: "yes" }] }] } },
  }),
  fc.constant({ template: { spec: { containers: [{ name: "sidecar", image: "busybox" }] } } }),
  fc.constant({ template: { metadata: { annotations: { patched: "true" } } } }),
  fc.constant({
    template: {
      spec: {
        containers: [
          { name: "main", $patch: "delete" },
          { name: "other", image: "nginx" },
        ],
      },
    },
  }),
  fc.constant({ template: { spec: { volumes: [{ name: "config", $patch: "delete" }] } } }),
);
const targetArb = fc.constantFrom<Record<string, string>>(
  { kind: "Deployment" },
  { group: "apps", version: "v1", kind: "Deployment" },
  { kind: "Deploy.*" },
  { labelSelector: "app in (web,api)" },
  { name: "web|api|cache", kind: "Deployment" },
  { annotationSelector: "owner" },
);
const jsonOpsArb = fc.constantFrom(
  [{ op: "replace", path: "/spec/replicas", value: 7 }],
  [{ op: "add", path: "/spec/template/metadata/labels/patched", value: "json" }],
  [{ op: "remove", path: "/spec/template/spec/serviceAccountName" }],
  [{ op: "add", path: "/spec/template/spec/containers/0/args", value: ["--level=debug"] }],
  [
    { op: "test", path: "/kind", value: "Deployment" },
    { op: "replace", path: "/spec/replicas", value: 2 },
  ],
);
const patchArb = fc.oneof(
  deploymentNameArb.chain((name) =>
    deploymentSpecPatchArb.map((spec) => ({
      patch: stringify({ apiVersion: "apps/v1", kind: "Deployment", metadata: { name }, spec }),
    })),
  ),
  fc.record({
    patch: deploymentSpecPatchArb.map((spec) =>
      stringify({ apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "any" }, spec }),
    ),
    target: targetArb,
  }),
  fc.record({ patch: jsonOpsArb.map((ops) => stringify(ops)), target: targetArb }),
  fc.constant({ path: "patch-service.yaml" }),
  fc.constant({
    patch: stringify([{ op: "replace", path: "/spec/size", value: 5 }]),
    target: { group: "example.com", kind: "Widget" },
  }),
  fc.constant({
    patch: stringify({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "settings" },
      data: { EXTRA: "1" },
    }),
  }),
);
// Generators: a layer creates its own ConfigMap and Secret, or merges into (or replaces) the base's
// settings and creds; the overlay sometimes merges into the base's generated ConfigMap.
const generatorIdentityArb = (layer: string): fc.Arbitrary<{ name: string; behavior: string }> =>
  fc
    .oneof(
      fc.record({ name: fc.constant(`${layer}-config`), behavior: fc.constant("create") }),
      fc.record({ name: fc.constant("settings"), behavior: fc.constantFrom("merge", "replace") }),
    )
    .map((identity): { name: string; behavior: string } => identity)
    .chain((identity) =>
      layer === "base"
        ? fc.constantFrom(identity, { name: "base-config", behavior: "create" })
        : rarely(fc.constant(identity), fc.constant({ name: "base-config", behavior: "merge" })),
    );
const generatorArb = (layer: string) =>
  fc
    .tuple(
      generatorIdentityArb(layer),
      fc.record(
        {
          literals: fc.uniqueArray(fc.constantFrom("A=1", "B=two", "C='quoted'", 'D="x=y"', "E="), {
            maxLength: 3,
          }),
          files: fc.uniqueArray(
            fc.constantFrom("files/app.properties", "renamed.txt=files/app.properties", "files/blob.bin"),
            { maxLength: 2 },
          ),
          envs: fc.array(fc.constant("files/settings.env"), { maxLength: 1 }),
          options: fc.record(
            {
              disableNameSuffixHash: fc.boolean(),
              labels: fc.dictionary(fc.constantFrom("generated", "team"), fc.constantFrom("enabled", "a"), {
                maxKeys: 1,
              }),
              annotations: fc.dictionary(fc.constantFrom("note"), fc.constantFrom("gen"), { maxKeys: 1 }),
              immutable: fc.boolean(),
            },
            { requiredKeys: [] },
          ),
        },
        { requiredKeys: [] },
      ),
    )
    .map(([identity, rest]) => ({ ...identity, ...rest }));
const secretGeneratorArb = (layer: string) =>
  fc
    .record(
      {
        name: fc.constantFrom(`${layer}-secret`, "creds"),
        type: fc.constantFrom("Opaque", "kubernetes.io/tls"),
        literals: fc.uniqueArray(
          fc.constantFrom("token=placeholder", "tls.crt=placeholder", "tls.key=placeholder"),
          {
            maxLength: 3,
          },
        ),
      },
      { requiredKeys: ["name"] },
    )
    .map((entry) => ({ ...entry, behavior: entry.name === "creds" ? "merge" : "create" }));
const replacementArb = fc.constantFrom(
  {
    source: { kind: "ConfigMap", name: "settings", fieldPath: "data.LEVEL" },
    targets: [
      {
        select: { kind: "Deployment" },
        fieldPaths: ["spec.template.spec.containers.[name=main].env.[name=LEVEL].value"],
      },
    ],
  },
  {
    source: { kind: "Deployment", fieldPath: "spec.replicas" },
    targets: [{ select: { kind: "Widget" }, fieldPaths: ["spec.size"] }],
  },
  {
    source: { kind: "Service", fieldPath: "metadata.name" },
    targets: [{ select: { kind: "ConfigMap" }, fieldPaths: ["data.SERVICE"], options: { create: true } }],
  },
  {
    source: {
      kind: "Deployment",
      fieldPath: "spec.template.spec.containers.0.image",
      options: { delimiter: ":", index: 0 },
    },
    targets: [
      {
        select: { kind: "Widget" },
        fieldPaths: ["spec.image"],
        options: { delimiter: "/", index: 1 },
      },
    ],
  },
  {
    source: { kind: "Secret", name: "creds", fieldPath: "type" },
    targets: [
      {
        select: { kind: "ConfigMap" },
        reject: [{ name: "settings" }],
        fieldPaths: ["data.LEVEL"],
        options: { create: true },
      },
    ],
  },
);

const transformersArb = (layer: string) =>
  fc.record(
    {
      namespace: fc.constantFrom("shop", "games"),
      namePrefix: fc.constantFrom("p-", "team-"),
      nameSuffix: fc.constantFrom("-v2", "-x"),
      commonLabels: labelsArb,
      commonAnnotations: fc.dictionary(fc.constantFrom("note", "owner"), fc.constantFrom("x", "platform"), {
        maxKeys: 2,
      }),
      labels: fc.array(labelEntryArb(`${layer}.example.com/part-of`), { maxLength: 1 }),
      replicas: replicasArb,
      images: imagesArb,
      patches: fc.array(patchArb, { maxLength: 2 }),
      patchesStrategicMerge: fc.array(
        fc.constantFrom(
          "patch-service.yaml",
          stringify({
            apiVersion: "v1",
            kind: "ServiceAccount",
            metadata: { name: "runner" },
            automountServiceAccountToken: false,
          }),
        ),
        { maxLength: 1 },
      ),
      patchesJson6902: fc.array(
        deploymentNameArb.chain((name) =>
          jsonOpsArb.map((ops) => ({
            target: { group: "apps", version: "v1", kind: "Deployment", name },
            patch: stringify(ops),
          })),
        ),
        { maxLength: 1 },
      ),
      configMapGenerator: fc.array(generatorArb(layer), { maxLength: 1 }),
      secretGenerator: fc.array(secretGeneratorArb(layer), { maxLength: 1 }),
      generatorOptions: fc.record(
        { disableNameSuffixHash: fc.boolean(), labels: fc.constant({ generated: "true" }) },
        { requiredKeys: [] },
      ),
      replacements: fc.array(replacementArb, { maxLength: 1 }),
    },
    { requiredKeys: [] },
  );

const caseArb = fc.record({
  workload: fc.constant("web"),
  image: fc.constantFrom(...IMAGES),
  initImage: fc.option(fc.constantFrom(...IMAGES), { nil: undefined }),
  replicas: fc.integer({ min: 1, max: 5 }),
  base: transformersArb("base"),
  component: fc.option(transformersArb("component"), { nil: undefined }),
  overlay: fc.option(transformersArb("overlay"), { nil: undefined }),
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
              envFrom: [{ configMapRef: { name: "settings" } }, { configMapRef: { name: "base-config" } }],
              env: [
                { name: "TOKEN", valueFrom: { secretKeyRef: { name: "creds", key: "token" } } },
                { name: "GENERATED", valueFrom: { secretKeyRef: { name: "base-secret", key: "token" } } },
                { name: "LEVEL", value: "unset" },
              ],
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
  const rbac = [
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "Role",
      metadata: { name: "reader" },
      rules: [{ apiGroups: [""], resources: ["configmaps"], resourceNames: ["settings"], verbs: ["get"] }],
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: { name: "reader" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "reader" },
      subjects: [
        { kind: "ServiceAccount", name: "runner" },
        { kind: "ServiceAccount", name: "default" },
      ],
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: "viewer" },
      rules: [{ apiGroups: ["apps"], resources: ["deployments"], verbs: ["list"] }],
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: "viewer" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "viewer" },
      subjects: [{ kind: "ServiceAccount", name: "runner", namespace: "default" }],
    },
  ];
  const widget = {
    apiVersion: "example.com/v1",
    kind: "Widget",
    metadata: { name: "gadget", labels: { app: c.workload } },
    spec: { size: 1, image: "registry/widget/v1", configMap: "settings" },
  };
  const more = [
    {
      apiVersion: "apps/v1",
      kind: "StatefulSet",
      metadata: { name: "db" },
      spec: {
        serviceName: c.workload,
        selector: { matchLabels: { app: "db" } },
        template: {
          metadata: { labels: { app: "db" } },
          spec: {
            affinity: {
              podAntiAffinity: {
                requiredDuringSchedulingIgnoredDuringExecution: [
                  { topologyKey: "kubernetes.io/hostname", labelSelector: { matchLabels: { app: "db" } } },
                ],
              },
            },
            containers: [{ name: "db", image: "postgres:16", envFrom: [{ secretRef: { name: "creds" } }] }],
          },
        },
        volumeClaimTemplates: [{ metadata: { name: "data" }, spec: { accessModes: ["ReadWriteOnce"] } }],
      },
    },
    {
      apiVersion: "policy/v1",
      kind: "PodDisruptionBudget",
      metadata: { name: "db" },
      spec: { minAvailable: 1, selector: { matchLabels: { app: "db" } } },
    },
    {
      apiVersion: "autoscaling/v2",
      kind: "HorizontalPodAutoscaler",
      metadata: { name: c.workload },
      spec: {
        scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: c.workload },
        minReplicas: 1,
        maxReplicas: 5,
      },
    },
    {
      apiVersion: "batch/v1",
      kind: "CronJob",
      metadata: { name: "report" },
      spec: {
        schedule: "0 * * * *",
        jobTemplate: {
          spec: {
            template: {
              spec: {
                restartPolicy: "Never",
                containers: [
                  {
                    name: "report",
                    image: "busybox",
                    envFrom: [{ configMapRef: { name: "overlay-config" } }],
                  },
                ],
              },
            },
          },
        },
      },
    },
  ];
  const servicePatch = {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: c.workload },
    spec: { ports: [{ port: 443, targetPort: 8443, name: "https" }] },
  };
  const out: Record<string, string> = {
    "base/workload.yaml": [deployment, service].map((d) => stringify(d)).join("---\n"),
    "base/config.yaml": [configMap, secret, account].map((d) => stringify(d)).join("---\n"),
    "base/rbac.yaml": rbac.map((d) => stringify(d)).join("---\n"),
    "base/widget.yaml": stringify(widget),
    "base/more.yaml": more.map((d) => stringify(d)).join("---\n"),
    "base/kustomization.yaml": stringify({
      resources: ["workload.yaml", "config.yaml", "rbac.yaml", "widget.yaml", "more.yaml"],
      ...clean(c.base),
    }),
  };
  for (const dir of ["base", "component", "overlay"]) {
    out[`${dir}/patch-service.yaml`] = stringify(servicePatch);
    out[`${dir}/files/app.properties`] = "color=blue\nsize=2\n";
    out[`${dir}/files/settings.env`] = "# settings\nMODE=fast\n\nEMPTY\nURL=http://x?a=b\n";
  }
  if (c.component)
    out["component/kustomization.yaml"] = stringify({
      apiVersion: "kustomize.config.k8s.io/v1alpha1",
      kind: "Component",
      ...clean(c.component),
    });
  if (c.overlay || c.component)
    out["overlay/kustomization.yaml"] = stringify({
      resources: ["../base"],
      ...(c.component ? { components: ["../component"] } : {}),
      ...clean(c.overlay ?? {}),
    });
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
  it("builds what kubectl kustomize builds for 500 random kustomizations", { timeout: 600_000 }, async () => {
    const cases = fc.sample(caseArb, { numRuns: 500, seed: Number(process.env.KUSTOMIZE_SEED ?? 20261202) });
    const differences: string[] = [];
    let built = 0;
    const refusals: string[] = [];
    const outcomes = await mapConcurrently(cases, 3, (c, i) =>
      compareWithKubectl(c, join(root, `case-${i}`)),
    );
    outcomes.forEach((outcome, i) => {
      if (outcome === "built") built++;
      else if (!outcome.startsWith("refused")) differences.push(`case ${i}: ${outcome}`);
      else if (process.env.KUSTOMIZE_OUT) refusals.push(outcome);
    });
    if (process.env.KUSTOMIZE_OUT)
      writeFileSync(process.env.KUSTOMIZE_OUT, [...differences, ...refusals].join("\n"));
    expect(differences.slice(0, 3)).toEqual([]);
    // Most cases build (the rest are refused by both, each for its own reason).
    expect(built).toBeGreaterThan(cases.length * 0.6);
  });
});

// Builds one case with kubectl and with gitfleet: "built" or "refused" when they agree, else how they differ.
async function compareWithKubectl(c: Case, dir: string): Promise<string> {
  const text = files(c);
  const tree = new Map(fileTreeFromText(text));
  // Bytes that are not UTF-8: a ConfigMap keeps them in binaryData.
  for (const d of ["base", "component", "overlay"])
    tree.set(`${d}/files/blob.bin`, Uint8Array.from([0, 98, 255, 254]));
  for (const path of tree.keys()) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), tree.get(path) as Uint8Array);
  }
  const target = c.overlay || c.component ? "overlay" : "base";
  const kubectl = await run("kubectl", ["kustomize", join(dir, target)], { maxBuffer: 64 * 2 ** 20 }).then(
    ({ stdout }) => ({ status: 0, stdout, stderr: "" }),
    (error: { stderr?: string }) => ({ status: 1, stdout: "", stderr: String(error.stderr ?? error) }),
  );
  const built = buildKustomization(tree, target);
  if (kubectl.status !== 0)
    return built.problems.length === 0
      ? `kubectl failed (${kubectl.stderr.trim()}), gitfleet built it`
      : `refused ${built.problems[0]?.message} | ${kubectl.stderr
          .split("\n")
          .filter((l) => !l.startsWith("# Warning"))
          .join(" ")}`;
  if (built.problems.length > 0)
    return `gitfleet refused what kubectl built: ${JSON.stringify(built.problems)}`;
  const theirs = sortObjects(parseAllDocuments(kubectl.stdout).map((d) => d.toJS() as JsonMap));
  const ours = sortObjects(built.objects.map((o) => o.object));
  if (deepEqual(ours, theirs)) return "built";
  return `${join(dir, target)}\n  ${firstDifference(theirs, ours)}\n  problems ${JSON.stringify(built.problems)}`;
}

function deepEqual(a: unknown, b: unknown): boolean {
  try {
    expect(a).toEqual(b);
    return true;
  } catch {
    return false;
  }
}

// Where two builds first differ: the object, the path and both values.
function firstDifference(theirs: readonly JsonMap[], ours: readonly JsonMap[]): string {
  if (theirs.length !== ours.length)
    return `kubectl built ${theirs.map(label).join(", ")}; gitfleet built ${ours.map(label).join(", ")}`;
  for (let i = 0; i < theirs.length; i++) {
    const path = differingPath(theirs[i], ours[i], []);
    if (path)
      return `${label(theirs[i] as JsonMap)} at ${path.at}: kubectl ${JSON.stringify(path.theirs)}, gitfleet ${JSON.stringify(path.ours)}`;
  }
  return "order";
}

function label(object: JsonMap): string {
  const m = (object.metadata ?? {}) as JsonMap;
  return `${String(object.kind)} ${String(m.namespace ?? "")}/${String(m.name)}`;
}

function differingPath(
  a: unknown,
  b: unknown,
  at: string[],
): { at: string; theirs: unknown; ours: unknown } | undefined {
  if (typeof a === "object" && a !== null && typeof b === "object" && b !== null) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const key of keys) {
      const found = differingPath((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key], [
        ...at,
        key,
      ]);
      if (found) return found;
    }
    return undefined;
  }
  return deepEqual(a, b) ? undefined : { at: at.join("."), theirs: a, ours: b };
}
