import { describe, expect, it } from "vitest";
import { loadFleet } from "../../src/load/load-fleet.js";
import { noObservations } from "../../src/model/observed-state.js";
import type { FleetModel } from "../../src/model/types.js";
import { renderFleet } from "../../src/render/render-fleet.js";
import type { RenderResult } from "../../src/render/render-result.js";
import { minimalFleetWith, webDeployment } from "../helpers/minimal-fleet.js";

// A total a FederatedHPA decided replaces the source's replicas, and the Placement divides it as it
// divides any total — weights, and avoidDisruption (no cluster shrinks on a scale-up).

const WEB = "apps/Deployment/shop/web";
const T0 = Date.parse("2026-11-29T12:00:00Z");

function fleet(scheduling: string): FleetModel {
  const loaded = loadFleet(
    minimalFleetWith({
      "clusters/north.yaml":
        "apiVersion: gitfleet.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: north\nspec:\n  provider: onprem\n  region: eu-north\n",
      "apps/web/deployment.yaml": webDeployment(6),
      "placements/web.yaml": `apiVersion: gitfleet.io/v1alpha1\nkind: Placement\nmetadata:\n  name: web\nspec:\n  apps: [web]\n${scheduling}`,
    }),
  );
  if (!loaded.model) throw new Error(loaded.problems.map((p) => p.message).join("\n"));
  return loaded.model;
}

const WEIGHTED = `  replicaScheduling:
    type: Divided
    divisionPreference: Weighted
    weightPreference:
      staticWeightList:
        - targetCluster: {clusterNames: [east]}
          weight: 2
        - targetCluster: {clusterNames: [west, north]}
          weight: 1
`;

const autoscaledTo = (replicas: number) => ({
  ...noObservations(T0),
  autoscaled: new Map([[WEB, { replicas, by: "web" }]]),
});

function replicasOf(render: RenderResult): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const o of render.objects)
    if (o.identity === WEB) counts[o.cluster] = (o.object.spec as { replicas: number }).replicas;
  return counts;
}

describe("an autoscaled total in the render", () => {
  it("replaces the source's replicas and is divided by the Placement's weights", () => {
    const model = fleet(WEIGHTED);
    const source = renderFleet(model, { observations: noObservations(T0) });
    // 6 over 2:1:1 (west and north tie for the odd replica; the workload's tie-break decides).
    const first = replicasOf(source);
    expect(first.east).toBe(3);
    expect([first.west, first.north].sort()).toEqual([1, 2]);
    const scaled = renderFleet(model, { previous: source, observations: autoscaledTo(12) });
    expect(replicasOf(scaled)).toEqual({ east: 6, west: 3, north: 3 });
    expect(scaled.decisions.find((d) => d.identity === WEB)).toMatchObject({
      replicas: 12,
      autoscaledBy: "web",
    });
    // Without an autoscaler's total, the source's count again.
    expect(
      renderFleet(model, { previous: scaled, observations: noObservations(T0) }).decisions.find(
        (d) => d.identity === WEB,
      )?.replicas,
    ).toBe(6);
  });

  it("with avoidDisruption, a scale-up adds replicas without taking any from a cluster", () => {
    const model = fleet(`${WEIGHTED}    avoidDisruption: true\n`);
    const before = renderFleet(model, { observations: noObservations(T0) });
    const after = renderFleet(model, { previous: before, observations: autoscaledTo(9) });
    const was = replicasOf(before);
    const now = replicasOf(after);
    expect(Object.values(now).reduce((t, n) => t + n, 0)).toBe(9);
    for (const [cluster, count] of Object.entries(was))
      expect(now[cluster] ?? 0).toBeGreaterThanOrEqual(count);
  });
});
