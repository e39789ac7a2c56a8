import { type FilterPlugin, SUCCESS } from "../framework.js";

// Looked up per workload and cluster: a set per list, built once.
const sets = new WeakMap<readonly string[], ReadonlySet<string>>();

function servedSet(apis: readonly string[]): ReadonlySet<string> {
  let set = sets.get(apis);
  if (!set) {
    set = new Set(apis);
    sets.set(apis, set);
  }
  return set;
}

/**
 * Only clusters that serve the workload's API (group/version/kind), as observed from discovery. A
 * cluster whose APIs are unknown counts as serving everything, so a missing observation never blocks.
 * Unlike Karmada, a cluster that already holds the workload is not kept: gitfleet's first render can
 * come before any discovery was read, and an object whose kind a member does not serve cannot be
 * applied there (nor is there anything of it to delete).
 */
export const APIEnablement: FilterPlugin = {
  name: "APIEnablement",
  readsWorkload: true,
  filter: ({ problem }, cluster) => {
    const { apiVersion, kind } = problem.workload;
    if (cluster.apiEnablements === undefined || apiVersion === undefined || kind === undefined)
      return SUCCESS;
    if (servedSet(cluster.apiEnablements).has(`${apiVersion}/${kind}`)) return SUCCESS;
    return { status: "Unschedulable", reason: `api ${apiVersion} ${kind} not served` };
  },
};
