import { fileURLToPath } from "node:url";
import { appBuildsFor, loadFleetWithBuilds } from "../../src/builds/load-with-builds.js";
import { ChartRenderer } from "../../src/helm/chart-renderer.js";
import { helmEnvironment } from "../../src/helm/helm-environment.js";
import { createParseCache, type LoadResult } from "../../src/load/load-fleet.js";
import type { ChartRenders } from "../../src/manifests/helm/chart-request.js";
import type { FileTree } from "../../src/model/file-tree.js";
import { readDirectoryTree } from "../../src/source/read-directory.js";

/** The absolute path of example-repo/. */
export const EXAMPLE_REPO_DIR = fileURLToPath(new URL("../../example-repo", import.meta.url));

/** Reads example-repo/ from disk into a FileTree. */
export function readExampleRepo(): Promise<FileTree> {
  return readDirectoryTree(EXAMPLE_REPO_DIR);
}

const renderer = new ChartRenderer(helmEnvironment());

/** The renders of a tree's Helm charts (the example fleet has a Helm app), for loadFleet's third input. */
export async function chartsOf(tree: FileTree): Promise<ChartRenders | undefined> {
  return (await appBuildsFor(tree, { charts: renderer }, createParseCache())).charts;
}

/** loadFleet with the tree's Helm charts rendered by the pinned helm. */
export function loadWithCharts(tree: FileTree): Promise<LoadResult> {
  return loadFleetWithBuilds(tree, { charts: renderer });
}
