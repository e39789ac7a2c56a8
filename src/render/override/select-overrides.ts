import { type ClusterFacts, matchesClusterAffinity } from "../../model/cluster-affinity.js";
import { compareStrings } from "../../model/file-tree.js";
import { matchesResourceSelector } from "../../model/resource-selection.js";
import type { Override, Overriders, Resource } from "../../model/types.js";

/** One Override rule that applies to an object in a cluster. */
export interface ApplicableRule {
  readonly override: Override;
  readonly ruleIndex: number;
  readonly overriders: Overriders;
}

/**
 * The Override rules for a resource in a cluster, in the order they apply: less specific Overrides
 * first — everything (no selectors) < by app or by kind < by label selector < by name — so the most
 * specific one wins, as in Karmada; ties by Override name; within an Override, rules in file order,
 * each only where its targetCluster selects the cluster.
 */
export function applicableRules(
  resource: Resource,
  cluster: ClusterFacts,
  overrides: readonly Override[],
): ApplicableRule[] {
  const matching = overrides
    .map((override) => ({ override, specificity: specificityFor(override, resource) }))
    .filter((entry): entry is { override: Override; specificity: number } => entry.specificity !== undefined)
    .sort(
      (a, b) =>
        a.specificity - b.specificity || compareStrings(a.override.metadata.name, b.override.metadata.name),
    );
  return matching.flatMap(({ override }) =>
    override.spec.overrideRules.flatMap((rule, ruleIndex) =>
      rule.targetCluster === undefined || matchesClusterAffinity(rule.targetCluster, cluster)
        ? [{ override, ruleIndex, overriders: rule.overriders }]
        : [],
    ),
  );
}

/** How specifically an Override selects a resource (higher is more specific), or undefined when it does not. */
export function specificityFor(override: Override, resource: Resource): number | undefined {
  const { apps, resourceSelectors } = override.spec;
  if (apps === undefined && resourceSelectors === undefined) return 0;
  let best: number | undefined = apps?.includes(resource.app) ? 1 : undefined;
  for (const selector of resourceSelectors ?? []) {
    if (!matchesResourceSelector(selector, resource)) continue;
    const level = selector.name !== undefined ? 3 : selector.labelSelector !== undefined ? 2 : 1;
    best = Math.max(best ?? 0, level);
  }
  return best;
}
