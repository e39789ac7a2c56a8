import { describe, expect, it } from "vitest";
import { avoidDisruption } from "../../src/schedule/division/avoid-disruption.js";
import { divideByCapacity } from "../../src/schedule/division/dynamic-weight.js";
import type { Slot } from "../../src/schedule/division/slots.js";
import { divideByStaticWeight } from "../../src/schedule/division/static-weight.js";

const slot = (name: string, fields: Partial<Slot> = {}): Slot => ({
  name,
  weight: 1,
  current: 0,
  free: Number.POSITIVE_INFINITY,
  min: 0,
  max: Number.POSITIVE_INFINITY,
  ...fields,
});
const asObject = (division: { seats: ReadonlyMap<string, number> }) => Object.fromEntries(division.seats);

describe("dynamic weight division (Karmada Steady mode vectors)", () => {
  const steady = { aggregated: false, fresh: false, order: "ascending" as const };
  it.each([
    [
      "scale-down 2/4/6 → 6 keeps proportions",
      6,
      [
        slot("m1", { current: 2, free: 10 }),
        slot("m2", { current: 4, free: 10 }),
        slot("m3", { current: 6, free: 10 }),
      ],
      { m1: 1, m2: 2, m3: 3 },
    ],
    [
      "scale-up 2/4/6 → 24 divides the increment by free room",
      24,
      [
        slot("m1", { current: 2, free: 10 }),
        slot("m2", { current: 4, free: 10 }),
        slot("m3", { current: 6, free: 10 }),
      ],
      { m1: 6, m2: 8, m3: 10 },
    ],
    [
      "first placement is a scale-up from 0",
      9,
      [slot("a", { free: 6 }), slot("b", { free: 3 })],
      { a: 6, b: 3 },
    ],
    [
      "equal total keeps the previous counts, even with a new cluster",
      10,
      [slot("a", { current: 7, free: 100 }), slot("b", { current: 3, free: 100 }), slot("c", { free: 100 })],
      { a: 7, b: 3, c: 0 },
    ],
    [
      "scale-down never grows a cluster or adds a new one",
      4,
      [slot("a", { current: 5 }), slot("b", { current: 3 }), slot("c", { free: 50 })],
      { a: 2, b: 2, c: 0 },
    ],
  ])("%s", (_name, total, slots, expected) => {
    expect(asObject(divideByCapacity(total, slots, steady))).toEqual(expected);
  });

  it("places what fits and reports the rest when free room is short (12 extra over 1+1+1 free)", () => {
    const division = divideByCapacity(
      12,
      [slot("a", { free: 1 }), slot("b", { free: 1 }), slot("c", { free: 1 })],
      steady,
    );
    expect(asObject(division)).toEqual({ a: 1, b: 1, c: 1 });
    expect(division.unplaced).toBe(9);
  });

  it("meets a minimum larger than the increment by taking from the others (minimums are hard)", () => {
    const slots = [slot("a", { min: 2, max: 2 }), slot("b", { current: 15 }), slot("c", { current: 17 })];
    const division = divideByCapacity(33, slots, steady);
    expect(asObject(division)).toEqual({ a: 2, b: 15, c: 16 });
  });

  it("recomputes from scratch on a rebalance, by free + current", () => {
    const slots = [slot("a", { current: 10, free: 0 }), slot("b", { current: 0, free: 10 })];
    expect(asObject(divideByCapacity(10, slots, { ...steady, fresh: true }))).toEqual({ a: 5, b: 5 });
  });
});

describe("Aggregated division (Karmada vectors)", () => {
  const aggregated = { aggregated: true, fresh: false, order: "ascending" as const };
  it.each([
    [
      "m1:4 m2:8 → 24 with free 4/6/8",
      24,
      [slot("m1", { current: 4, free: 4 }), slot("m2", { current: 8, free: 6 }), slot("m3", { free: 8 })],
      { m1: 7, m2: 12, m3: 5 },
    ],
    [
      "m1:4 m2:8 → 24 with free 6/6/20 leaves m3 untouched",
      24,
      [slot("m1", { current: 4, free: 6 }), slot("m2", { current: 8, free: 6 }), slot("m3", { free: 20 })],
      { m1: 10, m2: 14, m3: 0 },
    ],
    [
      "scale-down 4/8 → 6 drops whole clusters",
      6,
      [slot("m1", { current: 4 }), slot("m2", { current: 8 })],
      { m1: 0, m2: 6 },
    ],
    [
      "first placement packs into the roomiest cluster",
      5,
      [slot("a", { free: 3 }), slot("b", { free: 8 }), slot("c", { free: 8 })],
      { a: 0, b: 5, c: 0 },
    ],
    [
      // Holders first, ranked by free room alone: b's 8 free beat a's 5, though a holds more.
      "scale-up among holders goes to the one with the most free room",
      16,
      [slot("a", { current: 10, free: 5 }), slot("b", { current: 1, free: 8 })],
      { a: 10, b: 6 },
    ],
  ])("%s", (_name, total, slots, expected) => {
    expect(asObject(divideByCapacity(total, slots, aggregated))).toEqual(expected);
  });

  it.each([
    [
      // Found by the Karmada oracle (test/e2e/karmada-scheduler.e2e.ts): equal free room, so the
      // holder with more free plus current room goes first, as Karmada's candidate order has it.
      "scale-up: ties on free room go to more free plus current room",
      57,
      [slot("m1", { current: 17, free: 26 }), slot("m2", { current: 18, free: 26 }), slot("m3", { free: 4 })],
      false,
      { m1: 17, m2: 40, m3: 0 },
    ],
    [
      "rebalance: ties on room go to the clusters that hold replicas",
      2,
      [
        slot("m1", { free: 30 }),
        slot("m2", { free: 30 }),
        slot("m3", { current: 2, free: 26 }),
        slot("m4", { current: 1, free: 29 }),
      ],
      true,
      { m1: 0, m2: 0, m3: 0, m4: 2 },
    ],
  ])("%s", (_name, total, slots, fresh, expected) => {
    expect(asObject(divideByCapacity(total, slots, { ...aggregated, fresh }))).toEqual(expected);
  });

  it("a rebalance ranks every cluster by free plus current room, holders or not", () => {
    const slots = [slot("a", { free: 50 }), slot("b", { current: 5, free: 5 })];
    expect(asObject(divideByCapacity(20, slots, { ...aggregated, fresh: true }))).toEqual({ a: 20, b: 0 });
  });
});

describe("static weights with per-cluster limits", () => {
  it.each([
    [
      "minimums first, then by weight",
      10,
      [slot("a", { weight: 9 }), slot("b", { weight: 1, min: 3 })],
      { a: 6, b: 4 },
    ],
    [
      // KubeAdmiral's rule: the minimum is given first and does not count against a's weighted share.
      "a minimum on top of an equal share",
      50,
      [slot("a", { weight: 1, min: 10 }), slot("b", { weight: 1 })],
      { a: 30, b: 20 },
    ],
    [
      "no minimums: Karmada's division",
      50,
      [slot("a", { weight: 1 }), slot("b", { weight: 1 })],
      { a: 25, b: 25 },
    ],
    [
      "a cluster at its max drops out and the rest is redealt",
      10,
      [slot("a", { weight: 3, max: 2 }), slot("b", { weight: 1 })],
      { a: 2, b: 8 },
    ],
    ["capacity caps like a max", 6, [slot("a", { free: 1 }), slot("b", { free: 9 })], { a: 1, b: 5 }],
    [
      "minimums above the total are dealt by weight",
      3,
      [slot("a", { weight: 2, min: 3 }), slot("b", { weight: 1, min: 3 })],
      { a: 2, b: 1 },
    ],
    ["stateless: current counts do not matter", 6, [slot("a", { current: 6 }), slot("b")], { a: 3, b: 3 }],
  ])("%s", (_name, total, slots, expected) => {
    expect(asObject(divideByStaticWeight(total, slots, "ascending"))).toEqual(expected);
  });
});

describe("avoidDisruption (KubeAdmiral)", () => {
  const current = new Map([
    ["a", 15],
    ["b", 15],
    ["c", 0],
  ]);
  it.each([
    [
      "a new equal-weight cluster does not move replicas",
      new Map([
        ["a", 10],
        ["b", 10],
        ["c", 10],
      ]),
      { a: 15, b: 15, c: 0 },
    ],
    [
      "scaled to 36 only the cluster below its target grows",
      new Map([
        ["a", 12],
        ["b", 12],
        ["c", 12],
      ]),
      { a: 15, b: 15, c: 6 },
    ],
    [
      "scaled to 15 only clusters above target shrink (the tie's extra removal goes by name)",
      new Map([
        ["a", 5],
        ["b", 5],
        ["c", 5],
      ]),
      { a: 7, b: 8, c: 0 },
    ],
  ])("%s", (_name, desired, expected) => {
    expect(Object.fromEntries(avoidDisruption(desired, current, "ascending"))).toEqual(expected);
  });
});

describe("divisions at their bounds", () => {
  const steady = { aggregated: false, fresh: false, order: "ascending" as const };
  const aggregated = { aggregated: true, fresh: false, order: "ascending" as const };

  it("places again what a cluster holds above its new maximum", () => {
    const slots = [slot("a", { current: 8, max: 5 }), slot("b", { free: 10 })];
    expect(asObject(divideByCapacity(8, slots, steady))).toEqual({ a: 5, b: 3 });
  });

  it("raises a cluster to its minimum though the total stays the same", () => {
    const slots = [slot("a", { current: 1, min: 3, free: 10 }), slot("b", { current: 5, free: 10 })];
    const division = divideByCapacity(6, slots, steady);
    expect(asObject(division)).toEqual({ a: 3, b: 3 });
  });

  it("deals minimums above the total by weight, at least one each, within the minimums", () => {
    const slots = [slot("a", { min: 3, free: 10 }), slot("b", { min: 3, free: 10 })];
    const division = divideByCapacity(4, slots, steady);
    expect(asObject(division)).toEqual({ a: 2, b: 2 });
    expect(division.unplaced).toBe(0);
  });

  it.each([
    ["listed a, b", ["a", "b"]],
    ["listed b, a", ["b", "a"]],
  ])("an Aggregated scale-down keeps the first name among equal holders (%s)", (_name, names) => {
    const slots = names.map((name) => slot(name, { current: 5, free: 10 }));
    expect(asObject(divideByCapacity(4, slots, aggregated))).toEqual({ a: 4, b: 0 });
  });

  it.each([
    ["listed a, b", ["a", "b"]],
    ["listed b, a", ["b", "a"]],
  ])("an Aggregated rebalance fills the first name among equal rooms (%s)", (_name, names) => {
    const slots = names.map((name) => slot(name, { free: 10 }));
    expect(asObject(divideByCapacity(5, slots, { ...aggregated, fresh: true }))).toEqual({ a: 5, b: 0 });
  });

  it("a static minimum is counted against the cluster's maximum", () => {
    const slots = [slot("a", { weight: 10, min: 2, max: 3 }), slot("b", { weight: 1 })];
    expect(asObject(divideByStaticWeight(10, slots, "ascending"))).toEqual({ a: 3, b: 7 });
  });
});
