/** 32-bit FNV-1a hash of a string's UTF-8 bytes (Go's hash/fnv New32a, which Karmada uses). */
export function fnv32a(text: string): number {
  let hash = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(text)) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash >>> 0;
}

/** How equal-priority ties between clusters are broken: by name, ascending or descending. */
export type NameOrder = "ascending" | "descending";

/**
 * The per-workload tie-break of Karmada ≥ 1.16: names ascending when the key (the workload's uid) is
 * empty or its FNV-1a hash is even, descending when odd. Different workloads so lean different ways,
 * and the same workload always leans the same way.
 */
export function tieBreakOrder(key: string): NameOrder {
  return key === "" || fnv32a(key) % 2 === 0 ? "ascending" : "descending";
}
