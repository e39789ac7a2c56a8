import type { NameOrder } from "./fnv.js";
import { capOf, floorOf, type Slot, sumOf } from "./slots.js";
import type { Division } from "./webster.js";
import { dealByWebster } from "./webster.js";

/**
 * Divides `total` by static weights with Webster, statelessly (Karmada's static weight strategy):
 * minimums first, then the rest by weight, each cluster within its limit and capacity (KubeAdmiral's
 * rule: 50 replicas at 1:1 with a minimum of 10 on a give a=30, b=20 — the minimum is not counted
 * against a's weighted share). When the minimums alone exceed the total, the total is dealt by
 * weight among them.
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
  const rest = dealByWebster(
    total - sumOf(floors),
    slots.map((s, i) => ({ name: s.name, weight: s.weight, cap: capOf(s) - (floors[i] ?? 0) })),
    order,
  );
  return {
    seats: new Map(slots.map((s, i) => [s.name, (floors[i] ?? 0) + (rest.seats.get(s.name) ?? 0)])),
    unplaced: rest.unplaced,
  };
}
