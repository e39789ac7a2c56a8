import { describe, expect, it } from "vitest";
import type { Candidate } from "../../src/schedule/framework.js";
import { AvailableCapacity } from "../../src/schedule/plugins/available-capacity.js";
import { ClusterLocality } from "../../src/schedule/plugins/cluster-locality.js";
import { cluster, contextOf, DIVIDED, problem } from "../helpers/scheduling.js";

const candidate = (name: string, current: number, free: number | undefined): Candidate => ({
  cluster: cluster(name),
  current,
  free,
  frozenReason: undefined,
});
const context = contextOf(problem(DIVIDED, []));

describe("score plugins (scores are 0–100; they cannot fail or filter)", () => {
  it.each([
    [
      "ClusterLocality: 100 only where replicas already run",
      ClusterLocality,
      [candidate("a", 3, 0), candidate("b", 0, 50)],
      [100, 0],
    ],
    [
      "AvailableCapacity: relative to the roomiest, rounded down",
      AvailableCapacity,
      [candidate("a", 0, 50), candidate("b", 0, 33), candidate("c", 9, 0)],
      [100, 66, 0],
    ],
    [
      "AvailableCapacity: unknown room counts as the most",
      AvailableCapacity,
      [candidate("a", 0, undefined), candidate("b", 0, 10)],
      [100, 100],
    ],
    [
      "AvailableCapacity: nobody has room",
      AvailableCapacity,
      [candidate("a", 0, 0), candidate("b", 0, 0)],
      [0, 0],
    ],
  ] as const)("%s", (_name, plugin, candidates, expected) => {
    expect(plugin.score(context, candidates)).toEqual(expected);
  });
});
