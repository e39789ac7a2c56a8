import type { ScoredCandidate } from "../framework.js";

/**
 * Keeps the first `cap` candidates; for divided workloads whose kept clusters cannot hold the total,
 * swaps the weakest kept cluster (never a pinned one) for the roomiest left-out cluster while that adds
 * room — Karmada's selectBestClustersByCluster rule, so a Karmada user's placement carries over.
 */
export function keepWithCapacity(
  ordered: readonly ScoredCandidate[],
  cap: number,
  options: { readonly replicas: number; readonly divided: boolean; readonly pinned?: ReadonlySet<string> },
): ScoredCandidate[] {
  const kept = ordered.slice(0, cap);
  if (!options.divided) return kept;
  const rest = ordered.slice(cap);
  const room = (c: ScoredCandidate) => c.room;
  for (let i = kept.length - 1; i >= 0; i--) {
    const total = kept.reduce((sum, c) => sum + room(c), 0);
    if (total >= options.replicas) break;
    const weakest = kept[i];
    if (!weakest || options.pinned?.has(weakest.cluster.name)) continue;
    const best = rest.reduce<ScoredCandidate | undefined>(
      (top, c) => (top === undefined || room(c) > room(top) ? c : top),
      undefined,
    );
    if (!best || room(best) <= room(weakest)) break;
    kept[i] = best;
    rest.splice(rest.indexOf(best), 1, weakest);
  }
  return kept;
}
