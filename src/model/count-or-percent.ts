/**
 * A bound written as a count or a percentage of a whole ("25%"), as Kubernetes' maxUnavailable is:
 * the count itself, or the percentage of `total` rounded down — never below `floor`.
 */
export function countOf(value: number | string, total: number, floor = 1): number {
  const count = typeof value === "number" ? value : Math.floor((Number.parseInt(value, 10) / 100) * total);
  return Math.max(floor, count);
}
