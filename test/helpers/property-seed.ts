import { randomInt } from "node:crypto";
import { readFileSync } from "node:fs";
import fc from "fast-check";

/**
 * Every property test runs on a recorded seed, so a green run today says the same tomorrow (a vitest
 * setup file: it runs before each test file). GITFLEET_PROPERTY_SEED picks another: a number replays
 * that seed, `new` draws a fresh one per file (scripts/property-seeds.sh explores with it, and a
 * failure prints its seed and path to record in test/property-seeds.json once fixed).
 */
export interface RecordedSeeds {
  /** The seed `npm test` runs every property on. */
  readonly seed: number;
  /**
   * Seeds that once found a defect. Each is replayed on its test file after the fix, unless `case`
   * names the test that holds its counterexample: `npm test` runs that on every run, and a seed's
   * draws stop reproducing a counterexample as soon as the inputs they are drawn from change.
   */
  readonly found: readonly {
    readonly seed: number;
    readonly file: string;
    readonly fixed: string;
    readonly case?: string;
  }[];
}

export const recordedSeeds = JSON.parse(
  readFileSync(new URL("../property-seeds.json", import.meta.url), "utf8"),
) as RecordedSeeds;

/** The seed a run uses: the recorded one unless GITFLEET_PROPERTY_SEED names one or asks for `new`. */
export function propertySeed(requested: string | undefined, draw: () => number): number {
  if (requested === undefined || requested === "") return recordedSeeds.seed;
  if (requested === "new") return draw();
  const seed = Number(requested);
  if (!Number.isSafeInteger(seed) || seed < -(2 ** 31) || seed >= 2 ** 31)
    throw new Error(`GITFLEET_PROPERTY_SEED=${requested}: a 32-bit integer seed, or "new"`);
  return seed;
}

fc.configureGlobal({
  seed: propertySeed(process.env.GITFLEET_PROPERTY_SEED, () => randomInt(-(2 ** 31), 2 ** 31)),
});
