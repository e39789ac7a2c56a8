// Math.max(...values) passes every value as an argument, and V8 refuses a call with more than about
// 120,000 of them (RangeError: Maximum call stack size exceeded). Lists that grow with the fleet —
// every workload's replicas, every deadline — are folded here instead.

/** The largest of the values, and at least `floor`. */
export function largest(values: Iterable<number>, floor = Number.NEGATIVE_INFINITY): number {
  let result = floor;
  for (const value of values) if (value > result) result = value;
  return result;
}

/** The smallest of the values; undefined when there are none. */
export function smallest(values: Iterable<number>): number | undefined {
  let result: number | undefined;
  for (const value of values) if (result === undefined || value < result) result = value;
  return result;
}
