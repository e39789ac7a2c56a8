import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { propertySeed, recordedSeeds } from "../helpers/property-seed.js";

// Property tests run on recorded seeds (test/helpers/property-seed.ts, a vitest setup file): the
// seed of a run is the recorded one unless GITFLEET_PROPERTY_SEED asks for another.
const ROOT = join(import.meta.dirname, "../..");
const draw = () => 77;

describe("property seeds", () => {
  it.each([
    [undefined, recordedSeeds.seed],
    ["", recordedSeeds.seed],
    ["new", 77],
    ["1571509676", 1571509676],
    ["-2147483648", -2147483648],
    ["2147483647", 2147483647],
  ])("GITFLEET_PROPERTY_SEED=%j runs on %d", (requested, seed) => {
    expect(propertySeed(requested, draw)).toBe(seed);
  });

  it.each(["2147483648", "-2147483649", "1.5", "abc", "0x"])(
    "refuses GITFLEET_PROPERTY_SEED=%s",
    (requested) => {
      expect(() => propertySeed(requested, draw)).toThrow(
        `GITFLEET_PROPERTY_SEED=${requested}: a 32-bit integer seed`,
      );
    },
  );

  it("gives fast-check the run's seed before any test file runs", () => {
    const requested = process.env.GITFLEET_PROPERTY_SEED;
    if (requested === "new") expect(Number.isSafeInteger(fc.readConfigureGlobal().seed)).toBe(true);
    else expect(fc.readConfigureGlobal().seed).toBe(propertySeed(requested, draw));
  });

  it("records only seeds of test files that hold properties", () => {
    expect(Number.isSafeInteger(recordedSeeds.seed)).toBe(true);
    for (const found of recordedSeeds.found) {
      expect(existsSync(join(ROOT, found.file)), found.file).toBe(true);
      expect(readFileSync(join(ROOT, found.file), "utf8")).toMatch(/fc\.(assert|check)\(/);
      expect(found.fixed.length).toBeGreaterThan(0);
      // A counterexample kept as a case names a test the file holds.
      if (found.case !== undefined)
        expect(readFileSync(join(ROOT, found.file), "utf8"), found.case).toContain(
          JSON.stringify(found.case),
        );
    }
  });
});
