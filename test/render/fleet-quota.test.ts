import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { loadFleet } from "../../src/load/load-fleet.js";
import type { FleetModel } from "../../src/model/types.js";
import { ALL } from "../../src/reconcile/affected-apps.js";
import { EMPTY_STATE, reconcileStep } from "../../src/reconcile/reconcile-step.js";
import { renderFleet } from "../../src/render/render-fleet.js";
import type { RenderResult } from "../../src/render/render-result.js";
import { quotaFile } from "../helpers/fleet-quota.js";
import { minimalFleetWith, webDeployment } from "../helpers/minimal-fleet.js";

// A FederatedResourceQuota in the render: a static assignment caps what the namespace's workloads
// hold in its cluster (shared between them, in the order they are placed), becomes a ResourceQuota
// there, and the overall limits bound an autoscaled total.

const WEB = "apps/Deployment/shop/web";
const API = "apps/Deployment/shop/api";

const apiDeployment = (replicas: number, cpu: string) =>
  webDeployment(replicas, cpu).replaceAll("web", "api");

function fleet(files: Record<string, string | null>): FleetModel {
  const loaded = loadFleet(minimalFleetWith(files));
  if (!loaded.model)
    throw new Error(loaded.problems.map((p) => `${p.file}:${p.line} ${p.message}`).join("\n"));
  return loaded.model;
}

const decision = (render: RenderResult, identity = WEB) =>
  render.decisions.find((d) => d.identity === identity)?.decision;

describe("a static assignment in the render", () => {
  // web: 4 one-CPU replicas divided equally over east and west; east is assigned `hard` CPUs.
  it.each([
    ["1999m", { east: 1, west: 3 }],
    ["2", { east: 2, west: 2 }],
    ["2001m", { east: 2, west: 2 }],
    ["0", { west: 4 }],
  ])("east assigned %s CPUs holds %o", (hard, clusters) => {
    const model = fleet({
      "apps/web/deployment.yaml": webDeployment(4, "1"),
      "quotas/shop.yaml": quotaFile('requests.cpu: "100"', { east: `requests.cpu: "${hard}"` }),
    });
    expect(decision(renderFleet(model))?.clusters).toEqual(clusters);
  });

  it("is unschedulable past every cluster's room, naming the quota", () => {
    const model = fleet({
      "apps/web/deployment.yaml": webDeployment(4, "1"),
      "quotas/shop.yaml": quotaFile('requests.cpu: "100"', {
        east: 'requests.cpu: "1"',
        west: 'requests.cpu: "2"',
      }),
    });
    const placed = decision(renderFleet(model));
    expect(placed?.clusters).toEqual({ east: 1, west: 2 });
    expect(placed?.unschedulable).toBe(1);
    expect(placed?.diagnosis.unschedulableReason).toContain(
      "the selected clusters fit 3 in all (FederatedResourceQuota shop/shop)",
    );
  });

  it("is shared by the namespace's workloads: what one holds the next cannot take", () => {
    const model = fleet({
      "apps/web/deployment.yaml": webDeployment(2, "1"),
      "apps/web/api.yaml": apiDeployment(4, "1"),
      "quotas/shop.yaml": quotaFile('requests.cpu: "100"', { east: 'requests.cpu: "3"' }),
    });
    const render = renderFleet(model);
    // Placed by identity order: api first (2 in east), then web, which finds 1 CPU left there.
    expect(decision(render, API)?.clusters).toEqual({ east: 2, west: 2 });
    expect(decision(render, WEB)?.clusters).toEqual({ east: 1, west: 1 });
    // Rendered again on top of itself, nothing moves: each workload's own usage is its room.
    const again = renderFleet(model, { previous: render });
    expect(decision(again, API)?.clusters).toEqual({ east: 2, west: 2 });
    expect(decision(again, WEB)?.clusters).toEqual({ east: 1, west: 1 });
  });

  it("caps a Duplicated workload's copy in that cluster", () => {
    const model = fleet({
      "apps/web/deployment.yaml": webDeployment(3, "1"),
      "placements/web.yaml":
        "apiVersion: gitfleet.io/v1alpha1\nkind: Placement\nmetadata:\n  name: web\nspec:\n  apps: [web]\n  replicaScheduling:\n    type: Duplicated\n",
      "quotas/shop.yaml": quotaFile('requests.cpu: "100"', { east: 'requests.cpu: "2"' }),
    });
    const placed = decision(renderFleet(model));
    expect(placed?.clusters).toEqual({ east: 2, west: 3 });
    expect(placed?.unschedulable).toBe(1);
    expect(placed?.diagnosis.unschedulableReason).toContain(
      "FederatedResourceQuota shop/shop leaves no room",
    );
  });

  it("renders a ResourceQuota where the namespace is, and only there", () => {
    const model = fleet({
      "apps/web/deployment.yaml": webDeployment(2, "1"),
      "placements/web.yaml":
        "apiVersion: gitfleet.io/v1alpha1\nkind: Placement\nmetadata:\n  name: web\nspec:\n  apps: [web]\n  clusterAffinity:\n    clusterNames: [west]\n",
      "quotas/shop.yaml": quotaFile('requests.cpu: "100", pods: 50', {
        east: 'requests.cpu: "2"',
        west: 'requests.cpu: "3", pods: 10',
      }),
    });
    const quotas = renderFleet(model).objects.filter((o) => o.object.kind === "ResourceQuota");
    expect(quotas.map((o) => [o.cluster, o.path])).toEqual([
      ["west", "rendered/west/shop/core.ResourceQuota.shop.yaml"],
    ]);
    expect(quotas[0]?.object.spec).toEqual({ hard: { "requests.cpu": "3", pods: "10" } });
    expect(quotas[0]?.app).toBe("gitfleet-quotas");
  });
});

describe("a quota's namespace shared by apps", () => {
  // web (app web) and api (app api) share shop's 3 CPUs in east; api is placed after web.
  const files = (api: number) => ({
    "apps/web/deployment.yaml": webDeployment(2, "1"),
    "apps/api/app.yaml":
      "apiVersion: gitfleet.io/v1alpha1\nkind: App\nmetadata:\n  name: api\nspec:\n  namespace: shop\n",
    "apps/api/deployment.yaml": apiDeployment(api, "1"),
    "placements/api.yaml":
      "apiVersion: gitfleet.io/v1alpha1\nkind: Placement\nmetadata:\n  name: api\nspec:\n  apps: [api]\n  replicaScheduling:\n    type: Divided\n",
    "quotas/shop.yaml": quotaFile('requests.cpu: "100"', { east: 'requests.cpu: "3"' }),
  });

  it("serves the apps in order, and a one-app change renders them all again as a full render would", () => {
    const first = reconcileStep(EMPTY_STATE, {
      sourceCommit: "a".repeat(40),
      tree: minimalFleetWith(files(2)),
      changedPaths: ALL,
    });
    // api first (apps by name): 1 of its 2 in east; web then finds 2 CPUs left there.
    expect(decision(first.state.render, API)?.clusters).toEqual({ east: 1, west: 1 });
    expect(decision(first.state.render, WEB)?.clusters).toEqual({ east: 1, west: 1 });
    const next = reconcileStep(first.state, {
      sourceCommit: "b".repeat(40),
      tree: minimalFleetWith(files(6)),
      changedPaths: ["apps/api/deployment.yaml"],
    });
    // api grows to 3 in east, which leaves web nothing there: web is rendered again too.
    expect(decision(next.state.render, API)?.clusters).toEqual({ east: 3, west: 3 });
    expect(decision(next.state.render, WEB)?.clusters).toEqual({ west: 2 });
    const full = renderFleet(fleet(files(6)), { previous: first.state.render });
    expect(next.state.render.decisions.map((d) => d.decision.clusters)).toEqual(
      full.decisions.map((d) => d.decision.clusters),
    );
  });
});

describe("the overall limits in the render", () => {
  it("keep an autoscaled total within them: the rest is unschedulable, and the reason names the quota", () => {
    const model = fleet({
      "apps/web/deployment.yaml": webDeployment(2, "1"),
      "quotas/shop.yaml": quotaFile('requests.cpu: "6"'),
    });
    const observations = (replicas: number) => ({
      now: 0,
      clusters: new Map(),
      workloads: new Map(),
      autoscaled: new Map([[WEB, { replicas, by: "FederatedHPA web" }]]),
    });
    for (const [replicas, placed, unschedulable] of [
      [5, 5, 0],
      [6, 6, 0],
      [7, 6, 1],
    ] as const) {
      const result = decision(renderFleet(model, { observations: observations(replicas) }));
      const total = Object.values(result?.clusters ?? {}).reduce((a, b) => a + b, 0);
      expect([total, result?.unschedulable]).toEqual([placed, unschedulable]);
      if (unschedulable > 0)
        expect(result?.diagnosis.unschedulableReason).toBe(
          "1 replicas over FederatedResourceQuota shop/shop's overall limits",
        );
    }
  });
});

describe("a quota's usage, property", () => {
  it("never exceeds a static assignment through any sequence of replica changes", () => {
    const step = fc.record({ web: fc.integer({ min: 0, max: 9 }), api: fc.integer({ min: 0, max: 9 }) });
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 8 }),
        fc.array(step, { minLength: 1, maxLength: 6 }),
        (hard, steps) => {
          let previous: RenderResult | undefined;
          for (const counts of steps) {
            const model = fleet({
              "apps/web/deployment.yaml": webDeployment(counts.web, "1"),
              "apps/web/api.yaml": apiDeployment(counts.api, "500m"),
              "quotas/shop.yaml": quotaFile('requests.cpu: "100"', { east: `requests.cpu: "${hard}"` }),
            });
            const render = renderFleet(model, previous ? { previous } : {});
            const used =
              (decision(render, WEB)?.clusters.east ?? 0) * 1000 +
              (decision(render, API)?.clusters.east ?? 0) * 500;
            expect(used).toBeLessThanOrEqual(hard * 1000);
            for (const [identity, total] of [
              [WEB, counts.web],
              [API, counts.api],
            ] as const) {
              const placed = decision(render, identity);
              const sum = Object.values(placed?.clusters ?? {}).reduce((a, b) => a + b, 0);
              expect(sum + (placed?.unschedulable ?? 0)).toBe(total);
            }
            previous = render;
          }
        },
      ),
      { numRuns: 60 },
    );
  });
});
