import { compareStrings } from "./file-tree.js";
import { spreadHash32 } from "./hash.js";

/**
 * Member clusters divided over shards by consistent hashing with bounded loads (Mirrokni, Thorup and
 * Zadimoghaddam; Argo CD's `consistent-hashing` sharding algorithm): each shard stands at many points
 * of a hash ring, a cluster goes to the first shard clockwise of its own hash whose load is under the
 * bound — at most ⌈clusters ÷ shards × 1.25⌉ — so no shard carries more than a quarter above the mean,
 * and a shard added or removed moves few clusters (about one in the new number of shards), not
 * nearly all as `hash mod shards` does. A function of the names alone: every replica computes the
 * same assignment with no coordination.
 */

/** How many points each shard has on the ring (more: a smoother division). */
export const POINTS_PER_SHARD = 128;

/** The bound on a shard's load, relative to the mean (Argo CD's and the paper's 1.25). */
export const LOAD_FACTOR = 1.25;

/** The most shards `--shards` takes. */
export const MAX_SHARDS = 64;

/** The shard (0 … shards − 1) of each cluster. */
export function assignShards(clusters: readonly string[], shards: number): Map<string, number> {
  if (!Number.isInteger(shards) || shards < 1 || shards > MAX_SHARDS)
    throw new RangeError(`shards must be an integer from 1 to ${MAX_SHARDS}, not ${shards}`);
  const names = [...new Set(clusters)].sort(compareStrings);
  const assignment = new Map<string, number>();
  if (shards === 1) {
    for (const name of names) assignment.set(name, 0);
    return assignment;
  }
  const ring = ringOf(shards);
  const bound = Math.ceil((names.length / shards) * LOAD_FACTOR);
  const loads = new Array<number>(shards).fill(0);
  // Clusters in name order, so that which cluster overflows to the next point is fixed too.
  for (const name of names) {
    let at = firstPointAtOrAfter(ring, spreadHash32(`cluster/${name}`));
    for (;;) {
      const shard = (ring[at % ring.length] as RingPoint).shard;
      if ((loads[shard] as number) < bound) {
        loads[shard] = (loads[shard] as number) + 1;
        assignment.set(name, shard);
        break;
      }
      at++;
    }
  }
  return assignment;
}

/** The clusters of one shard, in name order. */
export function clustersOfShard(assignment: ReadonlyMap<string, number>, shard: number): string[] {
  return [...assignment]
    .filter(([, s]) => s === shard)
    .map(([cluster]) => cluster)
    .sort(compareStrings);
}

interface RingPoint {
  readonly hash: number;
  readonly shard: number;
}

// Every shard's points, ordered around the ring (ties, vanishingly rare, by shard).
function ringOf(shards: number): RingPoint[] {
  const ring: RingPoint[] = [];
  for (let shard = 0; shard < shards; shard++)
    for (let point = 0; point < POINTS_PER_SHARD; point++)
      ring.push({ hash: spreadHash32(`shard/${shard}#${point}`), shard });
  return ring.sort((a, b) => a.hash - b.hash || a.shard - b.shard);
}

// The index of the first point at or clockwise after `hash` (binary search; wraps to 0).
function firstPointAtOrAfter(ring: readonly RingPoint[], hash: number): number {
  let low = 0;
  let high = ring.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if ((ring[mid] as RingPoint).hash < hash) low = mid + 1;
    else high = mid;
  }
  return low === ring.length ? 0 : low;
}
