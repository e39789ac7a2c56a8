import { stringify } from "yaml";
import { asMap, type Json, type JsonMap } from "../apimachinery/json.js";
import { jsonPatchDiff } from "../apimachinery/patch/json-patch-diff.js";
import { liveTemplate } from "./live-template.js";

/** What runs in one member, as read for `gitfleet import`. */
export interface LiveCluster {
  readonly cluster: string;
  readonly objects: readonly JsonMap[];
}

export interface ImportRequest {
  /** The app the objects become. */
  readonly app: string;
  /** Their namespace: the app's spec.namespace. */
  readonly namespace: string;
  /** The members read, in the order the Migration's batches take them. */
  readonly clusters: readonly LiveCluster[];
  /** The Migration's name (default: the app's). */
  readonly migration?: string;
  /** How long each batch is observed Healthy before the next may start (default 10m). */
  readonly observe?: string;
}

/** An object left out, and why. */
export interface SkippedObject {
  readonly cluster: string;
  readonly object: string;
  readonly reason: string;
}

export interface ImportResult {
  /** Fleet repo files by path, in path order. */
  readonly files: ReadonlyMap<string, string>;
  /** The clusters the app runs in (those where any object was found), in batch order. */
  readonly clusters: readonly string[];
  /** Templates written (one per object, whatever the number of clusters it runs in). */
  readonly templates: number;
  readonly skipped: readonly SkippedObject[];
  /** Objects that run in only some of the app's clusters (placed in all of them by the Placement). */
  readonly partial: readonly string[];
}

// Kinds whose spec.replicas a Placement divides.
const REPLICATED = new Set(["apps/Deployment", "apps/StatefulSet", "apps/ReplicaSet"]);

interface Found {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  /** The template in each cluster, in cluster order. */
  readonly byCluster: Map<string, JsonMap>;
}

/**
 * The fleet repo files that bring objects running in members under gitfleet unchanged: the app's
 * templates (one per object, from the first cluster that runs it), a Placement on exactly the
 * clusters that run them (Duplicated when every workload runs the same replicas everywhere, else a
 * Placement per workload dividing its total by static weights equal to what each cluster runs), an
 * Override per object that differs between clusters (RFC 6902 patches of the differences), and a
 * Migration adopting them a cluster per batch, none approved: a reviewer approves each batch. Pure:
 * the same live objects give the same files.
 */
export function importApp(request: ImportRequest): ImportResult {
  const { found, skipped } = collect(request);
  const order = request.clusters.map((c) => c.cluster);
  const clusters = order.filter((c) => [...found.values()].some((f) => f.byCluster.has(c)));
  const files = new Map<string, string>();
  const partial: string[] = [];
  const own: Found[] = [];
  const everywhere: Found[] = [];
  const app = request.app;
  files.set(`apps/${app}/app.yaml`, appFile(request, clusters));
  for (const entry of [...found.values()].sort(byKindAndName)) {
    const { template, divided, overrides } = templateOf(entry);
    files.set(`apps/${app}/${fileName(entry)}`, yamlDocument(template));
    const someClusters = entry.byCluster.size < clusters.length;
    if (someClusters) partial.push(`${entry.kind} ${entry.name}`);
    (divided || someClusters ? own : everywhere).push(entry);
    if (overrides.length > 0)
      files.set(`overrides/${app}-${fileName(entry)}`, overrideFile(app, entry, overrides));
  }
  // The whole app where every object runs everywhere; else the objects that do, and a Placement of
  // its own for each object that runs in some clusters only or with different replica counts (a
  // ConfigMap the app's Placement selected would go to all of its clusters).
  if (everywhere.length > 0)
    files.set(
      `placements/${app}.yaml`,
      placementFile(
        app,
        clusters,
        own.length === 0 ? undefined : everywhere.map((e) => selector(e, request.namespace)),
      ),
    );
  for (const entry of own)
    files.set(`placements/${app}-${fileName(entry)}`, ownPlacementFile(app, request.namespace, entry));
  const migration = request.migration ?? app;
  files.set(
    `migrations/${migration}.yaml`,
    migrationFile(migration, app, clusters, request.observe ?? "10m"),
  );
  return {
    files: new Map([...files.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
    clusters,
    templates: found.size,
    skipped,
    partial,
  };
}

// An object's template (from the first cluster that runs it; a workload whose clusters run different
// counts gets their total), whether its replicas are divided, and the patches of the clusters where
// it differs otherwise.
function templateOf(entry: Found): {
  template: JsonMap;
  divided: boolean;
  overrides: { cluster: string; patch: Json[] }[];
} {
  const [[, first], ...others] = [...entry.byCluster.entries()] as [
    [string, JsonMap],
    ...[string, JsonMap][],
  ];
  const replicated = REPLICATED.has(`${group(entry.apiVersion)}/${entry.kind}`);
  const counts = [...entry.byCluster.values()].map(replicasOf);
  const divided = replicated && new Set(counts).size > 1;
  const overrides = others
    .map(([cluster, live]) => ({
      cluster,
      patch: jsonPatchDiff(comparable(first, replicated), comparable(live, replicated)) as unknown as Json[],
    }))
    .filter((rule) => rule.patch.length > 0);
  const total = counts.reduce((a, b) => a + b, 0);
  return { template: divided ? withReplicas(first, total) : first, divided, overrides };
}

// The live objects by identity (group, kind, name), each with its template per cluster.
function collect(request: ImportRequest): { found: Map<string, Found>; skipped: SkippedObject[] } {
  const skipped: SkippedObject[] = [];
  const found = new Map<string, Found>();
  for (const { cluster, objects } of request.clusters)
    for (const live of objects) {
      const result = liveTemplate(live, request.namespace);
      if ("skipped" in result) {
        skipped.push({ cluster, object: objectLabel(live), reason: result.skipped });
        continue;
      }
      const name = String(asMap(live.metadata).name);
      const key = `${group(String(live.apiVersion))}/${String(live.kind)}/${name}`;
      const entry = found.get(key) ?? {
        apiVersion: String(live.apiVersion),
        kind: String(live.kind),
        name,
        byCluster: new Map<string, JsonMap>(),
      };
      entry.byCluster.set(cluster, result.template);
      found.set(key, entry);
    }
  return { found, skipped };
}

function appFile(request: ImportRequest, clusters: readonly string[]): string {
  return yamlDocument(
    {
      apiVersion: "gitfleet.io/v1alpha1",
      kind: "App",
      metadata: { name: request.app },
      spec: {
        namespace: request.namespace,
        description: `Imported by gitfleet import from namespace ${request.namespace} of ${clusters.join(", ")}; adopted by migrations/${request.migration ?? request.app}.yaml.`,
      },
    },
    `${request.app}: objects that already ran in ${clusters.join(", ")}, imported as they run.`,
  );
}

function placementFile(app: string, clusters: readonly string[], selectors: JsonMap[] | undefined): string {
  return yamlDocument(
    {
      apiVersion: "gitfleet.io/v1alpha1",
      kind: "Placement",
      metadata: { name: app },
      spec: {
        ...(selectors ? { resourceSelectors: selectors } : { apps: [app] }),
        clusterAffinity: { clusterNames: [...clusters] },
        replicaScheduling: { type: "Duplicated" },
        conflictResolution: "Adopt",
      },
    },
    `${app} runs where it ran when imported; existing objects are adopted in place, never recreated.`,
  );
}

// An object that ran in some of the app's clusters only, or a workload whose clusters ran different
// replica counts: its total divided by static weights equal to the counts gives every cluster
// exactly what it ran (a cluster that ran none of it is left out).
function ownPlacementFile(app: string, namespace: string, entry: Found): string {
  const runs = [...entry.byCluster.entries()].map(([cluster, template]) => ({
    cluster,
    replicas: replicasOf(template),
  }));
  const divided =
    new Set(runs.map((r) => r.replicas)).size > 1 &&
    REPLICATED.has(`${group(entry.apiVersion)}/${entry.kind}`);
  const weights = divided ? runs.filter(({ replicas }) => replicas > 0) : runs;
  return yamlDocument(
    {
      apiVersion: "gitfleet.io/v1alpha1",
      kind: "Placement",
      metadata: { name: `${app}-${entry.kind.toLowerCase()}-${entry.name}` },
      spec: {
        resourceSelectors: [selector(entry, namespace)],
        priority: 1,
        clusterAffinity: { clusterNames: weights.map((w) => w.cluster) },
        replicaScheduling: divided
          ? {
              type: "Divided",
              divisionPreference: "Weighted",
              weightPreference: {
                staticWeightList: weights.map((w) => ({
                  targetCluster: { clusterNames: [w.cluster] },
                  weight: w.replicas,
                })),
              },
            }
          : { type: "Duplicated" },
        conflictResolution: "Adopt",
      },
    },
    divided
      ? `${entry.kind} ${entry.name} ran ${weights.map((w) => `${w.replicas} in ${w.cluster}`).join(", ")}: the total, divided by these weights, gives each cluster what it ran.`
      : `${entry.kind} ${entry.name} ran only in ${weights.map((w) => w.cluster).join(", ")}.`,
  );
}

function overrideFile(
  app: string,
  entry: Found,
  rules: readonly { cluster: string; patch: Json[] }[],
): string {
  return yamlDocument(
    {
      apiVersion: "gitfleet.io/v1alpha1",
      kind: "Override",
      metadata: { name: `${app}-${entry.kind.toLowerCase()}-${entry.name}` },
      spec: {
        resourceSelectors: [{ apiVersion: entry.apiVersion, kind: entry.kind, name: entry.name }],
        overrideRules: rules.map((rule) => ({
          targetCluster: { clusterNames: [rule.cluster] },
          overriders: { jsonPatch: rule.patch },
        })),
      },
    },
    `Where ${entry.kind} ${entry.name} differed between clusters when imported.`,
  );
}

function migrationFile(name: string, app: string, clusters: readonly string[], observe: string): string {
  return yamlDocument(
    {
      apiVersion: "gitfleet.io/v1alpha1",
      kind: "Migration",
      metadata: { name },
      spec: {
        conflictResolution: "Adopt",
        onFailure: "Halt",
        observe,
        batches: clusters.map((cluster) => ({
          name: cluster,
          apps: [app],
          clusters: [cluster],
          approved: false,
        })),
      },
    },
    `Adopt ${app} a cluster at a time: a reviewer approves each batch in a pull request (approved: true).`,
  );
}

// A template without its replica count, for comparing clusters: the count is the Placement's.
function comparable(template: JsonMap, replicated: boolean): JsonMap {
  if (!replicated) return template;
  const { replicas: _count, ...spec } = asMap(template.spec);
  return { ...template, spec };
}

function withReplicas(template: JsonMap, replicas: number): JsonMap {
  return { ...template, spec: { ...asMap(template.spec), replicas } };
}

function selector(entry: Found, namespace: string): JsonMap {
  return { apiVersion: entry.apiVersion, kind: entry.kind, namespace, name: entry.name };
}

function replicasOf(template: JsonMap): number {
  const replicas = asMap(template.spec).replicas;
  return typeof replicas === "number" ? replicas : 1;
}

function fileName(entry: { kind: string; name: string }): string {
  return `${entry.kind.toLowerCase()}-${entry.name}.yaml`;
}

function byKindAndName(a: Found, b: Found): number {
  const x = fileName(a);
  const y = fileName(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

function group(apiVersion: string): string {
  return apiVersion.includes("/") ? (apiVersion.split("/")[0] as string) : "";
}

function objectLabel(live: JsonMap): string {
  return `${String(live.kind)} ${String(asMap(live.metadata).name)}`;
}

function yamlDocument(value: JsonMap, comment?: string): string {
  return `${comment ? `# ${comment}\n` : ""}${stringify(value, { lineWidth: 0 })}`;
}
