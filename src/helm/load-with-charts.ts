import type { FileTree } from "../model/file-tree.js";
import type { ChartRenders } from "../model/helm/chart-request.js";
import { createParseCache, type LoadResult, loadFleet, type ParseCache } from "../model/load-fleet.js";
import type { ChartRenderer } from "./chart-renderer.js";

// Loading a fleet that has Helm apps takes helm between two pure loads: the first lists the
// `helm template` runs the apps need, the renderer answers them (from its cache, mostly), and the
// second load reads the rendered documents. A fleet without Helm apps is loaded once.

/** The renders a tree's Helm apps need, or undefined when it has none (or no renderer is given). */
export async function chartRendersFor(
  tree: FileTree,
  renderer: ChartRenderer | undefined,
  cache: ParseCache,
): Promise<ChartRenders | undefined> {
  if (!renderer || !mayHaveHelmApps(tree)) return undefined;
  const { charts } = loadFleet(tree, cache);
  if (charts.length === 0) return undefined;
  return renderer.renderAll(charts, tree);
}

/** loadFleet with the tree's charts rendered by `renderer`. */
export async function loadFleetWithCharts(
  tree: FileTree,
  renderer: ChartRenderer | undefined,
  cache: ParseCache = createParseCache(),
): Promise<LoadResult> {
  const charts = await chartRendersFor(tree, renderer, cache);
  return loadFleet(tree, cache, charts);
}

// Only an app.yaml that says "helm" can declare a Helm app: a fleet without one skips the first load.
function mayHaveHelmApps(tree: FileTree): boolean {
  for (const [path, bytes] of tree)
    if (/^apps\/[^/]+\/app\.ya?ml$/.test(path) && Buffer.from(bytes).includes("helm")) return true;
  return false;
}
