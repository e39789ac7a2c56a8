import { describe, expect, it } from "vitest";
import { autoscaleStep, scaleMessage } from "../../src/autoscale/autoscale-step.js";
import type { PodSample } from "../../src/autoscale/hpa-algorithm.js";
import { loadFleet } from "../../src/load/load-fleet.js";
import { noObservations } from "../../src/model/observed-state.js";
import type { FleetModel } from "../../src/model/types.js";
import { renderFleet } from "../../src/render/render-fleet.js";
import { minimalFleetWith, webDeployment, webFederatedHpa } from "../helpers/minimal-fleet.js";

// A round of the centralized FederatedHPAs: the global total from every member's pods, at most one
// change per interval, and the line the status commit gets.

const WEB = "apps/Deployment/shop/web";
const T0 = Date.parse("2026-11-29T12:00:00Z");
const MINUTE = 60_000;

function fleet(scheduling: string, mode?: "centralized" | "distributed"): FleetModel {
  const loaded = loadFleet(
    minimalFleetWith({
      "apps/web/deployment.yaml": webDeployment(6),
      "placements/web.yaml": `apiVersion: gitfleet.io/v1alpha1\nkind: Placement\nmetadata:\n  name: web\nspec:\n  apps: [web]\n${scheduling}`,
      "autoscaling/web.yaml": webFederatedHpa({ min: 2, max: 30, cpu: 65, ...(mode ? { mode } : {}) }),
    }),
  );
  if (!loaded.model)
    throw new Error(loaded.problems.map((p) => `${p.file}:${p.line}: ${p.message}`).join("\n"));
  return loaded.model;
}

const DIVIDED = "  replicaScheduling:\n    type: Divided\n";
const pods = (n: number, percent: number): PodSample[] =>
  Array.from({ length: n }, (_, i) => ({
    cluster: i % 2 ? "east" : "west",
    pod: `web-${i}`,
    ready: true,
    usage: percent / 100,
    request: 1,
  }));

describe("a round of the centralized FederatedHPAs", () => {
  const model = fleet(DIVIDED);
  const decisions = renderFleet(model, { observations: noObservations(T0) }).decisions;
  const step = (samples: PodSample[] | undefined, states = new Map(), now = T0) =>
    autoscaleStep({
      model,
      decisions,
      samples: samples ? new Map([[WEB, { samples: { cpu: samples } }]]) : new Map(),
      states,
      now,
      intervalMs: MINUTE,
    });

  it("scales the global total up under load, and says why", () => {
    const up = step(pods(6, 130));
    expect(up.autoscaled.get(WEB)).toEqual({ replicas: 12, by: "web", reason: "cpu 130% > 65%" });
    expect(up.changes).toEqual([
      { autoscaler: "web", workload: "Deployment shop/web", from: 6, to: 12, reason: "cpu 130% > 65%" },
    ]);
    // Within the interval: the total stays, however loud the pods are.
    const soon = step(pods(12, 200), new Map(up.states), T0 + 30_000);
    expect(soon.autoscaled.get(WEB)?.replicas).toBe(12);
    expect(soon.changes).toEqual([]);
    // After it: the next step (limited to +100% per 15 s by default).
    const later = step(pods(12, 200), new Map(up.states), T0 + 2 * MINUTE);
    expect(later.changes[0]).toMatchObject({ from: 12, to: 24 });
  });

  it("keeps the total when no member could be sampled", () => {
    const up = step(pods(6, 130));
    const blind = step(undefined, new Map(up.states), T0 + 5 * MINUTE);
    expect(blind.autoscaled.get(WEB)?.replicas).toBe(12);
    expect(blind.changes).toEqual([]);
  });

  it("leaves a Duplicated workload to distributed mode when no mode is set", () => {
    const duplicated = fleet("  replicaScheduling:\n    type: Duplicated\n");
    const outcome = autoscaleStep({
      model: duplicated,
      decisions: renderFleet(duplicated, { observations: noObservations(T0) }).decisions,
      samples: new Map([[WEB, { samples: { cpu: pods(6, 130) } }]]),
      states: new Map(),
      now: T0,
      intervalMs: MINUTE,
    });
    expect(outcome.autoscaled.size).toBe(0);
  });

  it("names the change with each cluster's count before and after the division", () => {
    const change = {
      autoscaler: "web",
      workload: "Deployment shop/web",
      from: 12,
      to: 18,
      reason: "cpu 91% > 70%",
    };
    expect(scaleMessage(change, { a: 6, b: 6 }, { a: 9, b: 9 })).toBe(
      "web: hpa 12 → 18 (cpu 91% > 70%) a=6→9 b=6→9",
    );
  });
});
