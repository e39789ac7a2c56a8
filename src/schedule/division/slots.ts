/** One selected cluster as the division sees it. */
export interface Slot {
  readonly name: string;
  /** Static weight (ignored by dynamic division). */
  readonly weight: number;
  /** Replicas it holds now (0 for a cluster new to this workload). */
  readonly current: number;
  /** Replicas it can still fit beyond `current`; Infinity when unknown. */
  readonly free: number;
  /** clusterLimits minimum. */
  readonly min: number;
  /** clusterLimits maximum, lowered to `current` for a cluster that may not grow; Infinity when none. */
  readonly max: number;
}

/** The most replicas a slot may end with: its limit and its capacity. */
export function capOf(slot: Slot): number {
  return Math.min(slot.max, slot.current + slot.free);
}

/** The least replicas a slot should end with: its minimum, if its cap allows. */
export function floorOf(slot: Slot): number {
  return Math.min(slot.min, capOf(slot));
}

/** Sum of a map's values. */
export function sumOf(values: Iterable<number>): number {
  let sum = 0;
  for (const value of values) sum += value;
  return sum;
}
