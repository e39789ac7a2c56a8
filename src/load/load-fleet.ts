import { CLUSTER_SCOPED_KINDS, type GroupKind, groupKind } from "../apimachinery/kinds.js";
import { DEFAULT_KUBERNETES_MINOR } from "../apimachinery/openapi/kubernetes-schemas.js";
import { appsWithKustomization, type MadeBuilds } from "../manifests/app-kustomize.js";
import { appSourceOf, type BuildInputs, buildApp } from "../manifests/build-app.js";
import { generateControlPlaneApps } from "../manifests/controlplane/generated-apps.js";
import type { ChartRenders, ChartRequest } from "../manifests/helm/chart-request.js";
import type { KustomizeBuilds } from "../manifests/kustomize/built-transfer.js";
import { classifyPath, type FileRole } from "../model/classify.js";
import { clusterFacts } from "../model/cluster-affinity.js";
import { heldBackups, restoreOverlayOf } from "../model/controlplane/hosted-control-plane.js";
import { crdScopes } from "../model/crd-scopes.js";
import { compareStrings, type FileTree } from "../model/file-tree.js";
import { DEFAULT_LOAD_POLICY, type LoadPolicy } from "../model/load-policy.js";
import { hasErrors, normalizeProblems, type Problem } from "../model/problem.js";
import { type CheckedObject, isRecord, readGitfleetObject } from "../model/read-gitfleet-object.js";
import { readManifest } from "../model/read-manifest.js";
import { createReporter, type Reporter } from "../model/reporter.js";
import { runRules } from "../model/rules/index.js";
import { indexSelections } from "../model/selection-index.js";
import { readSopsSecret } from "../model/sops-secret.js";
import type { Team } from "../model/team-types.js";
import type {
  App,
  AppBuilds,
  AppObject,
  Cluster,
  ControlPlaneClass,
  EtcdRestore,
  FleetModel,
  GitfleetKind,
  Override,
  Placement,
  Resource,
} from "../model/types.js";
import { encodingProblem, type SourceDocument } from "../model/yaml-source.js";
import { forgetRemoved, memoRead, orderedPaths, type ParseCache, parseCached } from "./parse-cache.js";
import { sourceKey, type TeamSourceMounts, withMounts } from "./team-sources.js";

export { createParseCache, type ParseCache } from "./parse-cache.js";

/** The outcome of loading a fleet repo: the model when there are no errors, and every problem found. */
export interface LoadResult {
  /** Present when no problem is an error. */
  readonly model: FleetModel | undefined;
  /** Errors and warnings, sorted by file, line and column. */
  readonly problems: readonly Problem[];
  /** How many files were read as fleet repo files. */
  readonly fileCount: number;
  /** How many of them were parsed anew: all of them without a cache, those whose bytes changed with one. */
  readonly parsedFiles: number;
  /** The `helm template` runs the fleet's Helm apps need (their renders are loadFleet's third input). */
  readonly charts: readonly ChartRequest[];
  /** The kustomization directories the fleet's Kustomize apps build, when given builds (the fifth input). */
  readonly kustomizations: readonly string[];
}

/**
 * Loads and validates a fleet repo tree. Pure: the same tree (and the same chart renders) always give
 * the same result, and no input makes it throw — every defect becomes a problem with file, line and
 * column. Helm apps need `charts`, the renders of the requests a load without them lists
 * (src/builds/load-with-builds.ts runs helm between the two). `policy` is what the operator bounds and
 * allows (the objects an app may build, the kinds allowed as hooks). Kustomize apps are built here
 * unless `kustomize` gives their builds (made off the event loop by the edge): then a build that is
 * missing is listed in `kustomizations` and reported as not built yet. A Team that pins its own
 * repository needs `teamSources`, its files as the edge fetched them (load/team-sources.ts).
 */
export function loadFleet(
  fleetTree: FileTree,
  cache?: ParseCache,
  charts?: ChartRenders,
  policy: LoadPolicy = DEFAULT_LOAD_POLICY,
  kustomize?: KustomizeBuilds,
  teamSources?: TeamSourceMounts,
): LoadResult {
  const reporter = createReporter();
  // 0. The teams' own repositories' files, laid over the fleet repo's (fetched by the edge).
  const tree = withMounts(fleetTree, teamSources);
  // 1. Parse every file the layout knows about; YAML and encoding errors become problems.
  const parsed = parseTree(tree, reporter, cache);
  // 2. Read gitfleet objects against their schemas.
  const objects: CheckedObject[] = [];
  const declared = new Map<GitfleetKind, Set<string>>();
  for (const { source, kinds } of parsed.gitfleet) {
    const result = memoRead(cache, source, `gitfleet\0${kinds.join(",")}`, reporter, () =>
      readGitfleetObject(source, kinds, reporter),
    );
    if (result.object) objects.push(result.object);
    if (result.declared) addName(declared, result.declared.kind, result.declared.name);
  }
  reportTeamSources(typedObjects<Team>(objects, "Team"), teamSources, reporter);
  // 3. Read app definitions, build the apps that are built (Helm, kustomize), then read every other
  // manifest (CRDs in the repo decide which kinds are cluster-scoped).
  const definitions = readAppDefinitions(parsed.appDefinitions, reporter, declared, cache);
  const made: MadeBuilds = {
    maxObjects: policy.maxAppObjects,
    ...(kustomize ? { builds: kustomize, requested: new Set<string>() } : {}),
  };
  const inputs: BuildInputs = {
    renders: charts,
    maxObjects: policy.maxAppObjects,
    kubeVersion: `v${fleetMinor(objects)}.0`,
    apiVersions: servedApiVersions(parsed.manifests.map((m) => m.source)),
    clusters: typedObjects<Cluster>(objects, "Cluster").map(clusterFacts),
    overrides: typedObjects<Override>(objects, "Override"),
    made,
  };
  const { resources, built, requests } = readResources(tree, parsed, definitions, reporter, cache, inputs);
  // 4. Assemble the model and run the cross-file rules over it.
  for (const extra of objects.filter((o) => o.kind === "Fleet").slice(1)) {
    const message = "a fleet has one Fleet object (fleet.yaml); remove this one";
    reporter.report({ origin: extra.origin, path: [], code: "DUPLICATE_NAME", message });
  }
  const model = assembleModel(objects, definitions, parsed.appNames, resources, built);
  runRules({ model, reporter, declared, selections: indexSelections(model), policy });
  const problems = normalizeProblems(reporter.problems);
  const { fileCount, parsedFiles } = parsed;
  const kustomizations = [...(made.requested ?? [])].sort(compareStrings);
  return {
    model: hasErrors(problems) ? undefined : model,
    problems,
    fileCount,
    parsedFiles,
    charts: requests,
    kustomizations,
  };
}

// What the teams' repositories did not bring, at each Team's spec.source: a pin nobody fetched (a
// load without the edge's fetches, or a Team the lenient read of pins could not read), a fetch that
// failed, a file outside the team's paths or over a fleet repo file.
function reportTeamSources(
  teams: readonly Team[],
  mounts: TeamSourceMounts | undefined,
  reporter: Reporter,
): void {
  for (const team of teams) {
    const source = team.spec.source;
    if (!source) continue;
    const at = (field: string) => ({
      origin: team.origin,
      // A path the Team does not give is the whole source's (its repository's root).
      path: field === "path" && source.path === undefined ? ["spec", "source"] : ["spec", "source", field],
    });
    for (const issue of mounts?.issues.filter((i) => i.team === team.metadata.name) ?? [])
      reporter.report({ ...at(issue.field), code: "TEAM_SOURCE", message: issue.message });
    if (!mounts?.pins.has(sourceKey(source)))
      reporter.report({
        ...at("url"),
        code: "TEAM_SOURCE",
        message: `the team's repository ${source.url} was not fetched: gitfleet fetches it from a URL the operator allows (--team-source)`,
      });
  }
}

// The objects of one kind, sorted by name. Schema validation is what makes the cast safe: each value
// matched its kind's schema.
function typedObjects<T>(objects: readonly CheckedObject[], kind: GitfleetKind): T[] {
  return objects
    .filter((o) => o.kind === kind)
    .map((o) => ({ ...o.value, spec: o.value.spec ?? {}, origin: o.origin }) as T)
    .sort((a, b) => compareStrings(nameOf(a), nameOf(b)));
}

// The Kubernetes minor the fleet declares (fleet.yaml), else the newest gitfleet supports.
function fleetMinor(objects: readonly CheckedObject[]): string {
  const spec = objects.find((o) => o.kind === "Fleet")?.value.spec;
  const declared = isRecord(spec) ? spec.kubernetesVersion : undefined;
  return typeof declared === "string" ? declared : DEFAULT_KUBERNETES_MINOR;
}

// The API versions the repo's CRDs serve, as `helm template --api-versions` takes them: group/version
// and group/version/Kind.
function servedApiVersions(manifests: readonly SourceDocument[]): string[] {
  const served = new Set<string>();
  for (const { value } of manifests)
    if (isRecord(value) && value.kind === "CustomResourceDefinition" && isRecord(value.spec))
      for (const version of crdApiVersions(value.spec)) served.add(version);
  return [...served].sort(compareStrings);
}

function crdApiVersions(spec: Record<string, unknown>): string[] {
  const { group, names, versions } = spec;
  if (typeof group !== "string" || !isRecord(names) || !Array.isArray(versions)) return [];
  const kind = typeof names.kind === "string" ? names.kind : undefined;
  return versions
    .filter(isRecord)
    .filter((version) => typeof version.name === "string" && version.served !== false)
    .flatMap((version) => {
      const groupVersion = `${group}/${String(version.name)}`;
      return kind ? [groupVersion, `${groupVersion}/${kind}`] : [groupVersion];
    });
}

interface AppReads {
  readonly resources: Resource[];
  readonly built: Map<string, AppBuilds>;
  readonly requests: ChartRequest[];
}

// The apps' resources: built by kustomize or rendered by Helm for apps that use them, read from each
// manifest otherwise.
function readResources(
  tree: FileTree,
  parsed: ParsedTree,
  definitions: ReadonlyMap<string, AppObject>,
  reporter: Reporter,
  cache: ParseCache | undefined,
  inputs: BuildInputs,
): AppReads {
  const isClusterScoped = clusterScopeOf(parsed.manifests.map((m) => m.source));
  const reads: AppReads = { resources: [], built: new Map(), requests: [] };
  const builtApps = new Set<string>();
  for (const app of parsed.appNames) {
    const definition = definitions.get(app);
    const source = appSourceOf(app, definition, parsed.withKustomization);
    if (source.type === "directory") continue;
    builtApps.add(app);
    const context = { app, defaultNamespace: definition?.spec.namespace ?? "default", isClusterScoped };
    const built = buildApp(tree, source, context, reporter, inputs);
    reads.resources.push(...built.resources);
    reads.requests.push(...built.requests);
    if (built.builds) reads.built.set(app, built.builds);
  }
  // Files of a built app are its inputs (kustomizations, values), not manifests of their own.
  const manifests = withinBound(
    parsed.manifests.filter((m) => !builtApps.has(m.app)),
    inputs.made.maxObjects,
    reporter,
  );
  for (const { source, app } of manifests) {
    const defaultNamespace = definitions.get(app)?.spec.namespace ?? "default";
    const scope = isRecord(source.value) ? String(isClusterScoped(manifestKind(source.value))) : "";
    const resource = memoRead(
      cache,
      source,
      `manifest\0${app}\0${defaultNamespace}\0${scope}`,
      reporter,
      () => readAppManifest(source, { app, defaultNamespace, isClusterScoped }, reporter),
    );
    if (resource) reads.resources.push(resource);
  }
  return reads;
}

// One manifest of an app's directory; a sops-encrypted Secret is read without its sops block and
// carries its envelope, for the sync to open it.
function readAppManifest(
  source: SourceDocument,
  context: Parameters<typeof readManifest>[1],
  reporter: Reporter,
): Resource | undefined {
  const sops = readSopsSecret(source, reporter);
  if (sops === undefined) return readManifest(source, context, reporter);
  if (!sops.sealed) return undefined;
  const resource = readManifest({ ...source, value: sops.object }, context, reporter);
  return resource && { ...resource, sealed: sops.sealed };
}

// The manifests of each app up to the operator's bound; past it, one error and no more of that app.
function withinBound<T extends { readonly source: SourceDocument; readonly app: string }>(
  manifests: readonly T[],
  max: number,
  reporter: Reporter,
): T[] {
  const counts = new Map<string, number>();
  return manifests.filter(({ source, app }) => {
    const count = (counts.get(app) ?? 0) + 1;
    counts.set(app, count);
    if (count === max + 1) reportTooMany(reporter, source, app, max);
    return count <= max;
  });
}

// An app of more manifests than the operator allows: one error, at the first manifest past the bound.
function reportTooMany(reporter: Reporter, source: SourceDocument, app: string, max: number): void {
  reporter.report({
    origin: {
      file: source.file,
      index: source.index,
      ...(source.item !== undefined ? { item: source.item } : {}),
    },
    path: [],
    code: "TOO_MANY_OBJECTS",
    message: `app ${app} has more than ${max} objects (the operator's bound, --max-app-objects)`,
  });
}

interface ParsedTree {
  readonly gitfleet: { readonly source: SourceDocument; readonly kinds: readonly GitfleetKind[] }[];
  readonly appDefinitions: { readonly source: SourceDocument; readonly app: string }[];
  readonly manifests: { readonly source: SourceDocument; readonly app: string }[];
  readonly appNames: ReadonlySet<string>;
  /** Apps whose directory holds a kustomization: their files are not parsed as manifests. */
  readonly withKustomization: ReadonlySet<string>;
  /** Directories under apps/ that hold a Chart.yaml: chart files, never parsed as manifests. */
  readonly chartDirectories: readonly string[];
  readonly fileCount: number;
  readonly parsedFiles: number;
}

function parseTree(tree: FileTree, reporter: Reporter, cache: ParseCache | undefined): ParsedTree {
  const withKustomization = appsWithKustomization(tree);
  const chartDirectories = chartDirectoriesOf(tree);
  const out = {
    gitfleet: [],
    appDefinitions: [],
    manifests: [],
    appNames: new Set<string>(),
    withKustomization,
    chartDirectories,
    fileCount: 0,
    parsedFiles: 0,
  };
  for (const path of orderedPaths(tree, cache)) {
    const role = classifyPath(path);
    if (role.role === "ignored") continue;
    out.fileCount++;
    if (isBuildInput(path, role, withKustomization, chartDirectories)) {
      out.appNames.add((role as { app: string }).app);
      reportUnreadableInput(path, tree, chartDirectories, reporter);
      continue;
    }
    if (role.role === "stray") {
      const problem = { file: path, line: 1, column: 1, path: "", message: role.reason };
      reporter.problems.push({ ...problem, severity: "warning", code: "UNUSED_FILE" });
      continue;
    }
    if (parseInto(out, path, role, tree, reporter, cache)) out.parsedFiles++;
    if (role.role !== "gitfleet") out.appNames.add(role.app);
  }
  if (cache) forgetRemoved(cache, tree);
  return out;
}

// Parses one file of the layout into `out`, its problems and positions into the reporter; true when
// it was parsed now rather than found in the cache.
function parseInto(
  out: ParsedTree,
  path: string,
  role: Exclude<FileRole, { role: "ignored" | "stray" }>,
  tree: FileTree,
  reporter: Reporter,
  cache: ParseCache | undefined,
): boolean {
  const { file, fresh } = parseCached(path, tree.get(path) ?? new Uint8Array(), cache);
  reporter.problems.push(...file.problems);
  const sources = role.role === "manifest" ? file.documents.flatMap(listItems) : file.documents;
  for (const source of sources) {
    reporter.register(source);
    addDocument(out, role, source);
  }
  return fresh;
}

// A kustomize app's YAML file that is not UTF-8 text is reported here, whether or not a build reads
// it: a broken app.yaml that hides the overlays it names must not hide their own defects too. (The
// build reports the same problem when it reads the file; identical problems are reported once.) A
// chart's files are Helm's, reported by the chart's render; a generator's data files need not be text.
function reportUnreadableInput(
  path: string,
  tree: FileTree,
  chartDirectories: readonly string[],
  reporter: Reporter,
): void {
  if (!/\.ya?ml$/.test(path) || chartDirectories.some((directory) => path.startsWith(directory))) return;
  const problem = encodingProblem(path, tree.get(path) ?? new Uint8Array());
  if (problem) reporter.problems.push(problem);
}

// Directories under apps/ holding a Chart.yaml (known from paths alone, before parsing).
function chartDirectoriesOf(tree: FileTree): string[] {
  const directories: string[] = [];
  for (const path of tree.keys())
    if (path.startsWith("apps/") && path.endsWith("/Chart.yaml"))
      directories.push(path.slice(0, -"Chart.yaml".length));
  return directories;
}

// A file of an app whose directory holds a kustomization is kustomize's to read; a file of a chart
// kept in an app's directory is Helm's (templates are not YAML).
function isBuildInput(
  path: string,
  role: FileRole,
  withKustomization: ReadonlySet<string>,
  chartDirectories: readonly string[],
): boolean {
  if (role.role !== "manifest") return false;
  return withKustomization.has(role.app) || chartDirectories.some((directory) => path.startsWith(directory));
}

// The objects of a List document (kind: List, or any kind ending in List with `items`), each a
// document of its own, as kubectl expands them; any other document stands for itself. A Secret
// inside a List is then a Secret like any other: redacted, never written to Git.
const listed = new WeakMap<SourceDocument, readonly SourceDocument[]>();
function listItems(source: SourceDocument): readonly SourceDocument[] {
  const value = source.value;
  if (!isRecord(value) || typeof value.kind !== "string" || !value.kind.endsWith("List")) return [source];
  if (!Array.isArray(value.items)) return [source];
  let items = listed.get(source);
  if (!items) {
    items = (value.items as unknown[]).map((item, index) => ({ ...source, value: item, item: index }));
    listed.set(source, items);
  }
  return items;
}

function manifestKind(value: Record<string, unknown>): GroupKind {
  const apiVersion = typeof value.apiVersion === "string" ? value.apiVersion : "";
  const group = apiVersion.includes("/") ? (apiVersion.split("/")[0] ?? "") : "";
  return groupKind(group, typeof value.kind === "string" ? value.kind : "");
}

function addDocument(
  out: ParsedTree,
  role: Exclude<FileRole, { role: "ignored" | "stray" }>,
  source: SourceDocument,
): void {
  if (role.role === "gitfleet") out.gitfleet.push({ source, kinds: role.kinds });
  else if (role.role === "app-definition") out.appDefinitions.push({ source, app: role.app });
  else out.manifests.push({ source, app: role.app });
}

function readAppDefinitions(
  entries: ParsedTree["appDefinitions"],
  reporter: Reporter,
  declared: Map<GitfleetKind, Set<string>>,
  cache: ParseCache | undefined,
): Map<string, AppObject> {
  const definitions = new Map<string, AppObject>();
  for (const { source, app } of entries) {
    const result = memoRead(cache, source, "gitfleet\0App", reporter, () =>
      readGitfleetObject(source, ["App"], reporter),
    );
    if (result.declared) addName(declared, "App", result.declared.name);
    if (!result.object) continue;
    const origin = result.object.origin;
    if (definitions.has(app)) {
      reporter.report({
        origin,
        path: [],
        code: "DUPLICATE_NAME",
        message: `apps/${app}/ already has an App definition; keep one`,
      });
      continue;
    }
    definitions.set(app, {
      ...(result.object.value as Omit<AppObject, "origin">),
      origin,
      spec: (result.object.value.spec ?? {}) as AppObject["spec"],
    });
  }
  return definitions;
}

function clusterScopeOf(manifests: readonly SourceDocument[]): (key: GroupKind) => boolean {
  const scopes = crdScopes(manifests);
  return (key) => scopes.get(key) ?? CLUSTER_SCOPED_KINDS.has(key);
}

function addName(declared: Map<GitfleetKind, Set<string>>, kind: GitfleetKind, name: string): void {
  const names = declared.get(kind) ?? new Set<string>();
  names.add(name);
  declared.set(kind, names);
}

function assembleModel(
  objects: readonly CheckedObject[],
  definitions: ReadonlyMap<string, AppObject>,
  appNames: ReadonlySet<string>,
  resources: readonly Resource[],
  built: ReadonlyMap<string, AppBuilds>,
): FleetModel {
  const ofKind = <T>(kind: GitfleetKind): T[] => typedObjects<T>(objects, kind);
  const resourcesByApp = new Map<string, Resource[]>();
  for (const resource of resources) {
    const list = resourcesByApp.get(resource.app);
    if (list) list.push(resource);
    else resourcesByApp.set(resource.app, [resource]);
  }
  const written: App[] = [...appNames].sort(compareStrings).map((name) => {
    const builds = built.get(name);
    return {
      name,
      definition: definitions.get(name),
      resources: (resourcesByApp.get(name) ?? []).sort(compareResources),
      ...(builds ? { builds } : {}),
    };
  });
  // Hosted clusters' control planes and addons are apps like any other, generated from their Cluster.
  const clusters = ofKind<Cluster>("Cluster");
  const controlPlaneClasses = ofKind<ControlPlaneClass>("ControlPlaneClass");
  // A restore from an off-host backup in the repo keeps its control plane stopped until it runs.
  const etcdRestores = ofKind<EtcdRestore>("EtcdRestore");
  const generated = generateControlPlaneApps(clusters, controlPlaneClasses, (cluster) => {
    const restore = restoreOverlayOf(etcdRestores, new Map(), cluster);
    return { ...(restore ? { restore } : {}), held: heldBackups(etcdRestores, cluster) };
  });
  const byName = (a: { name: string }, b: { name: string }) => compareStrings(a.name, b.name);
  const apps = [...written, ...generated.apps].sort(byName);
  const placements = [...ofKind<Placement>("Placement"), ...generated.placements].sort((a, b) =>
    compareStrings(a.metadata.name, b.metadata.name),
  );
  return {
    fleet: ofKind<FleetModel["fleet"]>("Fleet")[0],
    clusters,
    apps,
    placements,
    overrides: ofKind("Override"),
    interpreters: ofKind("ResourceInterpreter"),
    federatedHPAs: ofKind("FederatedHPA"),
    cronScales: ofKind("CronScale"),
    scaleDownRequests: ofKind("ScaleDownRequest"),
    federatedResourceQuotas: ofKind("FederatedResourceQuota"),
    teams: ofKind("Team"),
    migrations: ofKind("Migration"),
    controlPlaneClasses,
    controlPlaneUpgrades: ofKind("ControlPlaneUpgrade"),
    etcdRestores,
    etcdMemberReplacements: ofKind("EtcdMemberReplacement"),
  };
}

function nameOf(object: unknown): string {
  return isRecord(object) && isRecord(object.metadata) ? String(object.metadata.name) : "";
}

/** Orders resources by group, kind, namespace, name: the identity order used everywhere. */
export function compareResources(a: Resource, b: Resource): number {
  return (
    compareStrings(a.group, b.group) ||
    compareStrings(a.kind, b.kind) ||
    compareStrings(a.namespace ?? "", b.namespace ?? "") ||
    compareStrings(a.name, b.name)
  );
}
