import type { NameOrder } from "./fnv.js";
import { capOf, floorOf, type Slot, sumOf } from "./slots.js";
import { type Division, dealByWebster, type Share } from "./webster.js";

/** How a dynamic division treats the previous counts. */
export interface DynamicOptions {
  /**
   * Aggregated: use as few clusters as capacity allows — on scale-up clusters already holding
   * replicas first, by free room; on a rebalance every cluster by free plus current room.
   */
  readonly aggregated: boolean;
  /** A rebalance trigger: divide from scratch by total room (free + current), ignoring the previous counts. */
  readonly fresh: boolean;
  readonly order: NameOrder;
}

/**
 * Divides `total` by available capacity (Karmada's dynamic weight and Aggregated strategies, "Steady"
 * mode). Scale-up divides only the increment, weighted by each cluster's free room, and adds it: no
 * cluster shrinks. Scale-down divides the new total with the previous counts as weights and caps: no
 * cluster grows, no new cluster appears. An equal total keeps the previous counts.
 */
export function divideByCapacity(total: number, given: readonly Slot[], options: DynamicOptions): Division {
  // Replicas above a cluster's (new) maximum are not kept: they are placed again like lost ones.
  const slots = given.map((s) => (s.current > s.max ? { ...s, current: s.max } : s));
  if (options.fresh) return divideFresh(total, slots, options);
  const current = sumOf(slots.map((s) => s.current));
  // An equal total is a scale-down to the same total: weighted and capped by the current counts, it
  // keeps them, unless a cluster is below its minimum.
  // Minimums are hard: when raising clusters to them takes more than the increment, the others give
  // way as in a scale-down (which seeds every minimum) instead of the minimums going unmet.
  const raise = sumOf(slots.map((s) => Math.max(0, floorOf(s) - s.current)));
  if (total > current && raise <= total - current) return scaleUp(total - current, slots, options);
  return scaleDown(total, slots, options);
}

// Unknown room counts as the whole total, as Karmada replaces an unlimited estimate with spec.replicas.
function roomWeight(room: number, total: number): number {
  return Number.isFinite(room) ? room : total;
}

function divideFresh(total: number, slots: readonly Slot[], options: DynamicOptions): Division {
  const room = (s: Slot) => roomWeight(capOf(s), total);
  // A rebalance ranks every cluster by its whole room, holders or not (Karmada's fresh scale).
  const used = options.aggregated
    ? coveringPrefix(rankForAggregation(slots, capOf, false), total, room)
    : new Set(slots.map((s) => s.name));
  const shares = slots.map((s) => ({
    name: s.name,
    weight: used.has(s.name) ? room(s) : 0,
    seed: floorOf(s),
    cap: capOf(s),
  }));
  return dealShares(total, shares, options.order);
}

function scaleUp(increment: number, slots: readonly Slot[], options: DynamicOptions): Division {
  const free = (s: Slot) => roomWeight(capOf(s) - s.current, increment);
  // Clusters that hold replicas first, each group by free room alone (Karmada's scale-up).
  const used = options.aggregated
    ? coveringPrefix(
        rankForAggregation(slots, (s) => capOf(s) - s.current, true),
        increment,
        free,
      )
    : new Set(slots.map((s) => s.name));
  const shares = slots.map((s) => ({
    name: s.name,
    weight: used.has(s.name) ? Math.max(0, free(s)) : 0,
    seed: Math.max(0, floorOf(s) - s.current),
    cap: Math.max(0, capOf(s) - s.current),
  }));
  const added = dealShares(increment, shares, options.order);
  return {
    seats: new Map(slots.map((s) => [s.name, s.current + (added.seats.get(s.name) ?? 0)])),
    unplaced: added.unplaced,
  };
}

function scaleDown(total: number, slots: readonly Slot[], options: DynamicOptions): Division {
  // Holders by count, the most first; a cluster holding none has no weight, wherever it ranks.
  const ranked = [...slots].sort((a, b) => b.current - a.current || (a.name < b.name ? -1 : 1));
  const used = options.aggregated
    ? coveringPrefix(ranked, total, (s) => s.current)
    : new Set(slots.map((s) => s.name));
  // Minimums are hard: a cluster below its minimum is raised to it even while the total shrinks.
  const shares = slots.map((s) => ({
    name: s.name,
    weight: used.has(s.name) ? s.current : 0,
    seed: floorOf(s),
    cap: Math.max(Math.min(s.current, capOf(s)), floorOf(s)),
  }));
  return dealShares(total, shares, options.order);
}

// Karmada's order: with `holdersFirst`, clusters that already hold replicas first; then by the given
// room descending; ties go to holders (Karmada scores them higher), then to more free plus current
// room, then by name.
function rankForAggregation(
  slots: readonly Slot[],
  room: (s: Slot) => number,
  holdersFirst: boolean,
): Slot[] {
  const holds = (s: Slot) => Number(s.current > 0);
  const keys = [...(holdersFirst ? [holds] : []), room, holds, capOf];
  return [...slots].sort((a, b) => {
    for (const key of keys) if (key(a) !== key(b)) return key(b) > key(a) ? 1 : -1;
    return a.name < b.name ? -1 : 1;
  });
}

// The shortest prefix of the ranked slots whose weights cover the amount (all of them if none does).
function coveringPrefix(ranked: readonly Slot[], amount: number, weight: (s: Slot) => number): Set<string> {
  const used = new Set<string>();
  let covered = 0;
  for (const slot of ranked) {
    if (covered >= amount) break;
    used.add(slot.name);
    covered += weight(slot);
  }
  return used;
}

// Deals with seeds first; when the seeds alone exceed the amount, the amount is dealt among them by weight.
function dealShares(amount: number, shares: readonly Share[], order: NameOrder): Division {
  const seeds = sumOf(shares.map((s) => s.seed ?? 0));
  if (seeds <= amount) return dealByWebster(amount, shares, order);
  return dealByWebster(
    amount,
    shares.map((s) => ({ name: s.name, weight: Math.max(1, s.weight), cap: s.seed ?? 0 })),
    order,
  );
}
