import { describe, expect, it } from "vitest";
import { loadFleet } from "../../src/load/load-fleet.js";
import type { ClusterCapacity } from "../../src/model/node-capacity.js";
import type { FleetModel } from "../../src/model/types.js";
import { formatDistribution } from "../../src/plan/format-plan.js";
import { planChange } from "../../src/plan/plan.js";
import { renderFleet } from "../../src/render/render-fleet.js";
import type { RenderResult } from "../../src/render/render-result.js";
import { minimalFleetWith, webDeployment } from "../helpers/minimal-fleet.js";
import { nodePool } from "../helpers/node-pools.js";
import { NORTH_CLUSTER } from "../helpers/service-fleet.js";

// Overflow tiers through the render and the plan: north (on-premises) first, the clouds for what
// does not fit there, by what the members' recorded nodes fit.

const WEB = "apps/Deployment/shop/web";
const T0 = Date.parse("2026-12-01T12:00:00Z");

const TIERED = `apiVersion: gitfleet.io/v1alpha1
kind: Placement
metadata:
  name: web
spec:
  apps: [web]
  replicaScheduling:
    type: Divided
    weightPreference:
      dynamicWeight: AvailableReplicas
  overflow:
    tiers:
      - name: onprem
        clusterAffinity:
          fieldSelector:
            matchExpressions:
              - {key: provider, operator: In, values: [onprem]}
      - name: cloud
        clusterAffinity:
          clusterNames: [east, west]
`;

function fleet(replicas: number): FleetModel {
  const loaded = loadFleet(
    minimalFleetWith({
      "clusters/north.yaml": NORTH_CLUSTER,
      "apps/web/deployment.yaml": webDeployment(replicas, "1"),
      "placements/web.yaml": TIERED,
    }),
  );
  if (!loaded.model) throw new Error(loaded.problems.map((p) => `${p.file}: ${p.message}`).join("\n"));
  return loaded.model;
}

// north fits 8 one-CPU replicas (one node, 8 free cores); the clouds 16 each.
const capacity = (freeCpu: number): ClusterCapacity => ({
  nodes: 1,
  readyNodes: 1,
  allocatable: { cpu: 16, memory: 64 * 2 ** 30, pods: 110 },
  requested: { cpu: 0, memory: 0, pods: 0 },
  pools: [nodePool(1, freeCpu)],
});

function render(replicas: number, previous?: RenderResult, northFree = 8): RenderResult {
  return renderFleet(fleet(replicas), {
    ...(previous ? { previous } : {}),
    observations: {
      now: T0,
      clusters: new Map(),
      workloads: new Map(),
      capacity: new Map([
        ["north", capacity(northFree)],
        ["east", capacity(16)],
        ["west", capacity(16)],
      ]),
    },
  });
}

const web = (r: RenderResult) => r.decisions.find((d) => d.identity === WEB);

describe("overflow tiers in the render and the plan", () => {
  it("fills the first tier up to what its nodes fit, overflows the rest, and the plan says so", () => {
    const small = render(6);
    expect(web(small)?.decision.clusters).toEqual({ north: 6 });
    // north runs 6 of its 8: 2 cores free.
    const big = render(14, small, 2);
    expect(web(big)?.decision.clusters).toEqual({ east: 3, north: 8, west: 3 });
    expect(web(big)?.decision.diagnosis.tiers).toEqual([
      { name: "onprem", clusters: ["north"], replicas: 8 },
      { name: "cloud", clusters: ["east", "west"], replicas: 6 },
    ]);
    const [change] = planChange(small, big).distributions;
    expect(change && formatDistribution(change)).toBe(
      "Deployment shop/web (app web): east 0 → 3, north 6 → 8, west 0 → 3; tiers onprem 6 → 8, cloud 0 → 6",
    );
  });

  it("gives back from the cloud first on a scale-down, and keeps the cloud's replicas when north regains room", () => {
    const big = render(14);
    // north runs its 8: nothing free.
    const down = render(10, big, 0);
    expect(web(down)?.decision.diagnosis.tiers?.map((t) => t.replicas)).toEqual([8, 2]);
    // north gets a bigger node, 8 cores free beside its 8 replicas: nothing running moves back, by default.
    const roomy = render(10, down, 8);
    expect(web(roomy)?.decision.clusters).toEqual(web(down)?.decision.clusters);
  });
});
