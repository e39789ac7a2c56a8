import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  afterProbe,
  type ClusterHealth,
  clusterHealthSettings,
  DEFAULT_CLUSTER_HEALTH,
  healthTaints,
  initialHealth,
  type Probe,
  recordedHealth,
} from "../../src/failover/cluster-health.js";

const settings = {
  ...DEFAULT_CLUSTER_HEALTH,
  failureThreshold: 3,
  successThreshold: 2,
  noExecuteAfterMs: 60_000,
};
const probe = (at: number, outcome: Probe["outcome"]): Probe => ({
  at,
  outcome,
  ...(outcome === "ready" ? {} : { error: outcome }),
});
const run = (outcomes: Probe["outcome"][], start: ClusterHealth = initialHealth(0)) =>
  outcomes.reduce(
    (health, outcome, i) => afterProbe(health, probe((i + 1) * 10_000, outcome), settings),
    start,
  );

describe("cluster health from probes", () => {
  it.each([
    ["two failures are not enough", ["unreachable", "unreachable"], true, undefined],
    [
      "three failures in a row make it NotReady",
      ["unreachable", "unreachable", "unreachable"],
      false,
      "Unreachable",
    ],
    [
      "a success in between resets the count",
      ["unready", "unready", "ready", "unready", "unready"],
      true,
      undefined,
    ],
    ["answering unready is NotReady, not Unreachable", ["unready", "unready", "unready"], false, "NotReady"],
    ["one success does not bring it back", ["unready", "unready", "unready", "ready"], false, "NotReady"],
    ["two successes do", ["unready", "unready", "unready", "ready", "ready"], true, undefined],
  ] as const)("%s", (_name, outcomes, ready, reason) => {
    const health = run([...outcomes]);
    expect(health.ready).toBe(ready);
    if (reason) expect(health.reason).toBe(reason);
  });

  it("records when the condition changed, not when the last probe came", () => {
    const health = run(["unreachable", "unreachable", "unreachable", "unreachable"]);
    expect(health.since).toBe(30_000);
    expect(health.lastError).toBe("unreachable");
  });

  it("never flips on a member that alternates faster than the thresholds (property)", () => {
    fc.assert(
      fc.property(fc.array(fc.boolean(), { maxLength: 200 }), (flaps) => {
        // Runs shorter than the thresholds: at most 2 failures, then 1 success, over and over.
        const outcomes: Probe["outcome"][] = flaps.flatMap((twice) =>
          twice ? ["unreachable", "unreachable", "ready"] : ["unreachable", "ready"],
        );
        let health = initialHealth(0);
        for (const [i, outcome] of outcomes.entries()) {
          health = afterProbe(health, probe(i, outcome), settings);
          expect(health.ready).toBe(true);
        }
      }),
    );
  });

  it("changes condition only after the thresholds are met (property)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom<Probe["outcome"]>("ready", "unready", "unreachable"), { maxLength: 100 }),
        (outcomes) => {
          let health = initialHealth(0);
          for (const [i, outcome] of outcomes.entries()) {
            const before = health.ready;
            health = afterProbe(health, probe(i, outcome), settings);
            if (before !== health.ready) expect(streakEndingAt(outcomes, i, before)).toBe(true);
          }
        },
      ),
    );
  });
});

describe("health taints", () => {
  it("adds NoSchedule when NotReady and NoExecute after the grace period, keyed by why", () => {
    const down = run(["unreachable", "unreachable", "unreachable"]);
    expect(healthTaints(initialHealth(0), 0, settings)).toEqual([]);
    // At exactly the grace period's end the NoExecute taint is there; a millisecond before, not.
    expect(healthTaints(down, down.since + 60_000, settings)).toEqual([
      { key: "gitfleet.io/unreachable", effect: "NoSchedule", addedAt: down.since },
      { key: "gitfleet.io/unreachable", effect: "NoExecute", addedAt: down.since + 60_000 },
    ]);
    expect(healthTaints(down, down.since + 59_999, settings)).toEqual([
      { key: "gitfleet.io/unreachable", effect: "NoSchedule", addedAt: down.since },
    ]);
    // The NoExecute taint's time is when the grace period ended: tolerationSeconds count from it.
    expect(healthTaints(down, down.since + 90_000, settings)).toEqual([
      { key: "gitfleet.io/unreachable", effect: "NoSchedule", addedAt: down.since },
      { key: "gitfleet.io/unreachable", effect: "NoExecute", addedAt: down.since + 60_000 },
    ]);
    const unready = run(["unready", "unready", "unready"]);
    expect(healthTaints(unready, unready.since, settings)).toEqual([
      { key: "gitfleet.io/not-ready", effect: "NoSchedule", addedAt: unready.since },
    ]);
  });

  it.each([
    ["no condition", undefined, undefined],
    ["a scalar", "Ready", undefined],
    ["null", null, undefined],
    ["no since", { ready: true }, undefined],
    ["a since that is no time", { ready: false, since: "yesterday" }, undefined],
    ["ready not a boolean", { ready: "true", since: "2026-12-01T00:00:00Z" }, undefined],
    [
      "Ready",
      { ready: true, since: "2026-12-01T00:00:00Z" },
      { ready: true, since: Date.parse("2026-12-01T00:00:00Z"), failures: 0, successes: 2 },
    ],
    [
      "NotReady, with its last error",
      { ready: false, reason: "NotReady", since: "2026-12-01T00:00:00Z", lastError: "503" },
      {
        ready: false,
        since: Date.parse("2026-12-01T00:00:00Z"),
        reason: "NotReady",
        failures: 3,
        successes: 0,
        lastError: "503",
      },
    ],
    [
      "any other reason reads as Unreachable; a last error that is no string is left out",
      { ready: false, reason: "Gone", since: "2026-12-01T00:00:00Z", lastError: 7 },
      {
        ready: false,
        since: Date.parse("2026-12-01T00:00:00Z"),
        reason: "Unreachable",
        failures: 3,
        successes: 0,
      },
    ],
  ])("reads a recorded condition back: %s", (_name, condition, health) => {
    expect(recordedHealth(condition, settings)).toEqual(health);
  });

  it("reads fleet.yaml's clusterHealth with defaults", () => {
    expect(clusterHealthSettings(undefined)).toEqual(DEFAULT_CLUSTER_HEALTH);
    expect(
      clusterHealthSettings({
        clusterHealth: { probeInterval: "2s", failureThreshold: 5, noExecuteAfter: "30s" },
      }),
    ).toEqual({
      ...DEFAULT_CLUSTER_HEALTH,
      probeIntervalMs: 2000,
      failureThreshold: 5,
      noExecuteAfterMs: 30_000,
    });
  });
});

// Whether the probes up to `index` end with the run of failures (or, when NotReady, successes) the thresholds ask for.
function streakEndingAt(outcomes: readonly Probe["outcome"][], index: number, wasReady: boolean): boolean {
  const needed = wasReady ? settings.failureThreshold : settings.successThreshold;
  const run = outcomes.slice(Math.max(0, index + 1 - needed), index + 1);
  return run.length === needed && run.every((outcome) => (outcome === "ready") !== wasReady);
}
