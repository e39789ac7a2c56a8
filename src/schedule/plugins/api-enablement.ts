import { type FilterPlugin, SUCCESS } from "../framework.js";

/**
 * Only clusters that serve the workload's API (group/version/kind), as observed from discovery. A
 * cluster whose APIs are unknown counts as serving everything, so a missing observation never blocks.
 */
export const APIEnablement: FilterPlugin = {
  name: "APIEnablement",
  readsWorkload: true,
  filter: ({ problem }, cluster) => {
    const { apiVersion, kind } = problem.workload;
    if (cluster.apiEnablements === undefined || apiVersion === undefined || kind === undefined)
      return SUCCESS;
    const wanted = `${apiVersion}/${kind}`;
    if (cluster.apiEnablements.includes(wanted)) return SUCCESS;
    return { status: "Unschedulable", reason: `API ${apiVersion} ${kind} not served` };
  },
};
