import { formatAmount, milliOf } from "../quota-amounts.js";
import type { FederatedResourceQuota } from "../quota-types.js";
import { suggest } from "../schema-problems.js";
import type { RuleContext } from "./rule.js";

/**
 * A FederatedResourceQuota's limits are non-negative quantities; each static assignment names a
 * Cluster once and only resources the overall limits name; and, as Karmada requires, the static
 * assignments together give no resource more than its overall limit. Whether the namespace's
 * workloads fit is checked against the render (plan/quota-check.ts).
 */
export function checkFleetQuotas(context: RuleContext): void {
  const clusters = context.model.clusters.map((c) => c.metadata.name);
  for (const quota of context.model.federatedResourceQuotas) {
    checkQuantities(context, quota);
    checkAssignments(context, quota, new Set(clusters));
    checkSums(context, quota);
  }
}

function checkQuantities(context: RuleContext, quota: FederatedResourceQuota): void {
  const lists: [readonly (string | number)[], Readonly<Record<string, string | number>>][] = [
    [["spec", "overall"], quota.spec.overall],
    ...(quota.spec.staticAssignments ?? []).map(
      (a, i) => [["spec", "staticAssignments", i, "hard"], a.hard] as [(string | number)[], typeof a.hard],
    ),
  ];
  for (const [path, list] of lists)
    for (const [resource, value] of Object.entries(list)) {
      const milli = milliOf(value);
      if (milli !== undefined && milli >= 0) continue;
      context.reporter.report({
        origin: quota.origin,
        path: [...path, resource],
        code: "INVALID_QUANTITY",
        message: `${resource}: ${JSON.stringify(value)} is not a non-negative quantity`,
      });
    }
}

function checkAssignments(context: RuleContext, quota: FederatedResourceQuota, clusters: Set<string>): void {
  const seen = new Set<string>();
  (quota.spec.staticAssignments ?? []).forEach((assignment, i) => {
    const at = ["spec", "staticAssignments", i];
    const name = assignment.clusterName;
    if (!clusters.has(name))
      context.reporter.report({
        origin: quota.origin,
        path: [...at, "clusterName"],
        code: "UNKNOWN_REFERENCE",
        message: `unknown cluster "${name}"${suggest(name, [...clusters])}`,
      });
    else if (seen.has(name))
      context.reporter.report({
        origin: quota.origin,
        path: [...at, "clusterName"],
        code: "DUPLICATE_MEMBER",
        message: `cluster ${name} is assigned twice; give it one entry`,
      });
    seen.add(name);
    for (const resource of Object.keys(assignment.hard))
      if (!Object.hasOwn(quota.spec.overall, resource))
        context.reporter.report({
          origin: quota.origin,
          path: [...at, "hard", resource],
          code: "INVALID_FIELD_COMBINATION",
          message: `${resource} is not limited overall: add it to spec.overall (the static assignments share the overall limits)`,
        });
  });
}

function checkSums(context: RuleContext, quota: FederatedResourceQuota): void {
  const assignments = quota.spec.staticAssignments ?? [];
  for (const [resource, value] of Object.entries(quota.spec.overall)) {
    const overall = milliOf(value);
    if (overall === undefined || overall < 0) continue;
    let sum = 0;
    for (const a of assignments)
      sum += Object.hasOwn(a.hard, resource) ? (milliOf(a.hard[resource] ?? 0) ?? 0) : 0;
    if (sum <= overall) continue;
    context.reporter.report({
      origin: quota.origin,
      path: ["spec", "overall", resource],
      code: "INVALID_FIELD_COMBINATION",
      message: `the static assignments give ${resource} ${formatAmount(resource, sum)} in all, more than the overall ${formatAmount(resource, overall)}; raise the overall limit or lower an assignment`,
    });
  }
}
