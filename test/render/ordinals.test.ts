import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { asMap } from "../../src/apimachinery/json.js";
import { loadFleet } from "../../src/load/load-fleet.js";
import type { FleetModel } from "../../src/model/types.js";
import { ordinalStarts } from "../../src/render/ordinals.js";
import { renderFleet } from "../../src/render/render-fleet.js";
import type { RenderResult } from "../../src/render/render-result.js";
import { minimalFleetWith } from "../helpers/minimal-fleet.js";
import { NORTH_CLUSTER } from "../helpers/service-fleet.js";

// A StatefulSet divided over clusters: each cluster's pods take a range of ordinals of their own,
// so no two clusters run mysql-0.

const CLUSTERS = ["east", "north", "west"] as const;

function ranges(starts: Readonly<Record<string, number>>, counts: Readonly<Record<string, number>>) {
  return Object.entries(starts).map(([c, s]) => [s, s + (counts[c] ?? 0)] as const);
}

function disjoint(list: readonly (readonly [number, number])[]): boolean {
  const sorted = [...list].sort((a, b) => a[0] - b[0]);
  return sorted.every((r, i) => i === 0 || (sorted[i - 1] as readonly [number, number])[1] <= r[0]);
}

describe("ordinal ranges", () => {
  it.each([
    ["first ranges on a grid of the total", { east: 3, west: 3 }, undefined, 6, { east: 0, west: 6 }],
    [
      "growth that still fits keeps every start",
      { east: 5, west: 3 },
      { east: 0, west: 6 },
      8,
      { east: 0, west: 6 },
    ],
    ["exactly touching ranges stay", { east: 6, west: 3 }, { east: 0, west: 6 }, 9, { east: 0, west: 6 }],
    [
      "one past touching: the smaller range moves",
      { east: 7, west: 3 },
      { east: 0, west: 6 },
      10,
      { east: 0, west: 10 },
    ],
    ["a cluster that left frees its range", { west: 6 }, { east: 0, west: 6 }, 6, { west: 6 }],
    [
      "a new cluster takes the first free start",
      { east: 2, north: 2, west: 2 },
      { east: 0, west: 6 },
      6,
      { east: 0, north: 12, west: 6 },
    ],
  ])("%s", (_what, counts, previous, total, expected) => {
    expect(ordinalStarts(counts, previous, total)).toEqual(expected);
  });

  it("never gives two clusters overlapping ranges, and keeps a start whenever it can (property)", () => {
    const counts = fc.record({
      east: fc.nat({ max: 12 }),
      north: fc.nat({ max: 12 }),
      west: fc.nat({ max: 12 }),
    });
    fc.assert(
      fc.property(fc.array(counts, { minLength: 1, maxLength: 15 }), (steps) => {
        let previous: Record<string, number> | undefined;
        for (const step of steps) {
          const total = Object.values(step).reduce((a, b) => a + b, 0);
          const starts = ordinalStarts(step, previous, total);
          expect(Object.keys(starts).sort()).toEqual(CLUSTERS.filter((c) => step[c] > 0));
          expect(disjoint(ranges(starts, step))).toBe(true);
          // If the old starts still give disjoint ranges for the new counts, none moves.
          const kept = Object.fromEntries(
            Object.entries(previous ?? {}).filter(([c]) => (step[c as keyof typeof step] ?? 0) > 0),
          );
          const allKept = Object.keys(starts).every((c) => kept[c] !== undefined);
          if (allKept && disjoint(ranges(kept, step))) expect(starts).toEqual(kept);
          previous = starts;
        }
      }),
      { numRuns: 300 },
    );
  });
});

const MYSQL = `apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: mysql
spec:
  replicas: REPLICAS
  serviceName: mysql
  selector:
    matchLabels: {app: mysql}
  persistentVolumeClaimRetentionPolicy: {whenDeleted: Retain, whenScaled: Retain}
  template:
    metadata:
      labels: {app: mysql}
    spec:
      containers:
        - name: mysql
          image: registry.example.com/mysql:8.4
`;

function fleet(replicas: number, weights: Record<string, number>): FleetModel {
  const list = Object.entries(weights)
    .map(([c, w]) => `        - targetCluster: {clusterNames: [${c}]}\n          weight: ${w}`)
    .join("\n");
  const loaded = loadFleet(
    minimalFleetWith({
      "clusters/north.yaml": NORTH_CLUSTER,
      "apps/web/deployment.yaml": null,
      "apps/web/configmap.yaml": null,
      "apps/web/statefulset.yaml": MYSQL.replace("REPLICAS", String(replicas)),
      "placements/web.yaml": `apiVersion: gitfleet.io/v1alpha1\nkind: Placement\nmetadata:\n  name: web\nspec:\n  apps: [web]\n  replicaScheduling:\n    type: Divided\n    divisionPreference: Weighted\n    weightPreference:\n      staticWeightList:\n${list}\n`,
    }),
  );
  if (!loaded.model) throw new Error(loaded.problems.map((p) => `${p.file}: ${p.message}`).join("\n"));
  return loaded.model;
}

function liveRanges(render: RenderResult): Record<string, [number, number]> {
  const out: Record<string, [number, number]> = {};
  for (const o of render.objects.filter((o) => o.identity === "apps/StatefulSet/shop/mysql")) {
    const spec = asMap(o.object.spec);
    const start = Number(asMap(spec.ordinals).start ?? 0);
    out[o.cluster] = [start, start + Number(spec.replicas)];
  }
  return out;
}

describe("a divided StatefulSet in the render", () => {
  it("gives each cluster its own ordinals, keeps them through a scale-up, and leaves PVC retention alone", () => {
    const first = renderFleet(fleet(6, { east: 1, west: 1, north: 1 }));
    expect(liveRanges(first)).toEqual({ east: [0, 2], north: [6, 8], west: [12, 14] });
    const grown = renderFleet(fleet(9, { east: 1, west: 1, north: 1 }), { previous: first });
    expect(liveRanges(grown)).toEqual({ east: [0, 3], north: [6, 9], west: [12, 15] });
    for (const o of grown.objects.filter((o) => o.identity === "apps/StatefulSet/shop/mysql"))
      expect(asMap(o.object.spec).persistentVolumeClaimRetentionPolicy).toEqual({
        whenDeleted: "Retain",
        whenScaled: "Retain",
      });
    expect(grown.decisions[0]?.ordinals).toEqual({ east: 0, north: 6, west: 12 });
  });

  it("moves no range when a cluster leaves and its replicas go to the others within their room", () => {
    const first = renderFleet(fleet(6, { east: 1, west: 1, north: 1 }));
    const without = renderFleet(fleet(6, { east: 1, west: 1 }), { previous: first });
    expect(liveRanges(without)).toEqual({ east: [0, 3], west: [12, 15] });
  });
});
