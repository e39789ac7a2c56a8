import type { NameOrder } from "./fnv.js";
import { sumOf } from "./slots.js";
import { dealByWebster } from "./webster.js";

/**
 * KubeAdmiral's avoidDisruption: move from the current counts toward the desired ones only in the
 * direction of the change. When the total grows, only clusters below their desired count grow (the
 * increment dealt by Webster with weights desired − current); when it shrinks, only clusters above it
 * shrink (weights current − desired); an equal total keeps the current counts. `current` must already
 * be clamped to each cluster's limits; `desired` holds every cluster.
 */
export function avoidDisruption(
  desired: ReadonlyMap<string, number>,
  current: ReadonlyMap<string, number>,
  order: NameOrder,
): Map<string, number> {
  const names = [...desired.keys()];
  const now = (name: string) => current.get(name) ?? 0;
  const change = sumOf(desired.values()) - sumOf(names.map(now));
  // +1 while the total grows, -1 while it shrinks; 0 when it stays, and then nothing moves.
  const direction = Math.sign(change);
  const gap = (name: string) => Math.max(0, direction * ((desired.get(name) ?? 0) - now(name)));
  const moved = dealByWebster(
    Math.abs(change),
    names.map((name) => ({ name, weight: gap(name), cap: gap(name) })),
    order,
  );
  return new Map(names.map((name) => [name, now(name) + direction * (moved.seats.get(name) ?? 0)]));
}
