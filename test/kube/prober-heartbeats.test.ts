import pino from "pino";
import { describe, expect, it } from "vitest";
import { ClusterProber } from "../../src/kube/prober.js";
import { loadFleet } from "../../src/load/load-fleet.js";
import type { Heartbeat } from "../../src/model/heartbeat.js";
import { MINIMAL_FLEET, minimalFleetWith } from "../helpers/minimal-fleet.js";

// A pull-mode member the controller cannot probe is judged by its agent's heartbeats: a beat seen
// within two intervals is a successful probe, silence a failed one, with the usual thresholds.

const T0 = Date.parse("2026-12-01T12:00:00Z");
const loaded = loadFleet(
  minimalFleetWith({
    "fleet.yaml":
      "apiVersion: gitfleet.io/v1alpha1\nkind: Fleet\nmetadata:\n  name: t\nspec:\n  clusterHealth:\n    failureThreshold: 2\n    successThreshold: 1\n",
    "clusters/west.yaml": `${MINIMAL_FLEET["clusters/west.yaml"]}  connection:\n    mode: pull\n`,
  }),
);
const model = loaded.model;

function prober(beats: () => Map<string, Heartbeat>, now: () => number, restoreSince?: number) {
  if (!model) throw new Error(loaded.problems.map((p) => p.message).join("\n"));
  return new ClusterProber({
    connect: async () => [],
    model: () => model,
    logger: pino({ level: "silent" }),
    heartbeats: async () => beats(),
    now,
    ...(restoreSince !== undefined
      ? {
          restore: (c) =>
            c === "west" ? { ready: true, since: restoreSince, failures: 0, successes: 0 } : undefined,
        }
      : {}),
  });
}

describe("pull-mode liveness from heartbeats", () => {
  it("turns a silent agent's cluster NotReady after the failure threshold, and Ready when it beats again", async () => {
    let now = T0;
    let tip = "a".repeat(40);
    const p = prober(
      () => new Map([["west", { tip, claimedAt: now }]]),
      () => now,
    );
    await p.probeOnce();
    expect(p.conditions().get("west")?.health.ready).toBe(true);
    // Silent for 61 s: the first failed probe, then the second makes it NotReady.
    now = T0 + 61_000;
    await p.probeOnce();
    expect(p.conditions().get("west")?.health.ready).toBe(true);
    now = T0 + 62_000;
    await p.probeOnce();
    const condition = p.conditions().get("west");
    expect(condition?.health.ready).toBe(false);
    expect(condition?.health.lastError).toMatch(/no heartbeat from the agent for 62s/);
    expect(condition?.taints.map((t) => `${t.key}:${t.effect}`)).toContain(
      "gitfleet.io/unreachable:NoSchedule",
    );
    // The agent beats again (a new tip): Ready.
    tip = "b".repeat(40);
    now = T0 + 70_000;
    await p.probeOnce();
    expect(p.conditions().get("west")?.health.ready).toBe(true);
  });

  it("after a restart, counts the silence from the beat's own time, not from the start", async () => {
    let now = T0 + 600_000;
    const beat = { tip: "c".repeat(40), claimedAt: T0 };
    const p = prober(
      () => new Map([["west", beat]]),
      () => now,
    );
    await p.probeOnce();
    now += 1000;
    await p.probeOnce();
    expect(p.conditions().get("west")?.health.ready).toBe(false);
  });

  it("leaves push-mode clusters and clusters without any heartbeat alone", async () => {
    const p = prober(
      () => new Map(),
      () => T0,
    );
    await p.probeOnce();
    expect(p.conditions().size).toBe(0);
  });
});
