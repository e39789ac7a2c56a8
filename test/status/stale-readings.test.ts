import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { asMap } from "../../src/apimachinery/json.js";
import { loadFleet } from "../../src/load/load-fleet.js";
import type { ClusterCapacity } from "../../src/model/node-capacity.js";
import type { FleetModel } from "../../src/model/types.js";
import { renderFleet } from "../../src/render/render-fleet.js";
import type { RenderResult } from "../../src/render/render-result.js";
import { readEmittedYaml } from "../../src/render/yaml-reader.js";
import { observedFiles } from "../../src/status/observed-files.js";
import { joinObserved } from "../../src/status/observed-status.js";
import { recordedClusters } from "../../src/status/recorded-observations.js";
import { carriedReadings } from "../../src/status/stale-readings.js";
import { clusterStatusPath } from "../../src/status/status-files.js";
import type { ClusterSyncResult } from "../../src/sync/sync-result.js";
import { minimalFleetWith, webDeployment } from "../helpers/minimal-fleet.js";
import { nodePool } from "../helpers/node-pools.js";

// A member's readings outlive an outage: read, unreachable, back — nothing it reported is forgotten
// while it is away, so its return is a fluctuation like any other and moves no replica.

const T0 = Date.parse("2026-12-01T12:00:00Z");
const WEB = "apps/Deployment/shop/web";
const CLUSTERS = ["east", "west"] as const;

const pool = nodePool;

const capacity = (nodes: number, freeCpu: number): ClusterCapacity => ({
  nodes,
  readyNodes: nodes,
  allocatable: { cpu: 16 * nodes, memory: 64 * 2 ** 30 * nodes, pods: 110 * nodes },
  requested: { cpu: 0, memory: 0, pods: 0 },
  pools: [pool(nodes, freeCpu)],
});

function result(cluster: string, read: ClusterCapacity | undefined): ClusterSyncResult {
  return {
    cluster,
    sourceCommit: "c0ffee",
    reachable: read !== undefined,
    ...(read ? { capacity: read } : { error: "connect ECONNREFUSED" }),
    objects: [],
    pruned: [],
    retained: [],
    inventory: new Map(),
  };
}

function dynamicFleet(replicas: number): FleetModel {
  const loaded = loadFleet(
    minimalFleetWith({
      "apps/web/deployment.yaml": webDeployment(replicas, "1"),
      "placements/web.yaml":
        "apiVersion: gitfleet.io/v1alpha1\nkind: Placement\nmetadata:\n  name: web\nspec:\n  apps: [web]\n  replicaScheduling:\n    type: Divided\n    weightPreference:\n      dynamicWeight: AvailableReplicas\n",
    }),
  );
  if (!loaded.model) throw new Error(loaded.problems.map((p) => p.message).join("\n"));
  return loaded.model;
}

/** One round: the members' results published over the last blocks, read back as the render reads them. */
function round(
  blocks: Map<string, string>,
  results: ClusterSyncResult[],
  now: number,
): { blocks: Map<string, string>; capacity: Map<string, ClusterCapacity> } {
  const published = observedFiles(
    [],
    new Map(results.map((r) => [r.cluster, r])),
    new Map(),
    new Map(),
    (path) => blocks.get(path),
    now,
  ).blocks;
  const next = new Map([...blocks, ...published]);
  const files = new Map([...next].map(([path, block]) => [path, joinObserved("", block)]));
  return { blocks: next, capacity: recordedClusters(files).capacity };
}

const division = (render: RenderResult) => ({
  ...render.decisions.find((d) => d.identity === WEB)?.decision.clusters,
});

describe("a member's readings across an outage", () => {
  it("keeps capacity, APIs and entry points of a member that does not answer, stale since the first sync that found it so", () => {
    const read = round(new Map(), [result("east", capacity(2, 12))], T0);
    const path = clusterStatusPath("east");
    expect(asMap(asMap(readEmittedYaml(read.blocks.get(path) ?? "")).observed).staleSince).toBeUndefined();
    const down = round(read.blocks, [result("east", undefined)], T0 + 5_000);
    const observed = asMap(asMap(readEmittedYaml(down.blocks.get(path) ?? "")).observed);
    expect(observed).toMatchObject({ reachable: false, staleSince: "2026-12-01T12:00:05.000Z" });
    expect(down.capacity.get("east")).toEqual(read.capacity.get("east"));
    // Still away later: the same block (no commit), the age kept from the first.
    const later = round(down.blocks, [result("east", undefined)], T0 + 60_000);
    expect(later.blocks.get(path)).toBe(down.blocks.get(path));
    // Back: a fresh reading, no longer stale.
    const back = round(later.blocks, [result("east", capacity(2, 11))], T0 + 90_000);
    expect(asMap(asMap(readEmittedYaml(back.blocks.get(path) ?? "")).observed).staleSince).toBeUndefined();
  });

  it.each([
    ["no previous block", undefined, {}],
    ["a block without readings", "observed:\n  reachable: false\n", {}],
    ["a capacity that does not read", "observed:\n  capacity: 7\n", {}],
    ["a staleSince that is not a time", "observed:\n  staleSince: soon\n  capacity: 7\n", {}],
  ])("carries nothing from %s", (_name, block, expected) => {
    expect(carriedReadings(block, T0)).toEqual(expected);
  });

  it("moves no replica when members go away and come back with readings that merely fluctuate (property)", () => {
    const step = fc.record({
      east: fc.option(fc.integer({ min: 6, max: 14 }), { nil: undefined }),
      west: fc.option(fc.integer({ min: 2, max: 6 }), { nil: undefined }),
    });
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 12 }), (steps) => {
        const model = dynamicFleet(12);
        // First every member is read: the division by capacity is made once, from what they have.
        let state = round(new Map(), [result("east", capacity(2, 12)), result("west", capacity(3, 4))], T0);
        let render = renderFleet(model, {
          observations: { now: T0, clusters: new Map(), workloads: new Map(), capacity: state.capacity },
        });
        const first = division(render);
        for (const [i, s] of steps.entries()) {
          const now = T0 + (i + 1) * 10_000;
          const results = CLUSTERS.map((c) =>
            result(c, s[c] === undefined ? undefined : capacity(c === "east" ? 2 : 3, s[c] as number)),
          );
          state = round(state.blocks, results, now);
          // Every member stays read: none is ever provisional again.
          expect([...state.capacity.keys()].sort()).toEqual(["east", "west"]);
          render = renderFleet(model, {
            previous: render,
            observations: { now, clusters: new Map(), workloads: new Map(), capacity: state.capacity },
          });
          expect(render.decisions.find((d) => d.identity === WEB)?.capacityUnknown).toBeUndefined();
          expect(division(render)).toEqual(first);
        }
      }),
      { numRuns: 200 },
    );
  });
});
