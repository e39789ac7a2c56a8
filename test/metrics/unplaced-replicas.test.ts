import { describe, expect, it } from "vitest";
import { FleetMetrics } from "../../src/metrics/fleet-metrics.js";

describe("gitfleet_app_unplaced_replicas", () => {
  it("is each workload's replicas the scheduler placed nowhere, 0 when all have a cluster", async () => {
    const metrics = new FleetMetrics(() => ({
      ready: true,
      leading: true,
      clusters: new Map(),
      synced: new Map(),
      decisions: [
        {
          app: "game",
          identity: "apps/Deployment/games/game",
          clusters: { a: 8, b: 24, c: 16 },
          unplaced: 12,
        },
        { app: "web", identity: "apps/Deployment/shop/web", clusters: { a: 2 }, unplaced: 0 },
        { app: "old", identity: "apps/Deployment/shop/old", clusters: {} },
      ],
    }));
    const lines = (await metrics.registry.metrics())
      .split("\n")
      .filter((line) => line.startsWith("gitfleet_app_unplaced_replicas{"));
    expect(lines.sort()).toEqual([
      'gitfleet_app_unplaced_replicas{app="game",workload="Deployment games/game"} 12',
      'gitfleet_app_unplaced_replicas{app="old",workload="Deployment shop/old"} 0',
      'gitfleet_app_unplaced_replicas{app="web",workload="Deployment shop/web"} 0',
    ]);
  });
});
