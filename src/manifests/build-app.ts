import type { FileTree } from "../model/file-tree.js";
import type { ManifestContext } from "../model/read-manifest.js";
import type { Reporter } from "../model/reporter.js";
import type { AppBuilds, AppObject, Resource } from "../model/types.js";
import { buildHelmApp, type HelmInputs } from "./app-helm.js";
import { buildKustomizeApp, isKustomizeApp, type MadeBuilds } from "./app-kustomize.js";
import type { ChartRequest } from "./helm/chart-request.js";

/**
 * Where an app directory's objects come from: a Helm chart's render (spec.helm), a kustomize build
 * (a kustomization in the directory, or spec.kustomize), or the directory's manifests, each read as
 * written. The first two are built here; a directory's manifests are read one by one by the load.
 */
export type AppSource =
  | { readonly type: "helm"; readonly definition: AppObject }
  | { readonly type: "kustomize"; readonly definition: AppObject | undefined }
  | { readonly type: "directory" };

/** The app's source, from its definition and whether its directory holds a kustomization. */
export function appSourceOf(
  app: string,
  definition: AppObject | undefined,
  withKustomization: ReadonlySet<string>,
): AppSource {
  if (definition?.spec.helm) return { type: "helm", definition };
  if (isKustomizeApp(app, definition, withKustomization)) return { type: "kustomize", definition };
  return { type: "directory" };
}

/** What building an app gives: its objects, what each cluster gets, and the chart renders it needs. */
export interface BuiltApp {
  readonly resources: readonly Resource[];
  readonly builds: AppBuilds | undefined;
  readonly requests: readonly ChartRequest[];
}

/** What every build may use: the Helm capabilities and renders, and the kustomize builds made so far. */
export type BuildInputs = HelmInputs & { readonly made: MadeBuilds };

const NOTHING: BuiltApp = { resources: [], builds: undefined, requests: [] };

/**
 * Builds one app of the fleet repo from its source: the one entry to the manifest builders, in the
 * manner of a repo server's manifest generation. Pure; every defect is a problem at the app's files,
 * and an app that cannot be built gives no objects (the load is then invalid).
 */
export function buildApp(
  tree: FileTree,
  source: Exclude<AppSource, { type: "directory" }>,
  context: ManifestContext,
  reporter: Reporter,
  inputs: BuildInputs,
): BuiltApp {
  if (source.type === "kustomize") {
    const built = buildKustomizeApp(tree, context.app, source.definition, context, reporter, inputs.made);
    return built ? { ...built, requests: [] } : NOTHING;
  }
  if (source.definition.spec.kustomize) {
    const message = "an app is built by kustomize or rendered by Helm, not both";
    const origin = source.definition.origin;
    reporter.report({ origin, path: ["spec", "helm"], code: "SCHEMA_VIOLATION", message });
    return NOTHING;
  }
  return buildHelmApp(tree, source.definition, context, reporter, inputs);
}
