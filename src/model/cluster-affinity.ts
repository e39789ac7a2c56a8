import { matchesLabelSelector } from "../apimachinery/label-selector.js";
import type { Cluster, ClusterAffinity, LabelSelector, Labels } from "./types.js";

/** What cluster selection looks at: a cluster's name, labels and location. Unset fields are "". */
export interface ClusterFacts {
  readonly name: string;
  readonly labels: Labels;
  readonly provider: string;
  readonly region: string;
  readonly zone: string;
}

/** The facts of a Cluster from the fleet repo. */
export function clusterFacts(cluster: Cluster): ClusterFacts {
  return {
    name: cluster.metadata.name,
    labels: cluster.metadata.labels ?? {},
    provider: cluster.spec.provider ?? "",
    region: cluster.spec.region ?? "",
    zone: cluster.spec.zone ?? "",
  };
}

/** Why an affinity that lists clusterNames rejects every cluster it does not list. */
export const NOT_IN_CLUSTER_NAMES = "not in clusterNames";

/**
 * Why a cluster does not satisfy an affinity (Karmada's ClusterAffinity: every given part must hold),
 * or undefined when it does. Reasons are short and shared between clusters, so a diagnosis can count
 * them: "not in region [us-east]", "excluded by name".
 */
export function explainAffinityMismatch(
  affinity: ClusterAffinity,
  cluster: ClusterFacts,
): string | undefined {
  const names = affinity.clusterNames ?? [];
  if (names.length > 0 && !names.includes(cluster.name)) return NOT_IN_CLUSTER_NAMES;
  if (affinity.exclude?.includes(cluster.name)) return "excluded by name";
  if (affinity.labelSelector && !matchesLabelSelector(affinity.labelSelector, cluster.labels)) {
    return memo(
      affinity.labelSelector,
      () => `labels do not match ${formatLabelSelector(affinity.labelSelector ?? {})}`,
    );
  }
  for (const requirement of affinity.fieldSelector?.matchExpressions ?? []) {
    const values = requirement.values ?? [];
    const listed = values.includes(cluster[requirement.key]);
    if (requirement.operator === "In" && !listed)
      return memo(requirement, () => `not in ${requirement.key} [${values.join(", ")}]`);
    if (requirement.operator === "NotIn" && listed)
      return memo(requirement, () => `in excluded ${requirement.key} [${values.join(", ")}]`);
  }
  return undefined;
}

/** True when a cluster satisfies every part of an affinity. */
export function matchesClusterAffinity(affinity: ClusterAffinity, cluster: ClusterFacts): boolean {
  return explainAffinityMismatch(affinity, cluster) === undefined;
}

/** A label selector in kubectl's string form: `env=prod,tier in (a,b),!gpu`. */
export function formatLabelSelector(selector: LabelSelector): string {
  const parts = Object.entries(selector.matchLabels ?? {}).map(([key, value]) => `${key}=${value}`);
  for (const { key, operator, values = [] } of selector.matchExpressions ?? []) {
    if (operator === "Exists") parts.push(key);
    else if (operator === "DoesNotExist") parts.push(`!${key}`);
    else parts.push(`${key} ${operator === "In" ? "in" : "notin"} (${values.join(",")})`);
  }
  return parts.length === 0 ? "{}" : parts.join(",");
}

// Reasons are the same for every cluster a selector rejects; build each string once per selector.
const reasons = new WeakMap<object, string>();
function memo(key: object, build: () => string): string {
  let reason = reasons.get(key);
  if (reason === undefined) {
    reason = build();
    reasons.set(key, reason);
  }
  return reason;
}
