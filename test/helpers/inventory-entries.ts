import type { Inventory, InventoryEntry } from "../../src/sync/inventory.js";

/** The i-th entry of a test inventory: ConfigMap shop/cm-0000i of app web. */
export function inventoryEntry(i: number): InventoryEntry {
  const name = `cm-${String(i).padStart(5, "0")}`;
  return {
    identity: `/ConfigMap/shop/${name}`,
    apiVersion: "v1",
    kind: "ConfigMap",
    namespace: "shop",
    name,
    app: "web",
    uid: `uid-${i}`,
    digest: "0123456789abcdef",
  };
}

/** An inventory of the first n such entries. */
export function inventoryOf(n: number): Inventory {
  return new Map(Array.from({ length: n }, (_, i) => [inventoryEntry(i).identity, inventoryEntry(i)]));
}
