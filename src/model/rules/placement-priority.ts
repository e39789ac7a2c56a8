import { groupKind, isWorkloadKind } from "../../apimachinery/kinds.js";
import { indexInterpreters } from "../interpreter-index.js";
import type { Placement, Resource } from "../types.js";
import { describeResource } from "./duplicate-resources.js";
import type { RuleContext } from "./rule.js";

/**
 * A workload follows its highest-priority Placement; two Placements tied at the top for the same workload
 * leave its placement undecided, so that is an error naming both files.
 */
export function checkPlacementPriority({ model, reporter, selections }: RuleContext): void {
  const interpreterFor = indexInterpreters(model);
  const ties = new Map<string, { placements: readonly Placement[]; workloads: Resource[] }>();
  for (const resource of model.apps.flatMap((app) => app.resources)) {
    if (!isWorkloadKind(groupKind(resource.group, resource.kind), interpreterFor(resource))) continue;
    const matching = selections.placementsOf(resource);
    const top = Math.max(...matching.map(priorityOf));
    const tied = matching.filter((placement) => priorityOf(placement) === top);
    if (tied.length < 2) continue;
    const key = tied.map((p) => p.metadata.name).join("\0");
    const entry = ties.get(key) ?? { placements: tied, workloads: [] };
    entry.workloads.push(resource);
    ties.set(key, entry);
  }
  for (const { placements, workloads } of ties.values()) {
    const [first, ...others] = placements;
    const last = others.at(-1);
    const [workload] = workloads;
    if (!first || !last || !workload) continue;
    const names = placements
      .map((p) => `"${p.metadata.name}" (${reporter.where(p.origin, ["metadata", "name"])})`)
      .join(" and ");
    const more =
      workloads.length > 1
        ? ` and ${workloads.length - 1} more workload${workloads.length > 2 ? "s" : ""}`
        : "";
    reporter.report({
      origin: last.origin,
      path: ["metadata", "name"],
      code: "PRIORITY_TIE",
      message: `${describeResource(workload)}${more} selected by placements ${names} with equal priority ${priorityOf(first)}; give one a higher spec.priority`,
    });
  }
}

function priorityOf(placement: Placement): number {
  return placement.spec.priority ?? 0;
}
