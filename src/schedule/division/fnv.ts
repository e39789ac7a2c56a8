import { fnv32a } from "../../model/hash.js";

export { fnv32a };

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
