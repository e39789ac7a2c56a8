import { type ChartRenderer, defaultChartRenderer } from "../helm/chart-renderer.js";
import { createParseCache, type LoadResult, loadFleet, type ParseCache } from "../load/load-fleet.js";
import { kustomizeDirectories } from "../manifests/app-kustomize.js";
import type { ChartRenders } from "../manifests/helm/chart-request.js";
import type { KustomizeBuilds } from "../manifests/kustomize/built-transfer.js";
import type { FileTree } from "../model/file-tree.js";
import type { LoadPolicy } from "../model/load-policy.js";
import { buildSettings } from "./build-settings.js";
import { KustomizeBuilder } from "./kustomize-builder.js";

// Loading a fleet whose apps are built takes the edge between pure loads: Helm charts are rendered by
// helm (a first load lists the `helm template` runs the apps need; the renderer answers them, from its
// cache mostly) and kustomizations are built in a worker thread (the directories known from the tree's
// paths and app.yaml files; the builder answers from its cache where nothing they read changed). The
// fleet is then loaded with what was built. A fleet without such apps is loaded once.

/** What builds a fleet's apps: helm for charts, the build worker for kustomizations (each optional). */
export interface AppBuilders {
  readonly charts?: ChartRenderer | undefined;
  readonly kustomize?: KustomizeBuilder | undefined;
}

/** What a tree's built apps need, built: chart renders and kustomize builds (undefined: none needed). */
export interface AppBuildOutputs {
  readonly charts?: ChartRenders;
  readonly kustomize?: KustomizeBuilds;
}

let sharedKustomize: KustomizeBuilder | undefined;

/** The process's builders: the chart renderer of its settings, and one kustomize build worker. */
export function defaultBuilders(): AppBuilders {
  sharedKustomize ??= new KustomizeBuilder(kustomizeOptions(process.env));
  return { charts: defaultChartRenderer(buildSettings().chartSources), kustomize: sharedKustomize };
}

/** The builds `tree` needs, made by `builders`. */
export async function appBuildsFor(
  tree: FileTree,
  builders: AppBuilders,
  cache: ParseCache,
  policy: LoadPolicy = buildSettings().policy,
): Promise<AppBuildOutputs> {
  const dirs = builders.kustomize ? kustomizeDirectories(tree) : [];
  const kustomize =
    builders.kustomize && dirs.length > 0
      ? await builders.kustomize.buildAll(dirs, tree, policy.maxAppObjects)
      : undefined;
  const charts =
    builders.charts && mayHaveHelmApps(tree)
      ? await renderCharts(tree, builders.charts, cache, policy, kustomize)
      : undefined;
  return { ...(charts ? { charts } : {}), ...(kustomize ? { kustomize } : {}) };
}

/** loadFleet with the tree's apps built by `builders` (default: the process's), under its load policy. */
export async function loadFleetWithBuilds(
  tree: FileTree,
  builders: AppBuilders = defaultBuilders(),
  cache: ParseCache = createParseCache(),
  policy: LoadPolicy = buildSettings().policy,
): Promise<LoadResult> {
  const { charts, kustomize } = await appBuildsFor(tree, builders, cache, policy);
  return loadFleet(tree, cache, charts, policy, kustomize);
}

// The renders a tree's Helm apps need, or undefined when it has none.
async function renderCharts(
  tree: FileTree,
  renderer: ChartRenderer,
  cache: ParseCache,
  policy: LoadPolicy,
  kustomize: KustomizeBuilds | undefined,
): Promise<ChartRenders | undefined> {
  const { charts } = loadFleet(tree, cache, undefined, policy, kustomize ?? new Map());
  if (charts.length === 0) return undefined;
  return renderer.renderAll(charts, tree);
}

// Only an app.yaml that says "helm" can declare a Helm app: a fleet without one skips the first load.
function mayHaveHelmApps(tree: FileTree): boolean {
  for (const [path, bytes] of tree)
    if (/^apps\/[^/]+\/app\.ya?ml$/.test(path) && Buffer.from(bytes).includes("helm")) return true;
  return false;
}

// GITFLEET_KUSTOMIZE_TIMEOUT (seconds) and GITFLEET_KUSTOMIZE_MEMORY (MiB) bound each build.
function kustomizeOptions(env: NodeJS.ProcessEnv): { timeoutMs?: number; memoryMb?: number } {
  const timeout = Number(env.GITFLEET_KUSTOMIZE_TIMEOUT);
  const memory = Number(env.GITFLEET_KUSTOMIZE_MEMORY);
  return {
    ...(Number.isFinite(timeout) && timeout > 0 ? { timeoutMs: timeout * 1000 } : {}),
    ...(Number.isFinite(memory) && memory >= 64 ? { memoryMb: memory } : {}),
  };
}
