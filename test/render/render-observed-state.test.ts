import { describe, expect, it } from "vitest";
import { loadFleet } from "../../src/load/load-fleet.js";
import type { ClusterCapacity, NodePool } from "../../src/model/node-capacity.js";
import type { ObservedState } from "../../src/model/observed-state.js";
import type { FleetModel } from "../../src/model/types.js";
import { renderFleet } from "../../src/render/render-fleet.js";
import type { RenderResult } from "../../src/render/render-result.js";
import { minimalFleetWith, webDeployment } from "../helpers/minimal-fleet.js";
import { nodePool } from "../helpers/node-pools.js";

// What the members really have, as the render takes it: recorded node pools feed the node-level
// estimator, and discovery feeds the APIEnablement filter.

const WEB = "apps/Deployment/shop/web";
const T0 = Date.parse("2026-12-01T12:00:00Z");

function fleet(placementSpec: string, replicas: number, extra: Record<string, string> = {}): FleetModel {
  const loaded = loadFleet(
    minimalFleetWith({
      "apps/web/deployment.yaml": webDeployment(replicas, "1"),
      "placements/web.yaml": `apiVersion: gitfleet.io/v1alpha1\nkind: Placement\nmetadata:\n  name: web\nspec:\n  apps: [web]\n${placementSpec}`,
      ...extra,
    }),
  );
  if (!loaded.model) throw new Error(loaded.problems.map((p) => `${p.file}: ${p.message}`).join("\n"));
  return loaded.model;
}

const pool = nodePool;

const capacity = (...pools: NodePool[]): ClusterCapacity => ({
  nodes: pools.reduce((n, p) => n + p.count, 0),
  readyNodes: 0,
  allocatable: { cpu: 0, memory: 0, pods: 0 },
  requested: { cpu: 0, memory: 0, pods: 0 },
  pools,
});

function observed(
  capacities: Record<string, ClusterCapacity>,
  served?: ObservedState["served"],
): ObservedState {
  return {
    now: T0,
    clusters: new Map(),
    workloads: new Map(),
    capacity: new Map(Object.entries(capacities)),
    ...(served ? { served } : {}),
  };
}

function web(render: RenderResult): Record<string, number> {
  const decision = render.decisions.find((d) => d.identity === WEB);
  if (!decision) throw new Error("no decision for web");
  return { ...decision.decision.clusters };
}

const DYNAMIC =
  "  replicaScheduling:\n    type: Divided\n    weightPreference:\n      dynamicWeight: AvailableReplicas\n";
const AGGREGATED = "  replicaScheduling:\n    type: Divided\n    divisionPreference: Aggregated\n";

describe("recorded capacity in the render", () => {
  it("divides by free replicas as the node-level estimator counts them", () => {
    // east: 2 nodes × 12 free cores = 24 one-core replicas; west: 3 nodes × 4 = 12.
    const render = renderFleet(fleet(DYNAMIC, 12), {
      observations: observed({ east: capacity(pool(2, 12)), west: capacity(pool(3, 4)) }),
    });
    expect(web(render)).toEqual({ east: 8, west: 4 });
  });

  it("divides again once the capacity unknown at the first division is known, then holds", () => {
    const model = fleet(DYNAMIC, 12);
    const blind = renderFleet(model, { observations: observed({}) });
    expect(web(blind)).toEqual({ east: 6, west: 6 });
    expect(blind.decisions[0]?.capacityUnknown).toEqual(["east", "west"]);
    const seen = renderFleet(model, {
      previous: blind,
      observations: observed({ east: capacity(pool(2, 12)), west: capacity(pool(3, 4)) }),
    });
    // From scratch by room — free plus what each already runs: east 24 + 6, west 12 + 6.
    expect(web(seen)).toEqual({ east: 7, west: 5 });
    expect(seen.decisions[0]?.capacityUnknown).toBeUndefined();
    const noisy = renderFleet(model, {
      previous: seen,
      observations: observed({ east: capacity(pool(2, 1)), west: capacity(pool(3, 16)) }),
    });
    expect(web(noisy)).toEqual({ east: 7, west: 5 });
  });

  it("counts only nodes the pods tolerate and select", () => {
    const tainted = pool(4, 16, { taints: [{ key: "gpu", value: "true", effect: "NoSchedule" }] });
    const render = renderFleet(fleet(DYNAMIC, 10), {
      observations: observed({ east: capacity(tainted, pool(1, 2)), west: capacity(pool(1, 8)) }),
    });
    expect(web(render)).toEqual({ east: 2, west: 8 });
  });

  it("Aggregated packs into the cluster that fits, not the first one", () => {
    const render = renderFleet(fleet(AGGREGATED, 10), {
      observations: observed({ east: capacity(pool(1, 3)), west: capacity(pool(2, 8)) }),
    });
    expect(web(render)).toEqual({ west: 10 });
  });

  it("a full cluster gets none of a scale-up; capacity noise moves nothing", () => {
    const before = renderFleet(fleet(DYNAMIC, 8), {
      observations: observed({ east: capacity(pool(1, 8)), west: capacity(pool(1, 8)) }),
    });
    expect(web(before)).toEqual({ east: 4, west: 4 });
    const noisy = renderFleet(fleet(DYNAMIC, 8), {
      previous: before,
      observations: observed({ east: capacity(pool(1, 1)), west: capacity(pool(1, 15)) }),
    });
    expect(web(noisy)).toEqual({ east: 4, west: 4 });
    const scaled = renderFleet(fleet(DYNAMIC, 14), {
      previous: noisy,
      observations: observed({ east: capacity(pool(1, 0)), west: capacity(pool(1, 12)) }),
    });
    expect(web(scaled)).toEqual({ east: 4, west: 10 });
  });
});

describe("served APIs in the render", () => {
  const cloneSet = `apiVersion: apps.kruise.io/v1beta1
kind: CloneSet
metadata:
  name: cache
  namespace: shop
spec:
  replicas: 2
`;
  const crd = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: clonesets.apps.kruise.io
spec:
  group: apps.kruise.io
  names: { kind: CloneSet, plural: clonesets }
  scope: Namespaced
  versions:
    - name: v1beta1
      served: true
      storage: true
      schema: { openAPIV3Schema: { type: object, x-kubernetes-preserve-unknown-fields: true } }
`;
  const served = (cloneSets: boolean) =>
    new Map([
      [
        "east",
        {
          v1: ["ConfigMap", "Namespace", "Service"],
          "apps/v1": ["Deployment"],
          ...(cloneSets ? { "apps.kruise.io/v1beta1": ["CloneSet"] } : {}),
          "apiextensions.k8s.io/v1": ["CustomResourceDefinition"],
        },
      ],
      [
        "west",
        {
          v1: ["ConfigMap", "Namespace", "Service"],
          "apps/v1": ["Deployment"],
          "apiextensions.k8s.io/v1": ["CustomResourceDefinition"],
        },
      ],
    ]);
  const cacheIn = (render: RenderResult) =>
    render.objects.filter((o) => o.identity === "apps.kruise.io/CloneSet/shop/cache").map((o) => o.cluster);

  it("keeps a kind off a member that does not serve it", () => {
    const model = fleet(DYNAMIC, 2, { "apps/web/cache.yaml": cloneSet });
    const render = renderFleet(model, { observations: { ...observed({}, served(true)) } });
    expect(cacheIn(render)).toEqual(["east"]);
  });

  it("counts a kind as served where the fleet renders its CRD", () => {
    const model = fleet(DYNAMIC, 2, { "apps/web/cache.yaml": cloneSet, "apps/web/crd.yaml": crd });
    const render = renderFleet(model, { observations: observed({}, served(false)) });
    expect(cacheIn(render).sort()).toEqual(["east", "west"]);
  });

  it("serves everything where discovery was never read", () => {
    const model = fleet(DYNAMIC, 2, { "apps/web/cache.yaml": cloneSet });
    expect(cacheIn(renderFleet(model, { observations: observed({}) })).sort()).toEqual(["east", "west"]);
  });
});
