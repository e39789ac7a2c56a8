import { describe, expect, it } from "vitest";
import { gatherObservedState } from "../../src/reconcile/gather-observations.js";

/** One builder of the render's observed state, for the controller and for plans. */
describe("gatherObservedState", () => {
  it("takes what was observed and leaves the rest empty", () => {
    expect(gatherObservedState({ now: 5 })).toEqual({ now: 5, clusters: new Map(), workloads: new Map() });
  });

  it("turns probes into conditions, and keeps members' replicas and the autoscalers' totals", () => {
    const taint = { key: "gitfleet.io/unreachable", effect: "NoExecute" as const, addedAt: 10 };
    const workloads = new Map([
      ["apps/Deployment/shop/web", new Map([["east", { desired: 3, ready: 2, unschedulable: 1 }]])],
    ]);
    const scaling = {
      autoscaled: new Map([["apps/Deployment/shop/web", { replicas: 6, by: "shop/web" }]]),
      distributed: new Map(),
      held: new Map(),
    };
    const state = gatherObservedState({
      now: 20,
      probes: new Map([
        [
          "east",
          {
            health: { ready: false, reason: "Unreachable", since: 10, lastError: "timeout" },
            taints: [taint],
          },
        ],
        ["west", { health: { ready: true, since: 1 }, taints: [] }],
      ]),
      workloads,
      scaling,
    });
    expect(state).toEqual({
      now: 20,
      clusters: new Map([
        ["east", { ready: false, reason: "Unreachable", since: 10, taints: [taint] }],
        ["west", { ready: true, since: 1, taints: [] }],
      ]),
      workloads,
      autoscaled: scaling.autoscaled,
      distributed: scaling.distributed,
      held: scaling.held,
    });
  });
});
