import { describe, expect, it } from "vitest";
import {
  autoscalingRound,
  EMPTY_AUTOSCALING,
  type RoundInput,
} from "../../src/autoscale/autoscaling-round.js";
import type { PodSample } from "../../src/autoscale/hpa-algorithm.js";
import { noObservations } from "../../src/model/observed-state.js";
import type { FleetModel } from "../../src/model/types.js";
import { renderFleet } from "../../src/render/render-fleet.js";
import { dividedWebFleet, webFederatedHpa } from "../helpers/minimal-fleet.js";

// One round of everything that scales: CronScale rules (on a FederatedHPA's bounds or a workload's
// total, missed ones caught up once), centralized totals, and distributions recorded from members.

const WEB = "apps/Deployment/shop/web";
const at = (iso: string) => Date.parse(iso);

const CRON = (target: string, rules: string) => `apiVersion: gitfleet.io/v1alpha1
kind: CronScale
metadata:
  name: peak
  namespace: shop
spec:
  scaleTargetRef: ${target}
  rules:
${rules}`;

const model = dividedWebFleet;

function input(fleet: FleetModel, now: number, extra: Partial<RoundInput> = {}): RoundInput {
  return {
    model: fleet,
    decisions: renderFleet(fleet, { observations: noObservations(now) }).decisions,
    samples: new Map(),
    members: new Map(),
    previous: EMPTY_AUTOSCALING,
    now,
    intervalMs: 60_000,
    ...extra,
  };
}

describe("a round of the autoscalers", () => {
  it("sets a FederatedHPA's bounds from a cron rule and moves its total inside them at once", () => {
    const fleet = model({
      "autoscaling/web.yaml": webFederatedHpa({ min: 2, max: 10 }),
      "autoscaling/peak.yaml": CRON(
        "{apiVersion: gitfleet.io/v1alpha1, kind: FederatedHPA, name: web}",
        '    - {name: sale, schedule: "0 9 * * *", targetMinReplicas: 8, targetMaxReplicas: 20}\n',
      ),
    });
    const first = autoscalingRound(input(fleet, at("2026-11-30T08:00:00Z")));
    expect(first.autoscaled.get(WEB)?.replicas).toBe(4);
    expect(first.notes).toEqual(["cronscale peak: followed from now on"]);
    const fired = autoscalingRound(input(fleet, at("2026-11-30T09:00:10Z"), { previous: first.status }));
    expect(fired.autoscaled.get(WEB)).toEqual({
      replicas: 8,
      by: "web",
      reason: "cronscale peak/sale: min 8",
    });
    expect(fired.changes).toEqual([
      {
        autoscaler: "web",
        workload: "Deployment shop/web",
        from: 4,
        to: 8,
        reason: "cronscale peak/sale: min 8",
      },
    ]);
    expect(fired.notes).toEqual(["cronscale peak/sale: FederatedHPA web min 2 → 8, max 10 → 20"]);
    expect(fired.status.hpas.get("shop/web")?.bounds).toEqual({
      minReplicas: 8,
      maxReplicas: 20,
      by: "peak/sale",
    });
    expect(fired.wakeAt).toBe(at("2026-12-01T09:00:00Z"));
    // Under load the FederatedHPA now scales within 8..20, not 2..10.
    const loud: PodSample[] = Array.from({ length: 8 }, (_, i) => ({
      cluster: "east",
      pod: `p${i}`,
      ready: true,
      usage: 4,
      request: 1,
    }));
    const later = autoscalingRound(
      input(fleet, at("2026-11-30T09:05:00Z"), {
        previous: fired.status,
        samples: new Map([[WEB, { samples: { cpu: loud } }]]),
      }),
    );
    expect(later.autoscaled.get(WEB)?.replicas).toBe(16);
  });

  it("runs only the latest of the rules missed while down, records the others as superseded", () => {
    const rules =
      '    - {name: morning, schedule: "0 8 * * *", targetReplicas: 6}\n    - {name: evening, schedule: "0 20 * * *", targetReplicas: 2}\n';
    const fleet = model({
      "autoscaling/peak.yaml": CRON("{apiVersion: apps/v1, kind: Deployment, name: web}", rules),
    });
    const seen = autoscalingRound(input(fleet, at("2026-11-30T07:00:00Z")));
    // Down from 07:00 until the next day 09:00: morning (08:00), evening (20:00), morning (08:00) passed.
    const back = autoscalingRound(input(fleet, at("2026-12-01T09:00:00Z"), { previous: seen.status }));
    expect(back.autoscaled.get(WEB)).toMatchObject({ replicas: 6, by: "cronscale/peak" });
    const runs = back.status.crons.get("shop/peak")?.runs;
    expect(runs).toEqual([
      expect.objectContaining({
        rule: "evening",
        outcome: "superseded",
        firedAt: at("2026-11-30T20:00:00Z"),
      }),
      expect.objectContaining({ rule: "morning", outcome: "applied", firedAt: at("2026-12-01T08:00:00Z") }),
    ]);
    expect(back.notes[0]).toMatch(/^cronscale peak\/morning: total 4 → 6 \(missed while gitfleet was down/);
    // Nothing runs twice.
    const again = autoscalingRound(input(fleet, at("2026-12-01T09:01:00Z"), { previous: back.status }));
    expect(again.notes).toEqual([]);
    expect(again.autoscaled.get(WEB)?.replicas).toBe(6);
  });

  it("records a distributed FederatedHPA's member replicas once all report, at most once per interval", () => {
    const fleet = model({
      "autoscaling/web.yaml": webFederatedHpa({ min: 2, max: 10, mode: "distributed" }),
    });
    const members = (east: number, west: number) =>
      new Map([
        [
          WEB,
          new Map([
            ["east", { desired: east, ready: east, unschedulable: 0, scaledByHpa: true }],
            ["west", { desired: west, ready: west, unschedulable: 0, scaledByHpa: true }],
          ]),
        ],
      ]);
    const t0 = at("2026-11-30T08:00:00Z");
    const none = autoscalingRound(input(fleet, t0));
    expect(none.distributed.get(WEB)).toEqual({});
    const first = autoscalingRound(input(fleet, t0, { members: members(5, 2) }));
    expect(first.distributed.get(WEB)).toEqual({ distribution: { east: 5, west: 2 } });
    expect(first.notes).toEqual(["web: member HPAs run east=2→5 west=2; bounds split again"]);
    // Within the interval a new count waits; after it, it is recorded.
    const soon = autoscalingRound(
      input(fleet, t0 + 30_000, { members: members(6, 2), previous: first.status }),
    );
    expect(soon.distributed.get(WEB)).toEqual({ distribution: { east: 5, west: 2 } });
    const later = autoscalingRound(
      input(fleet, t0 + 61_000, { members: members(6, 2), previous: soon.status }),
    );
    expect(later.distributed.get(WEB)).toEqual({ distribution: { east: 6, west: 2 } });
    // No centralized total: the members own the count.
    expect(later.autoscaled.has(WEB)).toBe(false);
  });
});
