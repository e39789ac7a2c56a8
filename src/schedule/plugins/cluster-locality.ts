import type { ScorePlugin } from "../framework.js";

/** 100 for a cluster that already holds replicas of this workload: stickiness avoids needless moves. */
export const ClusterLocality: ScorePlugin = {
  name: "ClusterLocality",
  score: (_context, candidates) => candidates.map((c) => (c.current > 0 ? 100 : 0)),
};
