import fc from "fast-check";
import { type FileTree, fileTreeFromText } from "../../src/model/file-tree.js";

/** A small fleet described by a few knobs, written out as a fleet repo; edits change the knobs. */
export interface FleetSpec {
  readonly clusters: readonly { readonly name: string; readonly env: string; readonly provider: string }[];
  readonly apps: readonly AppSpec[];
  readonly registries: Readonly<Record<string, string>>;
  /** The scope of the Widget CRD that app "widgets" defines, for the Widget in app "gadgets". */
  readonly widgetScope: "Namespaced" | "Cluster";
  /** Where the Placement "critical" (priority 10, by label) puts what it selects. */
  readonly criticalClusters: readonly string[];
  /** A line of YAML that does not parse, in this app's deployment file, when set. */
  readonly broken?: string | undefined;
  readonly noise: number;
}

export interface AppSpec {
  readonly name: string;
  readonly namespace: string;
  readonly replicas: number;
  readonly tag: number;
  /** The ConfigMap the Deployment reads (its own, or another app's in the same namespace). */
  readonly configRef: string;
  readonly clusters: readonly string[];
  readonly scheduling: "Duplicated" | "Weighted" | "Aggregated";
  /** Labelled tier=critical, which the higher-priority Placement "critical" selects by label. */
  readonly critical: boolean;
}

export const BASE_SPEC: FleetSpec = {
  clusters: [
    { name: "east", env: "prod", provider: "aws" },
    { name: "west", env: "prod", provider: "gcp" },
    { name: "north", env: "staging", provider: "idc" },
    { name: "south", env: "prod", provider: "idc" },
  ],
  apps: [
    app("web", "shop", 6, "Weighted", ["east", "west", "south"]),
    app("api", "shop", 4, "Duplicated", ["east", "west"]),
    app("cart", "shop", 3, "Aggregated", ["west", "north"]),
    app("jobs", "batch", 2, "Weighted", ["north", "south"]),
    app("docs", "batch", 1, "Duplicated", ["south"]),
  ],
  registries: {
    aws: "registry.aws.example.com",
    gcp: "registry.gcp.example.com",
    idc: "registry.idc.example.com",
  },
  widgetScope: "Namespaced",
  criticalClusters: ["south"],
  noise: 0,
};

function app(
  name: string,
  namespace: string,
  replicas: number,
  scheduling: AppSpec["scheduling"],
  clusters: string[],
): AppSpec {
  return { name, namespace, replicas, tag: 1, configRef: name, clusters, scheduling, critical: false };
}

/** Writes the spec out as a fleet repo. */
export function fleetFiles(spec: FleetSpec): FileTree {
  const files: Record<string, string> = { "README.md": `noise ${spec.noise}\n` };
  for (const cluster of spec.clusters)
    files[`clusters/${cluster.name}.yaml`] =
      `apiVersion: gitfleet.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: ${cluster.name}\n  labels:\n    env: ${cluster.env}\nspec:\n  provider: ${cluster.provider}\n  region: r-${cluster.name}\n`;
  for (const [provider, registry] of Object.entries(spec.registries))
    files[`overrides/registry-${provider}.yaml`] =
      `apiVersion: gitfleet.io/v1alpha1\nkind: Override\nmetadata:\n  name: registry-${provider}\nspec:\n  resourceSelectors:\n    - apiVersion: apps/v1\n      kind: Deployment\n  overrideRules:\n    - targetCluster:\n        fieldSelector:\n          matchExpressions:\n            - {key: provider, operator: In, values: [${provider}]}\n      overriders:\n        imageOverrider:\n          - {component: Registry, operator: replace, value: ${registry}}\n`;
  for (const a of spec.apps) Object.assign(files, appFiles(a, spec));
  // A CRD in one app decides the scope of a custom resource in another.
  files["apps/widgets/crd.yaml"] =
    `apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.example.com\nspec:\n  group: example.com\n  scope: ${spec.widgetScope}\n  names: {kind: Widget, plural: widgets, singular: widget}\n  versions:\n    - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, properties: {spec: {type: object, x-kubernetes-preserve-unknown-fields: true}}}}}\n`;
  files["apps/gadgets/widget.yaml"] =
    "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: gadget\nspec:\n  size: 3\n";
  files["placements/widgets.yaml"] =
    "apiVersion: gitfleet.io/v1alpha1\nkind: Placement\nmetadata:\n  name: widgets\nspec:\n  apps: [widgets, gadgets]\n  clusterAffinity:\n    clusterNames: [east]\n";
  files["placements/critical.yaml"] =
    `apiVersion: gitfleet.io/v1alpha1\nkind: Placement\nmetadata:\n  name: critical\nspec:\n  priority: 10\n  resourceSelectors:\n    - apiVersion: apps/v1\n      kind: Deployment\n      labelSelector: {matchLabels: {tier: critical}}\n  clusterAffinity:\n    clusterNames: [${spec.criticalClusters.join(", ")}]\n  replicaScheduling: {type: Divided, divisionPreference: Aggregated}\n`;
  files["migrations/move.yaml"] =
    `apiVersion: gitfleet.io/v1alpha1\nkind: Migration\nmetadata:\n  name: move\nspec:\n  batches:\n    - name: first\n      apps: [${spec.apps[0]?.name ?? "web"}]\n      approved: ${spec.noise % 2 === 0}\n`;
  return fileTreeFromText(files);
}

function appFiles(a: AppSpec, spec: FleetSpec): Record<string, string> {
  const deployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: ${a.name}
  namespace: ${a.namespace}
  labels: {app: ${a.name}${a.critical ? ", tier: critical" : ""}}
spec:
  replicas: ${a.replicas}
  selector: {matchLabels: {app: ${a.name}}}
  template:
    metadata: {labels: {app: ${a.name}}}
    spec:
      containers:
        - name: main
          image: ghcr.io/example/${a.name}:1.${a.tag}.0
          envFrom: [{configMapRef: {name: ${a.configRef}}}]
`;
  const scheduling = {
    Duplicated: "  replicaScheduling: {type: Duplicated}\n",
    Aggregated: "  replicaScheduling: {type: Divided, divisionPreference: Aggregated}\n",
    Weighted: `  replicaScheduling:\n    type: Divided\n    weightPreference:\n      staticWeightList:\n        - {targetCluster: {labelSelector: {matchLabels: {env: prod}}}, weight: 2}\n        - {targetCluster: {labelSelector: {matchLabels: {env: staging}}}, weight: 1}\n`,
  }[a.scheduling];
  return {
    [`apps/${a.name}/deployment.yaml`]: spec.broken === a.name ? `${deployment}  broken: [\n` : deployment,
    [`apps/${a.name}/config.yaml`]: `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${a.name}\n  namespace: ${a.namespace}\ndata:\n  LEVEL: info\n`,
    [`placements/${a.name}.yaml`]: `apiVersion: gitfleet.io/v1alpha1\nkind: Placement\nmetadata:\n  name: ${a.name}\nspec:\n  apps: [${a.name}]\n  clusterAffinity:\n    clusterNames: [${a.clusters.join(", ")}]\n${scheduling}`,
  };
}

type Edit = (spec: FleetSpec) => FleetSpec;

const withApp =
  (index: number, change: (a: AppSpec, spec: FleetSpec) => AppSpec): Edit =>
  (spec) => {
    const target = spec.apps[index % Math.max(spec.apps.length, 1)];
    if (!target) return spec;
    return { ...spec, apps: spec.apps.map((a) => (a === target ? change(a, spec) : a)), broken: undefined };
  };

/** Edits a person might push: replicas, images, placement, cross-app references, clusters, overrides, apps added and removed, a broken file, files the renderer does not read. */
export const editArbitrary: fc.Arbitrary<Edit> = fc.oneof(
  fc
    .tuple(fc.nat(), fc.integer({ min: 0, max: 9 }))
    .map(([i, n]) => withApp(i, (a) => ({ ...a, replicas: n }))),
  fc.nat().map((i) => withApp(i, (a) => ({ ...a, tag: a.tag + 1 }))),
  fc.tuple(fc.nat(), fc.nat()).map(([i, j]) =>
    withApp(i, (a, spec) => {
      const neighbours = spec.apps.filter((b) => b.namespace === a.namespace);
      return { ...a, configRef: neighbours[j % neighbours.length]?.name ?? a.name };
    }),
  ),
  fc
    .tuple(fc.nat(), fc.subarray(["east", "west", "north", "south"], { minLength: 1 }))
    .map(([i, clusters]) => withApp(i, (a) => ({ ...a, clusters }))),
  fc
    .tuple(
      fc.nat(),
      fc.constantFrom("Duplicated", "Weighted", "Aggregated") as fc.Arbitrary<AppSpec["scheduling"]>,
    )
    .map(([i, scheduling]) => withApp(i, (a) => ({ ...a, scheduling }))),
  fc.nat().map(
    (i): Edit =>
      (spec) => {
        const removed = spec.apps[i % Math.max(spec.apps.length, 1)];
        const apps = spec.apps
          .filter((a) => a !== removed)
          .map((a) => (a.configRef === removed?.name ? { ...a, configRef: a.name } : a));
        return apps.length === 0 ? spec : { ...spec, apps, broken: undefined };
      },
  ),
  fc.tuple(fc.integer({ min: 0, max: 99 }), fc.constantFrom("shop", "batch")).map(
    ([n, namespace]): Edit =>
      (spec) => {
        const name = `new${n}`;
        if (spec.apps.some((a) => a.name === name)) return spec;
        return {
          ...spec,
          apps: [...spec.apps, app(name, namespace, (n % 5) + 1, "Weighted", ["east", "north"])],
        };
      },
  ),
  fc.tuple(fc.nat(), fc.constantFrom("prod", "staging")).map(
    ([i, env]): Edit =>
      (spec) => ({
        ...spec,
        clusters: spec.clusters.map((c, k) => (k === i % spec.clusters.length ? { ...c, env } : c)),
      }),
  ),
  fc.tuple(fc.constantFrom("aws", "gcp", "idc"), fc.nat({ max: 5 })).map(
    ([provider, n]): Edit =>
      (spec) => ({
        ...spec,
        registries: { ...spec.registries, [provider]: `mirror${n}.example.com` },
      }),
  ),
  fc.nat().map(
    (i): Edit =>
      (spec) => ({ ...spec, broken: spec.apps[i % Math.max(spec.apps.length, 1)]?.name }),
  ),
  fc.constant<Edit>((spec) => ({ ...spec, noise: spec.noise + 1 })),
  fc.nat().map((i) => withApp(i, (a) => ({ ...a, critical: !a.critical }))),
  fc.subarray(["east", "west", "north", "south"], { minLength: 1 }).map(
    (clusters): Edit =>
      (spec) => ({
        ...spec,
        criticalClusters: clusters,
      }),
  ),
  fc.constant<Edit>((spec) => ({
    ...spec,
    widgetScope: spec.widgetScope === "Cluster" ? "Namespaced" : "Cluster",
  })),
);

/** Paths whose bytes differ between two trees (added, changed or removed). */
export function changedPaths(before: FileTree, after: FileTree): string[] {
  const paths = new Set([...before.keys(), ...after.keys()]);
  return [...paths].filter((path) => {
    const a = before.get(path);
    const b = after.get(path);
    return !a || !b || Buffer.compare(Buffer.from(a), Buffer.from(b)) !== 0;
  });
}
