import { compareStrings } from "../model/file-tree.js";

/**
 * The one-line summary of a filter stage, KubeAdmiral-style: how many clusters are available, then
 * each reason with how many clusters it removed, most common first:
 * "0/5 clusters available: 3 untolerated taint {gpu=true:NoSchedule}, 2 not in region [us-east]".
 * `counts` holds how many clusters each reason removed.
 */
export function summarizeFilters(total: number, counts: ReadonlyMap<string, number>): string {
  let removed = 0;
  for (const n of counts.values()) removed += n;
  const available = total - removed;
  const parts = [...counts]
    .sort(([a, x], [b, y]) => y - x || compareStrings(a, b))
    .map(([reason, n]) => `${n} ${reason}`);
  return `${available}/${total} clusters available${parts.length > 0 ? `: ${parts.join(", ")}` : ""}`;
}
