import type { ClusterFacts } from "./cluster-affinity.js";
import type { FileTree } from "./file-tree.js";
import { identityOf } from "./identity.js";
import {
  buildKustomization,
  KUSTOMIZATION_FILES,
  kustomizationFile,
} from "./kustomize/build-kustomization.js";
import { joinPath, normalizePath } from "./kustomize/kustomization-context.js";
import { matchesLabelSelector } from "./label-selector.js";
import { type ManifestContext, readManifest } from "./read-manifest.js";
import type { Reporter } from "./reporter.js";
import type { App, AppKustomization, AppObject, KustomizeTarget, Resource } from "./types.js";

// Apps built by kustomize. An app whose directory holds a kustomization.yaml, or whose app.yaml has
// spec.kustomize, is built by gitfleet's kustomize engine: its files are kustomize's inputs, never
// read as manifests of their own. The default kustomization builds the objects every cluster gets;
// a target's kustomization builds them instead for the clusters it matches (first match wins, as
// Fleet's targetCustomizations). Placement and replica division use the default build; objects only
// a target builds go only to the clusters of that target.

/** Apps whose own directory holds a kustomization file (known from paths alone, before parsing). */
export function appsWithKustomization(tree: FileTree): Set<string> {
  const apps = new Set<string>();
  for (const path of tree.keys()) {
    const [top, app, file, ...rest] = path.split("/");
    if (
      top === "apps" &&
      app &&
      rest.length === 0 &&
      (KUSTOMIZATION_FILES as readonly string[]).includes(file ?? "")
    )
      apps.add(app);
  }
  return apps;
}

/** Whether an app is built by kustomize. */
export function isKustomizeApp(
  app: string,
  definition: AppObject | undefined,
  withFile: ReadonlySet<string>,
): boolean {
  return withFile.has(app) || definition?.spec.kustomize !== undefined;
}

/** The app's resources and what each cluster gets, or undefined when its default cannot be built. */
export function buildKustomizeApp(
  tree: FileTree,
  app: string,
  definition: AppObject | undefined,
  context: ManifestContext,
  reporter: Reporter,
): { resources: Resource[]; kustomize: AppKustomization } | undefined {
  const spec = definition?.spec.kustomize;
  const path = directory(tree, app, spec?.path, definition, ["spec", "kustomize", "path"], reporter);
  if (path === undefined) return undefined;
  const defaults = build(tree, path, context, reporter);
  const targets: KustomizeTarget[] = [];
  (spec?.targets ?? []).forEach((target, index) => {
    const at = ["spec", "kustomize", "targets", index, "path"];
    if (definition && target.clusterName === undefined && target.clusterSelector === undefined) {
      const message =
        "a target needs clusterName or clusterSelector (clusters no target matches get the default)";
      reporter.report({ origin: definition.origin, path: at.slice(0, -1), code: "MISSING_FIELD", message });
      return;
    }
    const targetPath = directory(tree, app, target.path, definition, at, reporter);
    if (targetPath !== undefined)
      targets.push({ spec: target, path: targetPath, objects: build(tree, targetPath, context, reporter) });
  });
  const resources = new Map(defaults);
  for (const target of targets)
    for (const [identity, resource] of target.objects)
      if (!resources.has(identity)) resources.set(identity, resource);
  return { resources: [...resources.values()], kustomize: { path, defaults, targets } };
}

// A kustomization directory an app names (relative to the app's directory), checked.
function directory(
  tree: FileTree,
  app: string,
  relative: string | undefined,
  definition: AppObject | undefined,
  at: readonly (string | number)[],
  reporter: Reporter,
): string | undefined {
  const path = normalizePath(joinPath(`apps/${app}`, relative ?? "."));
  const problem =
    path === undefined
      ? `${JSON.stringify(relative)} leaves the fleet repo`
      : kustomizationFile(tree, path) === undefined
        ? `${path}/ has no kustomization.yaml`
        : undefined;
  if (!problem) return path;
  if (definition)
    reporter.report({ origin: definition.origin, path: at, code: "UNKNOWN_REFERENCE", message: problem });
  else
    reporter.problems.push({
      file: `apps/${app}`,
      line: 1,
      column: 1,
      path: "",
      severity: "error",
      code: "UNKNOWN_REFERENCE",
      message: problem,
    });
  return undefined;
}

// One kustomization's objects as the app's resources, by identity; problems go to the reporter.
function build(
  tree: FileTree,
  path: string,
  context: ManifestContext,
  reporter: Reporter,
): Map<string, Resource> {
  const result = buildKustomization(tree, path);
  reporter.problems.push(...result.problems);
  const resources = new Map<string, Resource>();
  for (const built of result.objects) {
    const source = { ...built.source, value: built.object };
    reporter.register(source);
    const resource = readManifest(source, context, reporter);
    if (resource)
      resources.set(identityOf(resource.group, resource.kind, resource.namespace, resource.name), resource);
  }
  return resources;
}

/** The target kustomization a cluster gets: the first whose clusterName and clusterSelector match. */
export function targetFor(kustomize: AppKustomization, cluster: ClusterFacts): KustomizeTarget | undefined {
  return kustomize.targets.find(
    ({ spec }) =>
      (spec.clusterName === undefined || spec.clusterName === cluster.name) &&
      (spec.clusterSelector === undefined || matchesLabelSelector(spec.clusterSelector, cluster.labels)),
  );
}

/**
 * The body of an app's resource in one cluster: for an app built by kustomize, the object its
 * cluster's target (or the default) built, or undefined when that build has no such object.
 */
export function resourceForCluster(
  app: App | undefined,
  resource: Resource,
  cluster: ClusterFacts,
): Resource | undefined {
  const kustomize = app?.kustomize;
  if (!kustomize) return resource;
  const objects = targetFor(kustomize, cluster)?.objects ?? kustomize.defaults;
  return objects.get(identityOf(resource.group, resource.kind, resource.namespace, resource.name));
}

/** Which kustomization builds an app's objects for a cluster, for status and plans. */
export function sourceForCluster(app: App | undefined, cluster: ClusterFacts): string | undefined {
  const kustomize = app?.kustomize;
  if (!kustomize) return undefined;
  const target = targetFor(kustomize, cluster);
  return target ? `kustomize ${target.path} (target ${target.spec.name})` : `kustomize ${kustomize.path}`;
}
