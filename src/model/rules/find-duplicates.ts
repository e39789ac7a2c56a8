/** Each item whose key an earlier item already had, paired with that earlier item (input order kept). */
export function findDuplicates<T>(items: Iterable<T>, keyOf: (item: T) => string): { item: T; earlier: T }[] {
  const first = new Map<string, T>();
  const duplicates: { item: T; earlier: T }[] = [];
  for (const item of items) {
    const key = keyOf(item);
    const earlier = first.get(key);
    if (earlier === undefined) first.set(key, item);
    else duplicates.push({ item, earlier });
  }
  return duplicates;
}
