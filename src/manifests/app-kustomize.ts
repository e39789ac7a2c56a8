import { asList, asMap } from "../apimachinery/json.js";
import type { FileTree } from "../model/file-tree.js";
import { identityOf } from "../model/identity.js";
import { type ManifestContext, readManifest } from "../model/read-manifest.js";
import { joinPath, normalizePath } from "../model/repo-path.js";
import type { Reporter } from "../model/reporter.js";
import { RecordingTree } from "../model/tree-digest.js";
import type { AppBuilds, AppObject, BuildTarget, Resource } from "../model/types.js";
import { parseSourceFile } from "../model/yaml-source.js";
import { allBuilt } from "./app-builds.js";
import {
  buildKustomization,
  DEFAULT_BUILD_OBJECTS,
  KUSTOMIZATION_FILES,
  type KustomizeResult,
  kustomizationFile,
} from "./kustomize/build-kustomization.js";
import { type KustomizeBuilds, receiveBuild } from "./kustomize/built-transfer.js";

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

/**
 * Every kustomization directory the tree's Kustomize apps build — each app's default (its
 * directory, or spec.kustomize.path) and its targets' — known before the fleet is loaded, so the
 * edge can build them beforehand (off the event loop). Read from paths and the app.yaml files that
 * name kustomize; an invalid app.yaml makes the load invalid whatever is built.
 */
export function kustomizeDirectories(tree: FileTree): string[] {
  const dirs = new Set<string>();
  const add = (app: string, relative: unknown) => {
    const path = normalizePath(joinPath(`apps/${app}`, typeof relative === "string" ? relative : "."));
    if (path !== undefined && kustomizationFile(tree, path) !== undefined) dirs.add(path);
  };
  for (const app of appsWithKustomization(tree)) add(app, ".");
  for (const [path, bytes] of tree) {
    const match = /^apps\/([^/]+)\/app\.ya?ml$/.exec(path);
    if (!match || !new TextDecoder().decode(bytes).includes("kustomize")) continue;
    for (const document of parseSourceFile(path, bytes).documents) {
      const spec = asMap(asMap(document.value).spec).kustomize;
      if (spec === undefined) continue;
      add(match[1] as string, asMap(spec).path);
      for (const target of asList(asMap(spec).targets)) add(match[1] as string, asMap(target).path);
    }
  }
  return [...dirs].sort();
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
  made: MadeBuilds = { maxObjects: DEFAULT_BUILD_OBJECTS },
): { resources: Resource[]; builds: AppBuilds } | undefined {
  // Every file the builds look at goes into the input digest: a base elsewhere in the repo that
  // changes re-renders the app.
  const recording = new RecordingTree(tree);
  const built = buildWithTree(recording, app, definition, { ...context, ...made, recording }, reporter);
  return built && { ...built, builds: { ...built.builds, inputDigest: recording.digest() } };
}

/**
 * How an app's kustomizations are built: here (no `builds`), or by the edge beforehand (a worker
 * thread) — then each directory's build is looked up in `builds`, and one that is not there is
 * listed in `requested` and reported as not built yet.
 */
export interface MadeBuilds {
  readonly maxObjects: number;
  readonly builds?: KustomizeBuilds;
  readonly requested?: Set<string>;
}

type BuildContext = ManifestContext & MadeBuilds & { readonly recording: RecordingTree };

function buildWithTree(
  tree: FileTree,
  app: string,
  definition: AppObject | undefined,
  context: BuildContext,
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

// A kustomization's build: made here, or the edge's, whose reads join the app's input digest.
function madeBuild(tree: FileTree, path: string, context: BuildContext): KustomizeResult {
  if (!context.builds) return buildKustomization(tree, path, { maxObjects: context.maxObjects });
  context.requested?.add(path);
  const made = context.builds.get(path);
  if (!made) {
    const file = kustomizationFile(tree, path) ?? path;
    const message = `${path}/ has not been built: kustomizations are built by gitfleet's build step before loading`;
    return {
      objects: [],
      problems: [{ file, line: 1, column: 1, path: "", severity: "error", code: "RENDER_FAILED", message }],
    };
  }
  for (const seen of made.seen) context.recording.has(seen);
  return receiveBuild(made, tree);
}

// One kustomization's objects as the app's resources, by identity; problems go to the reporter.
function build(
  tree: FileTree,
  path: string,
  context: BuildContext,
  reporter: Reporter,
): Map<string, Resource> {
  const result = madeBuild(tree, path, context);
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
