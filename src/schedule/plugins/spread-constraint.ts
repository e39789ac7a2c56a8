import type { SpreadConstraint as Constraint } from "../../model/types.js";
import { type FilterPlugin, SUCCESS } from "../framework.js";
import type { ClusterState } from "../types.js";

/** Drops clusters that lack the property a spread constraint groups by (no region, no such label). */
export const SpreadConstraint: FilterPlugin = {
  name: "SpreadConstraint",
  filter: ({ problem }, cluster) => {
    for (const constraint of problem.placement.spreadConstraints ?? []) {
      if ((constraint.spreadByField === undefined) === (constraint.spreadByLabel === undefined)) {
        return {
          status: "Error",
          message: "a spread constraint needs exactly one of spreadByField and spreadByLabel",
        };
      }
      if (groupOf(constraint, cluster) === "")
        return { status: "Unschedulable", reason: `no ${groupLabel(constraint)} to spread by` };
    }
    return SUCCESS;
  },
};

/** The group a cluster belongs to under a constraint: its name, region, zone, provider or label value. */
export function groupOf(constraint: Constraint, cluster: ClusterState): string {
  if (constraint.spreadByLabel !== undefined) return cluster.labels[constraint.spreadByLabel] ?? "";
  switch (constraint.spreadByField) {
    case "region":
      return cluster.region;
    case "zone":
      return cluster.zone;
    case "provider":
      return cluster.provider;
    default:
      return cluster.name;
  }
}

/** "region", "label team": what a constraint spreads by, for messages. */
export function groupLabel(constraint: Constraint): string {
  return constraint.spreadByLabel !== undefined
    ? `label ${constraint.spreadByLabel}`
    : (constraint.spreadByField ?? "cluster");
}
