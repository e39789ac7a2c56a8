import type { NameOrder } from "./fnv.js";

/** One cluster's share in a division: its weight, seats it starts with, and the most it may hold. */
export interface Share {
  readonly name: string;
  /** A non-negative integer; a cluster with weight 0 receives nothing beyond its seed. */
  readonly weight: number;
  /** Seats already held before dealing (counted in the total). Default 0. */
  readonly seed?: number;
  /** The most seats it may end with. Default unlimited. */
  readonly cap?: number;
}

/** A division: seats per cluster (zeros included) and how many of the total found no seat. */
export interface Division {
  readonly seats: ReadonlyMap<string, number>;
  readonly unplaced: number;
}

interface Seat {
  readonly name: string;
  readonly weight: number;
  readonly cap: number;
  count: number;
}

/**
 * Deals `total` seats one at a time by the Webster (Sainte-Laguë) method: the next seat goes to the
 * share with the highest weight / (2·seats + 1). Ties go to the share with fewer seats, then by name in
 * the given order (Karmada's rule). Shares at their cap drop out and the rest is dealt on; what no
 * share can take is `unplaced`. Priorities are compared by cross-multiplication, so there is no
 * floating-point rounding, and a heap keeps large totals fast.
 */
export function dealByWebster(total: number, shares: readonly Share[], order: NameOrder): Division {
  const seats: Seat[] = shares.map((s) => ({
    name: s.name,
    weight: s.weight,
    cap: s.cap ?? Number.POSITIVE_INFINITY,
    count: s.seed ?? 0,
  }));
  const seeded = seats.reduce((sum, seat) => sum + seat.count, 0);
  const before = (a: Seat, b: Seat) => comesFirst(a, b, order);
  const heap = new SeatHeap(
    seats.filter((s) => s.weight > 0 && s.count < s.cap),
    before,
  );
  let remaining = total - seeded;
  while (remaining > 0) {
    const next = heap.pop();
    if (!next) break;
    next.count++;
    remaining--;
    if (next.count < next.cap) heap.push(next);
  }
  return { seats: new Map(seats.map((s) => [s.name, s.count])), unplaced: Math.max(0, remaining) };
}

// True when a should receive the next seat before b.
function comesFirst(a: Seat, b: Seat, order: NameOrder): boolean {
  const left = a.weight * (2 * b.count + 1);
  const right = b.weight * (2 * a.count + 1);
  if (left !== right) return left > right;
  if (a.count !== b.count) return a.count < b.count;
  return order === "ascending" ? a.name < b.name : a.name > b.name;
}

/** A binary heap ordered by `before`, built in linear time (Floyd) since most divisions deal few seats. */
class SeatHeap {
  private readonly items: Seat[];

  constructor(
    initial: readonly Seat[],
    private readonly before: (a: Seat, b: Seat) => boolean,
  ) {
    this.items = [...initial];
    for (let i = (this.items.length >> 1) - 1; i >= 0; i--) {
      const item = this.items[i];
      if (item) this.siftDown(i, item);
    }
  }

  push(item: Seat): void {
    const items = this.items;
    items.push(item);
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const p = items[parent];
      if (!p || !this.before(item, p)) break;
      items[i] = p;
      i = parent;
    }
    items[i] = item;
  }

  pop(): Seat | undefined {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (top === undefined || last === undefined || items.length === 0) return top;
    this.siftDown(0, last);
    return top;
  }

  // Moves `item` down from slot i until both children come after it.
  private siftDown(start: number, item: Seat): void {
    const items = this.items;
    let i = start;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let child = left;
      const l = items[left];
      if (!l) break;
      const r = items[right];
      if (r && this.before(r, l)) child = right;
      const next = items[child];
      if (!next || !this.before(next, item)) break;
      items[i] = next;
      i = child;
    }
    items[i] = item;
  }
}
