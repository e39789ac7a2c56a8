import { allBuilt } from "./app-builds.js";
import type { FileTree } from "./file-tree.js";
import { identityOf } from "./identity.js";
import {
  buildKustomization,
  KUSTOMIZATION_FILES,
  kustomizationFile,
} from "./kustomize/build-kustomization.js";
import { type ManifestContext, readManifest } from "./read-manifest.js";
import { joinPath, normalizePath } from "./repo-path.js";
import type { Reporter } from "./reporter.js";
import { RecordingTree } from "./tree-digest.js";
import type { AppBuilds, AppObject, BuildTarget, Resource } from "./types.js";

// Apps built by kustomize. An app whose directory holds a kustomization.yaml, or whose app.yaml has
// spec.kustomize, is built by gitfleet's kustomize engine: its files are kustomize's inputs, never
// read as manifests of their own. The default kustomization builds the objects every cluster gets;
// a target's kustomization builds them instead for the clusters it matches (app-builds.ts).

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
): { resources: Resource[]; builds: AppBuilds } | undefined {
  // Every file the builds look at goes into the input digest: a base elsewhere in the repo that
  // changes re-renders the app.
  const recording = new RecordingTree(tree);
  const built = buildWithTree(recording, app, definition, context, reporter);
  return built && { ...built, builds: { ...built.builds, inputDigest: recording.digest() } };
}

function buildWithTree(
  tree: FileTree,
  app: string,
  definition: AppObject | undefined,
  context: ManifestContext,
  reporter: Reporter,
): { resources: Resource[]; builds: AppBuilds } | undefined {
  const spec = definition?.spec.kustomize;
  const path = directory(tree, app, spec?.path, definition, ["spec", "kustomize", "path"], reporter);
  if (path === undefined) return undefined;
  const defaults = build(tree, path, context, reporter);
  const targets: BuildTarget[] = [];
  (spec?.targets ?? []).forEach((target, index) => {
    const at = ["spec", "kustomize", "targets", index, "path"];
    if (definition && target.clusterName === undefined && target.clusterSelector === undefined) {
      const message =
        "a target needs clusterName or clusterSelector (clusters no target matches get the default)";
      reporter.report({ origin: definition.origin, path: at.slice(0, -1), code: "MISSING_FIELD", message });
      return;
    }
    const targetPath = directory(tree, app, target.path, definition, at, reporter);
    if (targetPath === undefined) return;
    const { name, clusterName, clusterSelector } = target;
    targets.push({
      name,
      ...(clusterName !== undefined ? { clusterName } : {}),
      ...(clusterSelector !== undefined ? { clusterSelector } : {}),
      source: `kustomize ${targetPath} (target ${name})`,
      objects: build(tree, targetPath, context, reporter),
    });
  });
  const builds = { source: `kustomize ${path}`, defaults, targets, notApplied: [] };
  return { resources: allBuilt(defaults, targets), builds };
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
