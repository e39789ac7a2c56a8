import { type ChartRenderer, defaultChartRenderer } from "../helm/chart-renderer.js";
import { createParseCache, type LoadResult, loadFleet, type ParseCache } from "../load/load-fleet.js";
import { mountTeamSources, type TeamSourceMounts, teamSourcePins, withMounts } from "../load/team-sources.js";
import { kustomizeDirectories } from "../manifests/app-kustomize.js";
import type { ChartRenders } from "../manifests/helm/chart-request.js";
import type { KustomizeBuilds } from "../manifests/kustomize/built-transfer.js";
import type { FileTree } from "../model/file-tree.js";
import type { LoadPolicy } from "../model/load-policy.js";
import { buildSettings } from "./build-settings.js";
import { KustomizeBuilder } from "./kustomize-builder.js";
import { parseTeamSources, TeamSourceFetcher } from "./team-source-fetcher.js";

// Loading a fleet whose apps are built takes the edge between pure loads: Helm charts are rendered by
// helm (a first load lists the `helm template` runs the apps need; the renderer answers them, from its
// cache mostly) and kustomizations are built in a worker thread (the directories known from the tree's
// paths and app.yaml files; the builder answers from its cache where nothing they read changed). The
// fleet is then loaded with what was built. A fleet without such apps is loaded once.

/** What builds a fleet's apps: helm for charts, the build worker for kustomizations, the teams' repositories' fetcher (each optional). */
export interface AppBuilders {
  readonly charts?: ChartRenderer | undefined;
  readonly kustomize?: KustomizeBuilder | undefined;
  readonly teamSources?: TeamSourceFetcher | undefined;
}

/** What a tree's built apps need, built: the teams' repositories' files, chart renders and kustomize builds (undefined: none needed). */
export interface AppBuildOutputs {
  readonly charts?: ChartRenders;
  readonly kustomize?: KustomizeBuilds;
  readonly teamSources?: TeamSourceMounts;
}

let sharedKustomize: KustomizeBuilder | undefined;

let sharedTeamSources:
  | { readonly entries: readonly string[]; readonly fetcher: TeamSourceFetcher }
  | undefined;

/** The process's builders: the chart renderer of its settings, one kustomize build worker, the team sources' fetcher. */
export function defaultBuilders(): AppBuilders {
  sharedKustomize ??= new KustomizeBuilder(kustomizeOptions(process.env));
  return {
    charts: defaultChartRenderer(buildSettings().chartSources),
    kustomize: sharedKustomize,
    teamSources: defaultTeamSources(),
  };
}

/** The fetcher of the repositories Teams pin, from the operator's --team-source (one per process). */
export function defaultTeamSources(): TeamSourceFetcher {
  const entries = buildSettings().teamSources ?? [];
  if (sharedTeamSources?.entries !== entries)
    sharedTeamSources = { entries, fetcher: new TeamSourceFetcher(parseTeamSources(entries)) };
  return sharedTeamSources.fetcher;
}

/** The builds `tree` needs, made by `builders`. */
export async function appBuildsFor(
  fleetTree: FileTree,
  builders: AppBuilders,
  cache: ParseCache,
  policy: LoadPolicy = buildSettings().policy,
): Promise<AppBuildOutputs> {
  const teamSources = await teamSourcesOf(fleetTree, builders.teamSources);
  // The apps are built from the fleet repo's files and the teams' repositories' together.
  const tree = withMounts(fleetTree, teamSources);
  const dirs = builders.kustomize ? kustomizeDirectories(tree) : [];
  const kustomize =
    builders.kustomize && dirs.length > 0
      ? await builders.kustomize.buildAll(dirs, tree, policy.maxAppObjects)
      : undefined;
  const charts =
    builders.charts && mayHaveHelmApps(tree)
      ? await renderCharts(tree, builders.charts, cache, policy, kustomize)
      : undefined;
  return {
    ...(charts ? { charts } : {}),
    ...(kustomize ? { kustomize } : {}),
    ...(teamSources ? { teamSources } : {}),
  };
}

// The teams' repositories the tree pins, fetched and laid out (undefined: no Team pins one).
async function teamSourcesOf(
  tree: FileTree,
  fetcher: TeamSourceFetcher | undefined,
): Promise<TeamSourceMounts | undefined> {
  const pins = teamSourcePins(tree);
  if (pins.length === 0) return undefined;
  const fetched = fetcher ? await fetcher.fetchAll(pins) : new Map();
  return mountTeamSources(tree, pins, fetched);
}

/** loadFleet with the tree's apps built by `builders` (default: the process's), under its load policy. */
export async function loadFleetWithBuilds(
  tree: FileTree,
  builders: AppBuilders = defaultBuilders(),
  cache: ParseCache = createParseCache(),
  policy: LoadPolicy = buildSettings().policy,
): Promise<LoadResult> {
  const { charts, kustomize, teamSources } = await appBuildsFor(tree, builders, cache, policy);
  return loadFleet(tree, cache, charts, policy, kustomize, teamSources);
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
