import { describe, expect, it } from "vitest";
import { isQuantity, parseMilliQuantity, parseQuantity } from "../../src/apimachinery/quantity.js";

describe("quantities", () => {
  it.each([
    ["500m", 0.5],
    ["2", 2],
    ["1.5", 1.5],
    ["1Ki", 1024],
    ["1Gi", 1073741824],
    ["512Mi", 536870912],
    ["1G", 1e9],
    ["1k", 1000],
    ["2e3", 2000],
    ["1E-3", 0.001],
    ["100n", 0.001],
    ["+3", 3],
    [".5", 0.5],
    ["0", 0],
  ])("%s is %d", (text, value) => {
    expect(isQuantity(text)).toBe(true);
    expect(parseQuantity(text)).toBeCloseTo(value, 9);
  });

  it.each(["1GB", "500mm", "", "m", "1.2.3", "abc", "1 Gi", "Gi", "1iB", "0x10", "--1"])(
    "%s is not a quantity",
    (text) => {
      expect(isQuantity(text)).toBe(false);
      expect(parseQuantity(text)).toBeUndefined();
    },
  );

  it("compares CPU in milli-units rounded up, as Kubernetes does", () => {
    expect(parseMilliQuantity("250m")).toBe(250);
    expect(parseMilliQuantity("1")).toBe(1000);
    expect(parseMilliQuantity("0.0001")).toBe(1);
  });
});
