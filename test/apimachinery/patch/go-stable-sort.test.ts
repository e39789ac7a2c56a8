import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { goStableSort } from "../../../src/apimachinery/patch/go-stable-sort.js";

describe("Go's stable sort", () => {
  it("sorts as any stable sort does when its comparison is consistent (insertion blocks and merges alike)", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 9 }), { maxLength: 130 }), (keys) => {
        const items = keys.map((key, position) => ({ key, position }));
        const expected = [...items].sort((a, b) => a.key - b.key);
        expect(goStableSort(items, (a, b) => a.key < b.key)).toEqual(expected);
      }),
    );
  });

  it("leaves its input as it was", () => {
    const items = [3, 1, 2];
    expect(goStableSort(items, (a, b) => a < b)).toEqual([1, 2, 3]);
    expect(items).toEqual([3, 1, 2]);
  });

  // The API server's comparison: "less" when either item is missing from the order. Answers of Go
  // 1.26's sort.SliceStable for these inputs, of 2 to 45 items (the kubectl edge cases of more than 20 items check the
  // merge steps against kubectl itself).
  const order = ["a", "b", "c", "d"];
  const apiServerLess = (x: string, y: string) => {
    const i = order.indexOf(x);
    const j = order.indexOf(y);
    return i < 0 || j < 0 || i < j;
  };
  it.each([
    [
      ["c", "x"],
      ["x", "c"],
    ],
    [
      ["x", "a", "b"],
      ["a", "b", "x"],
    ],
    [
      ["b", "a", "x"],
      ["x", "a", "b"],
    ],
    [
      ["a", "x", "b", "y"],
      ["y", "x", "a", "b"],
    ],
    [
      [
        "d",
        "b",
        "z",
        "x",
        "c",
        "a",
        "y",
        "d",
        "b",
        "z",
        "x",
        "c",
        "a",
        "y",
        "d",
        "b",
        "z",
        "x",
        "c",
        "a",
        "y",
        "d",
        "b",
        "z",
        "x",
      ],
      [
        "x",
        "z",
        "b",
        "x",
        "z",
        "y",
        "x",
        "z",
        "y",
        "a",
        "a",
        "a",
        "x",
        "z",
        "b",
        "b",
        "b",
        "c",
        "c",
        "c",
        "d",
        "d",
        "d",
        "d",
        "y",
      ],
    ],
    [
      [
        "x",
        "c",
        "b",
        "y",
        "a",
        "d",
        "x",
        "c",
        "b",
        "y",
        "a",
        "d",
        "x",
        "c",
        "b",
        "y",
        "a",
        "d",
        "x",
        "c",
        "b",
        "y",
        "a",
        "d",
        "x",
        "c",
        "b",
        "y",
        "a",
        "d",
        "x",
        "c",
        "b",
        "y",
        "a",
        "d",
        "x",
        "c",
        "b",
        "y",
        "a",
        "d",
        "x",
        "c",
        "b",
      ],
      [
        "x",
        "a",
        "y",
        "x",
        "y",
        "x",
        "y",
        "x",
        "a",
        "a",
        "a",
        "y",
        "b",
        "b",
        "x",
        "y",
        "x",
        "y",
        "x",
        "a",
        "a",
        "a",
        "y",
        "b",
        "b",
        "b",
        "b",
        "b",
        "b",
        "c",
        "c",
        "c",
        "c",
        "c",
        "c",
        "c",
        "c",
        "d",
        "d",
        "d",
        "d",
        "d",
        "d",
        "d",
        "x",
      ],
    ],
  ])("orders %j as Go does with the API server's comparison", (input, expected) => {
    expect(goStableSort(input, apiServerLess)).toEqual(expected);
  });
});
