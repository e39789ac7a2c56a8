import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { JsonMap } from "../../src/apimachinery/json.js";
import {
  inventoryConfigMaps,
  inventoryEntries,
  inventoryFromConfigMaps,
  inventoryPartDigests,
  MAX_INVENTORY_PARTS,
} from "../../src/sync/inventory.js";
import { inventoryOf } from "../helpers/inventory-entries.js";

/**
 * A member's inventory split over ConfigMaps when its entries do not fit one part (a ConfigMap holds
 * at most 1 MiB): every part within the bound, read back whole, and a part that is not the one the
 * main ConfigMap names (a write cut short, an edit) makes the whole unreadable, never a partial list.
 */
const RECORD = { cluster: "east", sourceCommit: "b".repeat(40), pruneBase: "a".repeat(40) };

const dataOf = (parts: readonly string[]): JsonMap[] => parts.map((entries) => ({ entries }));
// How long one entry is as a part holds it (the identity is derived, not stored).
const entryBytes = JSON.stringify(inventoryEntries(inventoryOf(1))[0]).length;
const longestBytes = Math.max(...inventoryEntries(inventoryOf(60)).map((e) => JSON.stringify(e).length));

describe("inventory parts", () => {
  // Ten entries of equal length: their array is 2 + 10 × entryBytes + 9 commas.
  const whole = 2 + 10 * entryBytes + 9;
  it.each([
    ["one byte more than the entries", whole + 1, 0],
    ["exactly the entries", whole, 0],
    ["one byte short of the entries", whole - 1, 2],
    ["room for one entry", 2 + entryBytes, 10],
  ])("%s: %i bytes a part → %i parts", (_, partBytes, count) => {
    const inventory = inventoryOf(10);
    const { main, parts } = inventoryConfigMaps(RECORD, inventory, partBytes);
    expect(parts).toHaveLength(count);
    for (const part of parts) expect(part.length).toBeLessThanOrEqual(partBytes);
    expect(inventoryFromConfigMaps(main, dataOf(parts))).toEqual({
      cluster: "east",
      pruneBase: "a".repeat(40),
      inventory,
    });
  });

  it("reads back any inventory split at any part size", () => {
    fc.assert(
      fc.property(fc.nat({ max: 60 }), fc.integer({ min: 2 + longestBytes, max: 4000 }), (n, partBytes) => {
        const inventory = inventoryOf(n);
        const { main, parts } = inventoryConfigMaps(RECORD, inventory, partBytes);
        for (const part of parts) expect(part.length).toBeLessThanOrEqual(partBytes);
        expect(inventoryFromConfigMaps(main, dataOf(parts))?.inventory).toEqual(inventory);
      }),
      { numRuns: 200 },
    );
  });

  it("is unreadable when a part is missing, extra, swapped, stale or edited", () => {
    const { main, parts } = inventoryConfigMaps(RECORD, inventoryOf(30), 1000);
    const older = inventoryConfigMaps(RECORD, inventoryOf(29), 1000).parts;
    expect(parts.length).toBeGreaterThan(2);
    const cases: (JsonMap | undefined)[][] = [
      dataOf(parts.slice(1)),
      [...dataOf(parts), { entries: "[]" }],
      dataOf([parts[1] as string, parts[0] as string, ...parts.slice(2)]),
      dataOf([...parts.slice(0, -1), older[older.length - 1] as string]),
      [undefined, ...dataOf(parts.slice(1))],
      dataOf([(parts[0] as string).replace("uid-0", "uid-9"), ...parts.slice(1)]),
      [{ entries: 42 }, ...dataOf(parts.slice(1))],
    ];
    for (const given of cases) expect(inventoryFromConfigMaps(main, given)).toBeUndefined();
  });

  it.each([
    ["not JSON", "[", undefined],
    ["not a list", '{"a":1}', undefined],
    ["an empty list", "[]", undefined],
    ["a digest that is not sha256 hex", '["abc"]', undefined],
    ["too many parts", JSON.stringify(Array(MAX_INVENTORY_PARTS + 1).fill("a".repeat(64))), undefined],
    ["the most parts", JSON.stringify(Array(MAX_INVENTORY_PARTS).fill("a".repeat(64))), MAX_INVENTORY_PARTS],
    ["a number", 3, undefined],
  ])("names its parts only by a list of sha256 digests: %s", (_, parts, count) => {
    expect(inventoryPartDigests({ parts } as JsonMap)?.length).toBe(count);
  });
});
