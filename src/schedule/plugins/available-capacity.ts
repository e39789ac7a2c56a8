import type { ScorePlugin } from "../framework.js";

/**
 * Up to 100 by how many replicas a cluster can still fit, relative to the roomiest candidate; a cluster
 * with unknown (unlimited) capacity scores 100. Integer arithmetic, so scores are exact.
 */
export const AvailableCapacity: ScorePlugin = {
  name: "AvailableCapacity",
  score: (_context, candidates) => {
    let most = 0;
    for (const c of candidates) most = Math.max(most, c.free ?? 0);
    return candidates.map((c) => {
      if (c.free === undefined) return 100;
      return most === 0 ? 0 : Math.floor((100 * c.free) / most);
    });
  },
};
