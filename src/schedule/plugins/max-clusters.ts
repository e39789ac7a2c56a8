import type { SelectPlugin } from "../framework.js";
import { keepWithCapacity } from "./capacity-cap.js";

/** At most spec.maxClusters clusters, the best-ranked ones (swapping for capacity when divided). */
export const MaxClusters: SelectPlugin = {
  name: "MaxClusters",
  select: ({ problem, divided }, candidates) => {
    const max = problem.placement.maxClusters;
    if (max !== undefined && !(Number.isInteger(max) && max >= 1))
      return { status: "Error", message: `maxClusters must be a positive integer (got ${max})` };
    if (max === undefined || candidates.length <= max) return { status: "Success", selected: candidates };
    const selected = keepWithCapacity(candidates, max, { replicas: problem.replicas, divided });
    const kept = new Set(selected.map((c) => c.cluster.name));
    const dropped: Record<string, string> = {};
    const why = `maxClusters ${max}`;
    for (const c of candidates) if (!kept.has(c.cluster.name)) dropped[c.cluster.name] = why;
    return { status: "Success", selected, dropped };
  },
};
