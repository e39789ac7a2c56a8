import type { RenderResult, WorkloadDecision } from "./render-result.js";

// What the last render placed, as the next render reads it: per object its clusters, per workload
// its decision. Pure.

/** What each object had per cluster last time: a workload's replicas, or 1 for other objects. */
export interface PreviousPlacement {
  /** `app` is the object's app: what a scoped render asks for is indexed first, the rest only if asked. */
  get(identity: string, app: string): Readonly<Record<string, number>> | undefined;
  /** The previous render's decision for a workload: its failover record, its capacity verdicts. */
  decision(identity: string, app: string): WorkloadDecision | undefined;
}

// Each entry built when asked for, and the previous render indexed in two parts: the apps a scoped
// render renders again, and — only when something asks — every other app. A one-app change indexes
// that app's objects, not the hundreds of thousands a large fleet had.
export function previousPlacement(
  previous: RenderResult | undefined,
  scope: ReadonlySet<string> | undefined,
): PreviousPlacement {
  const inScope = (app: string) => scope === undefined || scope.has(app);
  const scoped = placementIndex(previous, inScope);
  let others: PlacementIndex | undefined;
  const indexOf = (app: string): PlacementIndex => {
    if (inScope(app)) return scoped;
    others ??= placementIndex(previous, (a) => !inScope(a));
    return others;
  };
  return {
    decision: (identity, app) => indexOf(app).decisions.get(identity),
    get: (identity, app) => {
      const index = indexOf(app);
      const decided = index.decisions.get(identity)?.decision.clusters;
      if (decided) return { ...decided };
      const clusters = index.clustersOf.get(identity);
      return clusters && Object.fromEntries(clusters.map((cluster) => [cluster, 1]));
    },
  };
}

interface PlacementIndex {
  readonly clustersOf: ReadonlyMap<string, readonly string[]>;
  readonly decisions: ReadonlyMap<string, WorkloadDecision>;
}

function placementIndex(previous: RenderResult | undefined, apps: (app: string) => boolean): PlacementIndex {
  const clustersOf = new Map<string, string[]>();
  for (const { identity, cluster, app } of previous?.objects ?? []) {
    if (!apps(app)) continue;
    const clusters = clustersOf.get(identity);
    if (clusters) clusters.push(cluster);
    else clustersOf.set(identity, [cluster]);
  }
  const decisions = new Map<string, WorkloadDecision>();
  for (const decision of previous?.decisions ?? [])
    if (apps(decision.app)) decisions.set(decision.identity, decision);
  return { clustersOf, decisions };
}
