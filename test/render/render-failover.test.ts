import { describe, expect, it } from "vitest";
import { loadFleet } from "../../src/load/load-fleet.js";
import type { ObservedReplicas, ObservedState, TimedTaint } from "../../src/model/observed-state.js";
import type { FleetModel } from "../../src/model/types.js";
import { renderFleet } from "../../src/render/render-fleet.js";
import type { RenderResult } from "../../src/render/render-result.js";
import { minimalFleetWith, webDeployment } from "../helpers/minimal-fleet.js";

// Failover as the render sees it: a fleet, the previous render, and observations at a time.

const WEB = "apps/Deployment/shop/web";
const T0 = Date.parse("2026-11-29T12:00:00Z");

function fleet(placementSpec: string, extra: Record<string, string> = {}): FleetModel {
  const tree = minimalFleetWith({
    "clusters/north.yaml": `apiVersion: gitfleet.io/v1alpha1
kind: Cluster
metadata:
  name: north
spec:
  provider: onprem
  region: eu-north
`,
    "apps/web/deployment.yaml": webDeployment(6),
    "placements/web.yaml": `apiVersion: gitfleet.io/v1alpha1
kind: Placement
metadata:
  name: web
spec:
  apps: [web]
${placementSpec}`,
    ...extra,
  });
  const loaded = loadFleet(tree);
  if (!loaded.model) throw new Error(loaded.problems.map((p) => `${p.file}: ${p.message}`).join("\n"));
  return loaded.model;
}

const DIVIDED = `  replicaScheduling:
    type: Divided
`;

/** west Unreachable since `since`, its NoExecute taint added at `noExecuteAt` (when given). */
function westDown(now: number, since: number, noExecuteAt?: number): ObservedState["clusters"] {
  const taints: TimedTaint[] = [{ key: "gitfleet.io/unreachable", effect: "NoSchedule", addedAt: since }];
  if (noExecuteAt !== undefined && now >= noExecuteAt)
    taints.push({ key: "gitfleet.io/unreachable", effect: "NoExecute", addedAt: noExecuteAt });
  return new Map([["west", { ready: false, reason: "Unreachable", since, taints }]]);
}

function observe(
  now: number,
  clusters: ObservedState["clusters"] = new Map(),
  web: Record<string, ObservedReplicas> = {},
): ObservedState {
  return { now, clusters, workloads: new Map([[WEB, new Map(Object.entries(web))]]) };
}

function webOf(render: RenderResult) {
  const decision = render.decisions.find((d) => d.identity === WEB);
  if (!decision) throw new Error("web has no decision");
  return decision;
}

/** Replicas of web's Deployment per cluster in the rendered tree (what the members will run). */
function renderedReplicas(render: RenderResult): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const o of render.objects)
    if (o.identity === WEB) counts[o.cluster] = (o.object.spec as { replicas: number }).replicas;
  return counts;
}

function clustersWith(render: RenderResult, identity: string): string[] {
  return render.objects.filter((o) => o.identity === identity).map((o) => o.cluster);
}

const ready = (n: number): ObservedReplicas => ({ desired: n, ready: n, unschedulable: 0 });

describe("cluster failover in the render", () => {
  const model = fleet(DIVIDED);
  const start = renderFleet(model, { observations: observe(T0) });

  it("starts evenly over three clusters", () => {
    expect(renderedReplicas(start)).toEqual({ east: 2, north: 2, west: 2 });
  });

  it("keeps replicas on a NotReady cluster until its NoExecute taint outlasts the toleration (300 s)", () => {
    const noExecuteAt = T0 + 60_000;
    for (const [now, expected] of [
      [T0 + 10_000, { east: 2, north: 2, west: 2 }],
      [noExecuteAt + 299_000, { east: 2, north: 2, west: 2 }],
    ] as const) {
      const render = renderFleet(model, {
        previous: start,
        observations: observe(now, westDown(now, T0, noExecuteAt)),
      });
      expect(renderedReplicas(render)).toEqual(expected);
      expect(webOf(render).failover).toBeUndefined();
    }
  });

  describe("after the toleration, purgeMode Gracefully (the default)", () => {
    const noExecuteAt = T0 + 60_000;
    const at = noExecuteAt + 300_000;
    const failed = renderFleet(model, {
      previous: start,
      observations: observe(at, westDown(at, T0, noExecuteAt)),
    });

    it("moves west's replicas to the others and keeps the old ones rendered on west", () => {
      expect(webOf(failed).decision.clusters).toEqual({ east: 3, north: 3 });
      expect(renderedReplicas(failed)).toEqual({ east: 3, north: 3, west: 2 });
      expect(webOf(failed).failover?.movedOff).toEqual([
        {
          cluster: "west",
          replicas: 2,
          reason: "untolerated taint {gitfleet.io/unreachable:NoExecute}",
          at: new Date(at).toISOString(),
        },
      ]);
      expect(webOf(failed).failover?.keeping).toEqual([
        {
          cluster: "west",
          replicas: 2,
          purgeMode: "Gracefully",
          until: new Date(at + 600_000).toISOString(),
        },
      ]);
      // The app's ConfigMap stays beside the kept replicas.
      expect(clustersWith(failed, "/ConfigMap/shop/web-config").sort()).toEqual(["east", "north", "west"]);
    });

    it("keeps them while the replacements are not all ready", () => {
      const now = at + 20_000;
      const render = renderFleet(model, {
        previous: failed,
        observations: observe(now, westDown(now, T0, noExecuteAt), {
          east: ready(3),
          north: { ...ready(3), ready: 2 },
        }),
      });
      expect(renderedReplicas(render)).toEqual({ east: 3, north: 3, west: 2 });
    });

    it("does not count reports of the old counts as the replacements being ready", () => {
      const now = at + 20_000;
      const render = renderFleet(model, {
        previous: failed,
        observations: observe(now, westDown(now, T0, noExecuteAt), { east: ready(2), north: ready(2) }),
      });
      expect(renderedReplicas(render)).toEqual({ east: 3, north: 3, west: 2 });
    });

    it("drops them once every cluster that took replicas reports them ready", () => {
      const now = at + 30_000;
      const render = renderFleet(model, {
        previous: failed,
        observations: observe(now, westDown(now, T0, noExecuteAt), { east: ready(3), north: ready(3) }),
      });
      expect(renderedReplicas(render)).toEqual({ east: 3, north: 3 });
      expect(webOf(render).failover?.keeping).toEqual([]);
      expect(clustersWith(render, "/ConfigMap/shop/web-config").sort()).toEqual(["east", "north"]);
    });

    it("counts replacements ready where a member's HPA owns the count and has it all ready", () => {
      const now = at + 30_000;
      const hpa = (desired: number, readyCount: number): ObservedReplicas => ({
        desired,
        ready: readyCount,
        unschedulable: 0,
        scaledByHpa: true,
      });
      const waiting = renderFleet(model, {
        previous: failed,
        observations: observe(now, westDown(now, T0, noExecuteAt), { east: hpa(2, 1), north: hpa(2, 2) }),
      });
      expect(renderedReplicas(waiting)).toEqual({ east: 3, north: 3, west: 2 });
      const done = renderFleet(model, {
        previous: failed,
        observations: observe(now, westDown(now, T0, noExecuteAt), { east: hpa(2, 2), north: hpa(2, 2) }),
      });
      expect(renderedReplicas(done)).toEqual({ east: 3, north: 3 });
    });

    it("drops them after gracePeriodSeconds even when the replacements never become ready", () => {
      const now = at + 600_000;
      const render = renderFleet(model, {
        previous: failed,
        observations: observe(now, westDown(now, T0, noExecuteAt)),
      });
      expect(renderedReplicas(render)).toEqual({ east: 3, north: 3 });
    });

    it("does not move replicas back when the cluster is Ready again", () => {
      const purged = renderFleet(model, {
        previous: failed,
        observations: observe(at + 30_000, westDown(at + 30_000, T0, noExecuteAt), {
          east: ready(3),
          north: ready(3),
        }),
      });
      const back = renderFleet(model, { previous: purged, observations: observe(at + 90_000) });
      expect(renderedReplicas(back)).toEqual({ east: 3, north: 3 });
      // … until a person asks for a rebalance in the Placement.
      const rebalanced = fleet(`${DIVIDED}    rebalanceGeneration: 1\n`);
      const spread = renderFleet(rebalanced, { previous: back, observations: observe(at + 120_000) });
      expect(renderedReplicas(spread)).toEqual({ east: 2, north: 2, west: 2 });
      expect(webOf(spread).failover).toBeUndefined();
    });
  });

  it.each([
    ["Directly", { east: 3, north: 3 }, []],
    ["Never", { east: 3, north: 3, west: 2 }, [{ cluster: "west", replicas: 2, purgeMode: "Never" }]],
  ] as const)("purgeMode %s", (purgeMode, expected, keeping) => {
    const placed = fleet(
      `${DIVIDED}  failover:\n    cluster:\n      tolerationSeconds: 0\n      purgeMode: ${purgeMode}\n`,
    );
    const first = renderFleet(placed, { observations: observe(T0) });
    const now = T0 + 120_000;
    const render = renderFleet(placed, {
      previous: first,
      observations: observe(now, westDown(now, T0, T0 + 60_000), { east: ready(3), north: ready(3) }),
    });
    expect(renderedReplicas(render)).toEqual(expected);
    expect(webOf(render).failover?.keeping).toEqual(keeping);
    // Later, with the replacements ready: Never still keeps them.
    const later = renderFleet(placed, {
      previous: render,
      observations: observe(now + 700_000, westDown(now + 700_000, T0, T0 + 60_000), {
        east: ready(3),
        north: ready(3),
      }),
    });
    expect(renderedReplicas(later)).toEqual(expected);
  });

  it("deletes nothing when no other cluster can take the replicas, and says so", () => {
    const placed = fleet(
      `  clusterAffinity:\n    clusterNames: [west]\n${DIVIDED}  failover:\n    cluster:\n      tolerationSeconds: 0\n      purgeMode: Directly\n`,
    );
    const first = renderFleet(placed, { observations: observe(T0) });
    expect(renderedReplicas(first)).toEqual({ west: 6 });
    const now = T0 + 120_000;
    const render = renderFleet(placed, {
      previous: first,
      observations: observe(now, westDown(now, T0, T0 + 60_000)),
    });
    expect(renderedReplicas(render)).toEqual({ west: 6 });
    expect(webOf(render).decision.unschedulable).toBe(6);
    expect(webOf(render).decision.diagnosis.unschedulableReason).toContain("no cluster");
  });

  it("shrinks nothing anywhere when the Placement cannot be met without the failed cluster", () => {
    const placed = fleet(
      `  spreadConstraints:\n    - spreadByField: provider\n      minGroups: 3\n${DIVIDED}  failover:\n    cluster:\n      tolerationSeconds: 0\n`,
    );
    const first = renderFleet(placed, { observations: observe(T0) });
    expect(renderedReplicas(first)).toEqual({ east: 2, north: 2, west: 2 });
    const now = T0 + 120_000;
    const render = renderFleet(placed, {
      previous: first,
      observations: observe(now, westDown(now, T0, T0 + 60_000)),
    });
    expect(renderedReplicas(render)).toEqual({ east: 2, north: 2, west: 2 });
    expect(webOf(render).decision.unschedulable).toBe(6);
    expect(webOf(render).decision.diagnosis.unschedulableReason).toMatch(/provider/);
    expect(clustersWith(render, "/ConfigMap/shop/web-config").sort()).toEqual(["east", "north", "west"]);
  });

  it("never moves more than the Placement allows: a cluster's maxReplicas caps what it takes", () => {
    const placed = fleet(
      `  replicaScheduling:\n    type: Divided\n    clusterLimits:\n      - targetCluster:\n          clusterNames: [east]\n        maxReplicas: 2\n  failover:\n    cluster:\n      tolerationSeconds: 0\n`,
    );
    const first = renderFleet(placed, { observations: observe(T0) });
    const now = T0 + 120_000;
    const render = renderFleet(placed, {
      previous: first,
      observations: observe(now, westDown(now, T0, T0 + 60_000)),
    });
    expect(webOf(render).decision.clusters).toEqual({ east: 2, north: 4 });
  });

  it("leaves a Duplicated workload's copies on the others and brings one back with the cluster", () => {
    const placed = fleet(
      `  replicaScheduling:\n    type: Duplicated\n  failover:\n    cluster:\n      tolerationSeconds: 0\n`,
    );
    const first = renderFleet(placed, { observations: observe(T0) });
    expect(renderedReplicas(first)).toEqual({ east: 6, north: 6, west: 6 });
    const now = T0 + 120_000;
    const down = renderFleet(placed, {
      previous: first,
      observations: observe(now, westDown(now, T0, T0 + 60_000), { east: ready(6), north: ready(6) }),
    });
    expect(renderedReplicas(down)).toEqual({ east: 6, north: 6 });
    const back = renderFleet(placed, { previous: down, observations: observe(now + 60_000) });
    expect(renderedReplicas(back)).toEqual({ east: 6, north: 6, west: 6 });
  });
});

describe("drain and cordon from the Cluster file", () => {
  const drainedWest = (spec: string) => ({
    "clusters/west.yaml": `apiVersion: gitfleet.io/v1alpha1
kind: Cluster
metadata:
  name: west
spec:
  provider: gcp
  region: eu-west
${spec}`,
  });

  it("cordon keeps west's replicas and gives it no new ones", () => {
    const first = renderFleet(fleet(DIVIDED), { observations: observe(T0) });
    const cordoned = fleet(DIVIDED.replace("6", "6"), drainedWest("  unschedulable: true\n"));
    const render = renderFleet(cordoned, { previous: first, observations: observe(T0 + 1000) });
    expect(renderedReplicas(render)).toEqual({ east: 2, north: 2, west: 2 });
    expect(webOf(render).decision.diagnosis.frozen.west).toContain("cluster cordoned");
  });

  it("drain moves everything off gracefully: the old replicas stay until the new ones are ready", () => {
    const first = renderFleet(fleet(DIVIDED), { observations: observe(T0) });
    const drained = fleet(DIVIDED, drainedWest("  drain: true\n"));
    const moving = renderFleet(drained, { previous: first, observations: observe(T0 + 1000) });
    expect(webOf(moving).decision.clusters).toEqual({ east: 3, north: 3 });
    expect(renderedReplicas(moving)).toEqual({ east: 3, north: 3, west: 2 });
    expect(webOf(moving).failover?.movedOff[0]?.reason).toBe(
      "untolerated taint {gitfleet.io/drain:NoExecute}",
    );
    const done = renderFleet(drained, {
      previous: moving,
      observations: observe(T0 + 5000, new Map(), { east: ready(3), north: ready(3) }),
    });
    expect(renderedReplicas(done)).toEqual({ east: 3, north: 3 });
    expect(clustersWith(done, "/ConfigMap/shop/web-config").sort()).toEqual(["east", "north"]);
  });
});

describe("application failover", () => {
  const placed = fleet(
    `${DIVIDED}  failover:\n    application:\n      unschedulableSeconds: 60\n      coolDownSeconds: 600\n`,
  );
  const first = renderFleet(placed, { observations: observe(T0) });
  const pending = (since: number): ObservedReplicas => ({
    desired: 2,
    ready: 0,
    unschedulable: 2,
    unschedulableSince: since,
  });

  it("waits unschedulableSeconds before moving anything", () => {
    const render = renderFleet(placed, {
      previous: first,
      observations: observe(T0 + 30_000, new Map(), { east: ready(2), north: ready(2), west: pending(T0) }),
    });
    expect(renderedReplicas(render)).toEqual({ east: 2, north: 2, west: 2 });
    expect(webOf(render).wakeAt).toBe(T0 + 60_000);
  });

  it("caps the cluster at what runs there and places the rest elsewhere; the cap cools down without a move back", () => {
    const now = T0 + 61_000;
    const moved = renderFleet(placed, {
      previous: first,
      observations: observe(now, new Map(), { east: ready(2), north: ready(2), west: pending(T0) }),
    });
    expect(webOf(moved).decision.clusters).toEqual({ east: 3, north: 3 });
    expect(webOf(moved).failover?.capped).toEqual([
      {
        cluster: "west",
        replicas: 0,
        reason: "2 replicas Unschedulable for 61s",
        until: new Date(now + 600_000).toISOString(),
      },
    ]);
    // After the cool-down the estimate is trusted again, but nothing moves back.
    const later = renderFleet(placed, {
      previous: moved,
      observations: observe(now + 700_000, new Map(), { east: ready(3), north: ready(3) }),
    });
    expect(renderedReplicas(later)).toEqual({ east: 3, north: 3 });
    expect(webOf(later).failover?.capped).toEqual([]);
  });

  it.each([
    // ms after the pods became Unschedulable, moved
    [59_999, false],
    [60_000, true],
    [60_001, true],
  ])("at %i ms of unschedulableSeconds 60 moves: %s (it wakes at the threshold and acts)", (after, moves) => {
    const render = renderFleet(placed, {
      previous: first,
      observations: observe(T0 + after, new Map(), { east: ready(2), north: ready(2), west: pending(T0) }),
    });
    expect(webOf(render).decision.clusters).toEqual(
      moves ? { east: 3, north: 3 } : { east: 2, north: 2, west: 2 },
    );
    if (!moves) expect(webOf(render).wakeAt).toBe(T0 + 60_000);
  });

  it("is off unless the Placement asks for it", () => {
    const plain = fleet(DIVIDED);
    const before = renderFleet(plain, { observations: observe(T0) });
    const render = renderFleet(plain, {
      previous: before,
      observations: observe(T0 + 3_600_000, new Map(), {
        east: ready(2),
        north: ready(2),
        west: pending(T0),
      }),
    });
    expect(renderedReplicas(render)).toEqual({ east: 2, north: 2, west: 2 });
  });
});

describe("application failover beyond Unschedulable", () => {
  const placed = fleet(
    `${DIVIDED}  failover:\n    application:\n      degradedSeconds: 120\n      coolDownSeconds: 600\n`,
  );
  const first = renderFleet(placed, { observations: observe(T0) });
  const crashing = (since: number, reason = "CrashLoopBackOff"): ObservedReplicas => ({
    desired: 2,
    ready: 0,
    unschedulable: 0,
    degraded: 2,
    degradedReason: reason,
    degradedSince: since,
  });

  it.each([["CrashLoopBackOff"], ["ImagePullBackOff"], ["ErrImagePull"], ["ProgressDeadlineExceeded"]])(
    "moves replicas off a cluster whose pods stay in %s while the others run Healthy",
    (reason) => {
      const waiting = renderFleet(placed, {
        previous: first,
        observations: observe(T0 + 60_000, new Map(), {
          east: ready(2),
          north: ready(2),
          west: crashing(T0, reason),
        }),
      });
      expect(renderedReplicas(waiting)).toEqual({ east: 2, north: 2, west: 2 });
      expect(webOf(waiting).wakeAt).toBe(T0 + 120_000);
      const moved = renderFleet(placed, {
        previous: first,
        observations: observe(T0 + 121_000, new Map(), {
          east: ready(2),
          north: ready(2),
          west: crashing(T0, reason),
        }),
      });
      expect(webOf(moved).decision.clusters).toEqual({ east: 3, north: 3 });
      expect(webOf(moved).failover?.capped[0]?.reason).toBe(`2 replicas ${reason} for 121s`);
    },
  );

  it.each([
    // ms after the pods got stuck, moved
    [119_999, false],
    [120_000, true],
    [120_001, true],
  ])("at %i ms of degradedSeconds 120 moves: %s (it wakes at the threshold and acts)", (after, moves) => {
    const render = renderFleet(placed, {
      previous: first,
      observations: observe(T0 + after, new Map(), { east: ready(2), north: ready(2), west: crashing(T0) }),
    });
    expect(webOf(render).decision.clusters).toEqual(
      moves ? { east: 3, north: 3 } : { east: 2, north: 2, west: 2 },
    );
    if (!moves) expect(webOf(render).wakeAt).toBe(T0 + 120_000);
  });

  it("moves nothing while another cluster runs its replicas only partly ready", () => {
    const render = renderFleet(placed, {
      previous: first,
      observations: observe(T0 + 3_600_000, new Map(), {
        east: ready(2),
        north: { desired: 2, ready: 1, unschedulable: 0 },
        west: crashing(T0),
      }),
    });
    expect(renderedReplicas(render)).toEqual({ east: 2, north: 2, west: 2 });
    expect(webOf(render).failover).toBeUndefined();
  });

  it("moves nothing when the same template fails everywhere: the rollout halts instead", () => {
    const render = renderFleet(placed, {
      previous: first,
      observations: observe(T0 + 3_600_000, new Map(), {
        east: crashing(T0, "ImagePullBackOff"),
        north: crashing(T0, "ImagePullBackOff"),
        west: crashing(T0, "ImagePullBackOff"),
      }),
    });
    expect(renderedReplicas(render)).toEqual({ east: 2, north: 2, west: 2 });
    expect(webOf(render).failover).toBeUndefined();
  });

  it("caps a workload a member HPA scales at what runs there", () => {
    const render = renderFleet(placed, {
      previous: first,
      observations: observe(T0 + 121_000, new Map(), {
        east: ready(2),
        north: ready(2),
        west: { ...crashing(T0), desired: 4, ready: 1, degraded: 3, scaledByHpa: true },
      }),
    });
    expect(webOf(render).failover?.capped.map((c) => [c.cluster, c.replicas])).toEqual([["west", 1]]);
  });

  it("never moves a Duplicated workload's replicas", () => {
    const duplicated = fleet(
      "  replicaScheduling:\n    type: Duplicated\n  failover:\n    application:\n      degradedSeconds: 1\n",
    );
    const before = renderFleet(duplicated, { observations: observe(T0) });
    const render = renderFleet(duplicated, {
      previous: before,
      observations: observe(T0 + 600_000, new Map(), { east: ready(6), north: ready(6), west: crashing(T0) }),
    });
    expect(renderedReplicas(render)).toEqual({ east: 6, north: 6, west: 6 });
  });
});
