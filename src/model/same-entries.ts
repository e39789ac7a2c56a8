/** Whether two string maps hold the same entries (a missing map holds none). Pure. */
export function sameEntries(
  a: ReadonlyMap<string, string> | undefined,
  b: ReadonlyMap<string, string> | undefined,
): boolean {
  const x = a ?? new Map<string, string>();
  const y = b ?? new Map<string, string>();
  return x.size === y.size && [...x].every(([key, value]) => y.get(key) === value);
}
