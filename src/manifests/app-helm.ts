import { type ClusterFacts, matchesClusterAffinity } from "../model/cluster-affinity.js";
import { crdScopes } from "../model/crd-scopes.js";
import type { FileTree } from "../model/file-tree.js";
import { compareStrings } from "../model/file-tree.js";
import { identityOf } from "../model/identity.js";
import type { ProblemCode } from "../model/problem.js";
import { isRecord } from "../model/read-gitfleet-object.js";
import { type ManifestContext, readManifest } from "../model/read-manifest.js";
import { joinPath, normalizePath } from "../model/repo-path.js";
import type { Reporter } from "../model/reporter.js";
import { syncRoleOf } from "../model/sync-annotations.js";
import { filesDigest } from "../model/tree-digest.js";
import type {
  AppBuilds,
  AppHelmSpec,
  AppObject,
  BuildTarget,
  HelmTargetSpec,
  Override,
  Resource,
} from "../model/types.js";
import { parseSourceFile, type SourceDocument } from "../model/yaml-source.js";
import { allBuilt, matchesTarget } from "./app-builds.js";
import {
  type ChartLocation,
  type ChartRender,
  type ChartRenders,
  type ChartRequest,
  chartLabel,
  chartRequest,
  type ValuesInput,
} from "./helm/chart-request.js";

// Apps rendered from a Helm chart. The pure core never runs helm: it describes each `helm template`
// it needs as a ChartRequest (chart, release, values in merge order, capabilities), and reads the
// rendered documents the edge hands back by request key. Documents are read as manifests at the
// template's path; install and upgrade hooks (helm.sh/hook) run as PreSync and PostSync hooks, the
// others are reported and never applied; a chart that does not render
// is an error at the app's file, so the commit is invalid and nothing in any cluster changes.

/**
 * The capabilities every chart is rendered with, the clusters and Overrides that decide per-cluster
 * values, and the renders the edge made (undefined: none yet).
 */
export interface HelmInputs {
  readonly renders: ChartRenders | undefined;
  /** The most objects one render may hold (the operator's per-app bound). */
  readonly maxObjects?: number;
  readonly kubeVersion: string;
  readonly apiVersions: readonly string[];
  readonly clusters: readonly ClusterFacts[];
  readonly overrides: readonly Override[];
}

const MAX_VALUES_BYTES = 1024 * 1024;
const HOOK_ANNOTATION = "helm.sh/hook";
const CHART_PATH = ["spec", "helm", "chart"];

/** The app's resources, what each cluster gets, and the renders it asked for. */
export function buildHelmApp(
  tree: FileTree,
  definition: AppObject,
  context: ManifestContext,
  reporter: Reporter,
  inputs: HelmInputs,
): { resources: Resource[]; builds: AppBuilds | undefined; requests: ChartRequest[] } {
  const spec = definition.spec.helm;
  const chart = spec ? chartLocation(tree, context.app, definition, reporter) : undefined;
  if (!spec || !chart) return { resources: [], builds: undefined, requests: [] };
  // A values problem stops that render from being asked for: helm never runs on half the inputs.
  let invalid = false;
  const report = (
    path: readonly (string | number)[],
    message: string,
    code: ProblemCode = "UNKNOWN_REFERENCE",
  ) => {
    invalid = true;
    reporter.report({ origin: definition.origin, path, code, message });
  };
  const base = valuesOf(tree, context.app, definition, ["spec", "helm"], spec, report);
  if (invalid) return { resources: [], builds: undefined, requests: [] };
  const request = (values: readonly ValuesInput[]) =>
    chartRequest({
      chart,
      releaseName: spec.releaseName ?? context.app,
      namespace: context.defaultNamespace,
      values,
      kubeVersion: inputs.kubeVersion,
      apiVersions: inputs.apiVersions,
    });
  const label = describeChart(tree, chart, spec.version);
  const notApplied: string[] = [];
  const requests = [request(base)];
  const defaults = readRender(requests[0] as ChartRequest, definition, context, reporter, inputs, notApplied);
  const targets: BuildTarget[] = [];
  const valued: { readonly target: HelmTargetSpec; readonly values: readonly ValuesInput[] }[] = [];
  (spec.targets ?? []).forEach((target, index) => {
    const at = ["spec", "helm", "targets", index];
    if (target.clusterName === undefined && target.clusterSelector === undefined) {
      const message =
        "a target needs clusterName or clusterSelector (clusters no target matches get the default)";
      report(at, message, "MISSING_FIELD");
      return;
    }
    const targetValues = valuesOf(tree, context.app, definition, at, target, report);
    if (invalid) return;
    valued.push({ target, values: targetValues });
    const targetRequest = request([...base, ...targetValues]);
    requests.push(targetRequest);
    targets.push({
      ...targetMatch(target),
      source: `${label} (values target ${target.name})`,
      objects: readRender(targetRequest, definition, context, reporter, inputs, []),
    });
  });
  // A cluster that Override rules give values renders on its own (before the targets: first match wins).
  const overridden: BuildTarget[] = [];
  for (const cluster of inputs.clusters) {
    const rules = helmValueRules(context.app, cluster, inputs.overrides);
    if (rules.length === 0) continue;
    const match = valued.find(({ target }) => matchesTarget(target, cluster));
    const clusterRequest = request([...base, ...(match?.values ?? []), ...rules.map((rule) => rule.values)]);
    requests.push(clusterRequest);
    const via = `${match ? `values target ${match.target.name}; ` : ""}${[...new Set(rules.map((rule) => rule.label))].join(", ")}`;
    overridden.push({
      name: `cluster-${cluster.name}`,
      clusterName: cluster.name,
      source: `${label} (${via})`,
      objects: readRender(clusterRequest, definition, context, reporter, inputs, []),
    });
  }
  targets.unshift(...overridden);
  const builds: AppBuilds = {
    source: label,
    defaults,
    targets,
    notApplied,
    inputDigest: requests.map((r) => r.key).join(","),
  };
  return { resources: allBuilt(defaults, targets), builds, requests };
}

// The Override rules that give a Helm app values in a cluster: from Overrides that select the app by
// name (or select everything), less specific first, then by name, rules in file order.
function helmValueRules(
  app: string,
  cluster: ClusterFacts,
  overrides: readonly Override[],
): { readonly values: ValuesInput; readonly label: string }[] {
  const selecting = overrides
    .filter(({ spec }) =>
      spec.apps === undefined && spec.resourceSelectors === undefined ? true : spec.apps?.includes(app),
    )
    .map((override) => ({ override, specificity: override.spec.apps === undefined ? 0 : 1 }))
    .sort(
      (a, b) =>
        a.specificity - b.specificity || compareStrings(a.override.metadata.name, b.override.metadata.name),
    );
  return selecting.flatMap(({ override }) =>
    override.spec.overrideRules.flatMap((rule, index) => {
      const values = rule.overriders.helmValues;
      if (values === undefined) return [];
      if (rule.targetCluster !== undefined && !matchesClusterAffinity(rule.targetCluster, cluster)) return [];
      const name = `${override.origin.file} overrideRules.${index}.overriders.helmValues`;
      return [
        { values: { name, text: JSON.stringify(values) }, label: `Override ${override.metadata.name}` },
      ];
    }),
  );
}

function targetMatch(target: HelmTargetSpec): Pick<BuildTarget, "name" | "clusterName" | "clusterSelector"> {
  const { name, clusterName, clusterSelector } = target;
  return {
    name,
    ...(clusterName !== undefined ? { clusterName } : {}),
    ...(clusterSelector !== undefined ? { clusterSelector } : {}),
  };
}

type Problem = (path: readonly (string | number)[], message: string) => undefined;

// Where the chart comes from, checked: a repository needs an http(s) URL and a version, an OCI
// reference a version, a directory must hold a Chart.yaml inside the fleet repo.
function chartLocation(
  tree: FileTree,
  app: string,
  definition: AppObject,
  reporter: Reporter,
): ChartLocation | undefined {
  const spec = definition.spec.helm;
  if (!spec) return undefined;
  const problem: Problem = (path, message) => {
    reporter.report({ origin: definition.origin, path, code: "SCHEMA_VIOLATION", message });
    return undefined;
  };
  if (spec.repo !== undefined || spec.chart.startsWith("oci://")) return remoteLocation(spec, problem);
  if (/^[a-z][a-z0-9+.-]*:/i.test(spec.chart))
    return problem(CHART_PATH, "a chart is a directory in the fleet repo, a name with repo, or oci://…");
  if (spec.version !== undefined)
    return problem(["spec", "helm", "version"], "version is for a chart from a repository or registry");
  const path = normalizePath(joinPath(`apps/${app}`, spec.chart));
  if (path === undefined || spec.chart.startsWith("/"))
    return problem(CHART_PATH, `${JSON.stringify(spec.chart)} leaves the fleet repo`);
  if (!tree.has(`${path}/Chart.yaml`)) return problem(CHART_PATH, `${path}/ has no Chart.yaml`);
  const files = [...tree.keys()].filter((file) => file.startsWith(`${path}/`)).sort();
  const digest = filesDigest(files.map((file) => ({ path: file, bytes: tree.get(file) })));
  return { kind: "directory", path, files, digest };
}

function remoteLocation(spec: AppHelmSpec, problem: Problem): ChartLocation | undefined {
  const version = spec.version;
  if (version === undefined)
    return problem(["spec", "helm"], "a chart from a repository or registry needs an exact version");
  if (spec.repo === undefined) {
    if (!/^oci:\/\/[^\s/]+\/[^\s]*[^/\s]$/.test(spec.chart) || spec.chart.includes("@"))
      return problem(CHART_PATH, "an OCI chart is oci://host/path/name, its version in version");
    return { kind: "oci", reference: spec.chart, version };
  }
  if (!/^https?:\/\/[^\s/]+/.test(spec.repo))
    return problem(["spec", "helm", "repo"], "a chart repository is an http:// or https:// URL");
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(spec.chart))
    return problem(CHART_PATH, "with repo, chart is the chart's name in the repository's index");
  return { kind: "repository", repo: spec.repo, name: spec.chart, version };
}

// The values files and inline values of the app (or a target), in merge order.
function valuesOf(
  tree: FileTree,
  app: string,
  definition: AppObject,
  at: readonly (string | number)[],
  spec: { readonly valuesFiles?: readonly string[]; readonly values?: Readonly<Record<string, unknown>> },
  report: (path: readonly (string | number)[], message: string) => void,
): ValuesInput[] {
  const values: ValuesInput[] = [];
  (spec.valuesFiles ?? []).forEach((file, index) => {
    const path = normalizePath(joinPath(`apps/${app}`, file));
    const bytes = path === undefined || file.startsWith("/") ? undefined : tree.get(path);
    const fieldAt = [...at, "valuesFiles", index];
    if (path === undefined || file.startsWith("/"))
      report(fieldAt, `${JSON.stringify(file)} leaves the fleet repo`);
    else if (!bytes) report(fieldAt, `${path} does not exist`);
    else if (bytes.length > MAX_VALUES_BYTES)
      report(fieldAt, `${path} is larger than ${MAX_VALUES_BYTES} bytes`);
    else {
      const text = utf8(bytes);
      if (text === undefined) report(fieldAt, `${path} is not UTF-8 text`);
      else values.push({ name: path, text });
    }
  });
  if (spec.values !== undefined)
    values.push({
      name: `${definition.origin.file} ${[...at, "values"].join(".")}`,
      text: JSON.stringify(spec.values),
    });
  return values;
}

// "helm chart web 0.3.1 (apps/web/chart)": the chart's name and version, and where it came from.
function describeChart(tree: FileTree, chart: ChartLocation, version: string | undefined): string {
  if (chart.kind !== "directory") return `helm chart ${chartLabel(chart)}`;
  const bytes = tree.get(`${chart.path}/Chart.yaml`) as Uint8Array;
  const value = parseSourceFile(`${chart.path}/Chart.yaml`, bytes, "kustomize").documents[0]?.value;
  const field = (key: string) => (isRecord(value) && typeof value[key] === "string" ? value[key] : undefined);
  const named = [field("name"), field("version") ?? version].filter(Boolean).join(" ");
  return `helm chart ${named ? `${named} ` : ""}(${chart.path})`;
}

// One render's documents read as the app's resources; hooks are listed, never applied.
function readRender(
  request: ChartRequest,
  definition: AppObject,
  context: ManifestContext,
  reporter: Reporter,
  inputs: HelmInputs,
  notApplied: string[],
): Map<string, Resource> {
  const resources = new Map<string, Resource>();
  const render: ChartRender | undefined = inputs.renders?.get(request.key);
  if (!render?.ok) {
    const message = render
      ? `helm template failed for ${chartLabel(request.chart)}: ${render.error}`
      : `${chartLabel(request.chart)} has not been rendered: Helm charts are rendered by gitfleet's Helm step before loading`;
    reporter.report({ origin: definition.origin, path: CHART_PATH, code: "HELM_RENDER_FAILED", message });
    return resources;
  }
  const sources = render.documents.flatMap(({ template, text }) => {
    const file =
      request.chart.kind === "directory"
        ? `${request.chart.path}/${template}`
        : `${chartLabel(request.chart)}/${template}`;
    const parsed = parseSourceFile(file, new TextEncoder().encode(text));
    reporter.problems.push(...parsed.problems);
    return parsed.documents.filter((source) => source.value !== null && source.value !== undefined);
  });
  const max = inputs.maxObjects ?? Number.POSITIVE_INFINITY;
  if (sources.length > max) {
    const message = `helm chart ${chartLabel(request.chart)} renders more than ${max} objects (the operator's bound, --max-app-objects)`;
    reporter.report({ origin: definition.origin, path: CHART_PATH, code: "TOO_MANY_OBJECTS", message });
    return resources;
  }
  const scoped = withChartCrds(sources, context);
  for (const source of sources) {
    // Install and upgrade hooks run as gitfleet's PreSync and PostSync hooks (as Argo CD maps them);
    // the others (test, delete, rollback) have no sync to run in.
    const hook = hookOf(source.value);
    if (hook !== undefined && syncRoleOf(annotationsOf(source.value)).kind !== "hook") {
      notApplied.push(`${describe(source.value)} (${hook} hook, not run)`);
      continue;
    }
    reporter.register(source);
    const resource = readManifest(source, scoped, reporter);
    if (resource)
      resources.set(identityOf(resource.group, resource.kind, resource.namespace, resource.name), resource);
  }
  return resources;
}

// A CRD the chart renders decides the scope of its custom resources in the same chart.
function withChartCrds(sources: readonly SourceDocument[], context: ManifestContext): ManifestContext {
  const scopes = crdScopes(sources);
  if (scopes.size === 0) return context;
  return { ...context, isClusterScoped: (key) => scopes.get(key) ?? context.isClusterScoped(key) };
}

function annotationsOf(value: unknown): Record<string, unknown> | undefined {
  return isRecord(value) && isRecord(value.metadata) && isRecord(value.metadata.annotations)
    ? value.metadata.annotations
    : undefined;
}

function hookOf(value: unknown): string | undefined {
  if (!isRecord(value) || !isRecord(value.metadata) || !isRecord(value.metadata.annotations))
    return undefined;
  const hook = value.metadata.annotations[HOOK_ANNOTATION];
  return typeof hook === "string" ? hook : undefined;
}

function describe(value: unknown): string {
  if (!isRecord(value)) return "a document";
  const name = isRecord(value.metadata) ? String(value.metadata.name ?? "") : "";
  return `${String(value.kind ?? "")}/${name}`;
}

function utf8(bytes: Uint8Array): string | undefined {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return undefined;
  }
}
