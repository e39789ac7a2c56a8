import { describe, expect, it } from "vitest";
import { createParseCache } from "../../src/load/load-fleet.js";
import type { FileTree } from "../../src/model/file-tree.js";
import { ALL } from "../../src/reconcile/affected-apps.js";
import { EMPTY_STATE, reconcileStep } from "../../src/reconcile/reconcile-step.js";
import { BASE_SPEC, changedPaths, type FleetSpec, fleetFiles } from "../helpers/fleet-spec.js";

const commit = (n: number) => n.toString(16).padStart(40, "a");

// The base fleet: 7 apps (web on east, west and south; api on east and west; cart on west and north;
// jobs on north and south; docs on south; widgets and gadgets on east): 12 (app, cluster) pairs, in
// 27 fleet repo files (4 clusters, 3 Overrides, 3 files for each of the 5 apps, the CRD and the
// Widget, 2 more Placements and a Migration) besides the README.
const edited = (change: (spec: FleetSpec) => FleetSpec): FileTree => fleetFiles(change(BASE_SPEC));
const web = (change: Partial<FleetSpec["apps"][number]>) => (spec: FleetSpec) => ({
  ...spec,
  apps: spec.apps.map((a) => (a.name === "web" ? { ...a, ...change } : a)),
});

describe("what a reconcile says it computed again", () => {
  const base = fleetFiles(BASE_SPEC);
  // The base fleet reconciled, with the cache its load filled (each case starts from its own).
  const reconciled = () => {
    const cache = createParseCache();
    const step = reconcileStep(EMPTY_STATE, {
      sourceCommit: commit(0),
      tree: base,
      changedPaths: ALL,
      cache,
    });
    return { first: step, start: step.state, cache };
  };
  const { first } = reconciled();

  it("is every file, app and pair for the first reconcile", () => {
    expect(first.recomputed).toEqual({ files: 27, apps: 7, pairs: 12 });
  });

  it.each([
    ["one app's image", edited(web({ tag: 2 })), { files: 1, apps: 1, pairs: 3 }],
    ["one app's replicas", edited(web({ replicas: 9 })), { files: 1, apps: 1, pairs: 3 }],
    [
      "one app's clusters (one more)",
      edited(web({ clusters: ["east", "west", "south", "north"] })),
      { files: 1, apps: 1, pairs: 4 },
    ],
    [
      "an Override every Deployment's app reads",
      edited((s) => ({ ...s, registries: { ...s.registries, aws: "r.example.com" } })),
      { files: 1, apps: 5, pairs: 10 },
    ],
    ["a file that does not parse", edited((s) => ({ ...s, broken: "web" })), { files: 1, apps: 0, pairs: 0 }],
    ["nothing", base, { files: 0, apps: 0, pairs: 0 }],
  ])("after a change of %s: only what it touches", (_what, tree, expected) => {
    const { start, cache } = reconciled();
    const step = reconcileStep(start, {
      sourceCommit: commit(1),
      tree,
      changedPaths: changedPaths(start.tree, tree),
      cache,
    });
    expect(step.recomputed).toEqual(expected);
  });

  it("is every app and pair again for a full render, with no file parsed again when none changed", () => {
    const { start, cache } = reconciled();
    const full = reconcileStep(start, { sourceCommit: commit(1), tree: base, changedPaths: ALL, cache });
    expect(full.recomputed).toEqual({ files: 0, apps: 7, pairs: 12 });
  });
});
