import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { largest, smallest } from "../../src/model/extremes.js";

describe("largest and smallest", () => {
  it("agree with Math.max and Math.min wherever those can be called", () => {
    fc.assert(
      fc.property(fc.array(fc.integer()), fc.integer(), (values, floor) => {
        expect(largest(values, floor)).toBe(Math.max(floor, ...values));
        expect(smallest(values)).toBe(values.length === 0 ? undefined : Math.min(...values));
      }),
    );
  });

  it("fold lists as long as a 50,000-app fleet's workloads, where spreading them overflows the stack", () => {
    const replicas = Array.from({ length: 300_000 }, (_, i) => (i * 7919) % 100_003);
    expect(() => Math.max(...replicas)).toThrow(RangeError);
    expect(largest(replicas, 1)).toBe(100_002);
    expect(smallest(replicas)).toBe(0);
  });
});
