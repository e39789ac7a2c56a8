import { describe, expect, it } from "vitest";
import { fnv32a, tieBreakOrder } from "../../src/schedule/division/fnv.js";
import { dealByWebster } from "../../src/schedule/division/webster.js";

const weights = (...w: number[]) => w.map((weight, i) => ({ name: String.fromCharCode(97 + i), weight }));
const seats = (division: { seats: ReadonlyMap<string, number> }) => [...division.seats.values()];

describe("FNV-1a (32-bit) against the published test vectors", () => {
  it.each([
    ["", 0x811c9dc5],
    ["a", 0xe40c292c],
    ["b", 0xe70c2de5],
    ["foobar", 0xbf9cf968],
  ])("fnv32a(%j) = %i", (text, hash) => {
    expect(fnv32a(text)).toBe(hash);
  });

  it("orders ties ascending for an empty or even-hash key and descending for an odd one", () => {
    expect(tieBreakOrder("")).toBe("ascending");
    expect(tieBreakOrder("a")).toBe("ascending");
    expect(tieBreakOrder("b")).toBe("descending");
  });
});

describe("Webster division (Karmada ≥ 1.16 dispenser vectors)", () => {
  it.each([
    ["12 at 3:2:1", 12, [3, 2, 1], [6, 4, 2]],
    ["14 at 3:2:1", 14, [3, 2, 1], [7, 5, 2]],
    ["7 at 2:1:1:1", 7, [2, 1, 1, 1], [3, 2, 1, 1]],
    ["8 at 2:1:1:1", 8, [2, 1, 1, 1], [3, 2, 2, 1]],
    ["5 at 170:110:60", 5, [170, 110, 60], [2, 2, 1]],
    ["2 at 2:1 (HA first)", 2, [2, 1], [1, 1]],
    // The second seat ties at 3/3 = 1/1: it goes to the share with fewer seats, ahead of name order.
    ["2 at 3:1 (a tie goes to fewer seats first)", 2, [3, 1], [1, 1]],
    ["10 at 1:1:1, empty uid", 10, [1, 1, 1], [4, 3, 3]],
    ["0 replicas", 0, [1, 2], [0, 0]],
  ])("%s", (_name, total, w, expected) => {
    expect(seats(dealByWebster(total, weights(...w), "ascending"))).toEqual(expected);
  });

  it("breaks the 1:1 tie of 5 replicas by the uid's hash parity (A3/B2 even, A2/B3 odd)", () => {
    expect(seats(dealByWebster(5, weights(1, 1), tieBreakOrder("a")))).toEqual([3, 2]);
    expect(seats(dealByWebster(5, weights(1, 1), tieBreakOrder("b")))).toEqual([2, 3]);
  });

  it("redeals what a capped share cannot take and reports what nobody can", () => {
    const capped = dealByWebster(
      10,
      [
        { name: "a", weight: 3, cap: 2 },
        { name: "b", weight: 1 },
      ],
      "ascending",
    );
    expect(seats(capped)).toEqual([2, 8]);
    const full = dealByWebster(
      10,
      [
        { name: "a", weight: 1, cap: 3 },
        { name: "b", weight: 1, cap: 4 },
      ],
      "ascending",
    );
    expect(seats(full)).toEqual([3, 4]);
    expect(full.unplaced).toBe(3);
  });

  it("starts from seeds, which count toward the total", () => {
    const seeded = dealByWebster(
      6,
      [
        { name: "a", weight: 1, seed: 4 },
        { name: "b", weight: 1 },
      ],
      "ascending",
    );
    expect(seats(seeded)).toEqual([4, 2]);
  });

  it("gives nothing to a zero weight", () => {
    expect(seats(dealByWebster(4, weights(0, 1), "ascending"))).toEqual([0, 4]);
  });

  it("handles large totals quickly and exactly", () => {
    const big = dealByWebster(1_000_000, weights(1, 2, 3, 4), "ascending");
    expect(seats(big)).toEqual([100000, 200000, 300000, 400000]);
  });
});

describe("Webster at its ties and bounds", () => {
  it.each([
    ["ascending: the first name", "ascending", { a: 1, b: 0 }],
    ["descending: the last name", "descending", { a: 0, b: 1 }],
  ] as const)("an exact tie goes by name, %s", (_name, order, expected) => {
    for (const shares of [weights(1, 1), [...weights(1, 1)].reverse()])
      expect(Object.fromEntries(dealByWebster(1, shares, order).seats)).toEqual(expected);
  });

  it("an equal priority goes to the share holding fewer seats, before any name", () => {
    // a: 3/(2·1+1) = 1 and b: 1/(2·0+1) = 1; b holds none yet.
    const division = dealByWebster(
      2,
      [
        { name: "a", weight: 3, seed: 1 },
        { name: "b", weight: 1 },
      ],
      "ascending",
    );
    expect(Object.fromEntries(division.seats)).toEqual({ a: 1, b: 1 });
  });

  it("never deals a seat to a share of weight zero, even when the others are full", () => {
    const division = dealByWebster(
      5,
      [
        { name: "a", weight: 1, cap: 2 },
        { name: "b", weight: 0, cap: 10 },
      ],
      "ascending",
    );
    expect(Object.fromEntries(division.seats)).toEqual({ a: 2, b: 0 });
    expect(division.unplaced).toBe(3);
  });
});
