import type { NameOrder } from "./fnv.js";
import { capOf, floorOf, type Slot, sumOf } from "./slots.js";
import type { Division } from "./webster.js";
import { dealByWebster } from "./webster.js";

/**
 * Divides `total` by static weights with Webster, statelessly (Karmada's static weight strategy):
 * minimums first, then the rest by weight, each cluster within its limit and capacity. When the
 * minimums alone exceed the total, the total is dealt by weight among them.
 */
export function divideByStaticWeight(total: number, slots: readonly Slot[], order: NameOrder): Division {
  const floors = slots.map(floorOf);
  if (sumOf(floors) >= total) {
    return dealByWebster(
      total,
      slots.map((s, i) => ({ name: s.name, weight: s.weight, cap: floors[i] ?? 0 })),
      order,
    );
  }
  return dealByWebster(
    total,
    slots.map((s, i) => ({ name: s.name, weight: s.weight, seed: floors[i] ?? 0, cap: capOf(s) })),
    order,
  );
}
