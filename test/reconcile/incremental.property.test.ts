import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createParseCache, type ParseCache } from "../../src/load/load-fleet.js";
import { ALL } from "../../src/reconcile/affected-apps.js";
import { EMPTY_STATE, type ReconcileState, reconcileStep } from "../../src/reconcile/reconcile-step.js";
import { restoreState } from "../../src/reconcile/restore-state.js";
import { BASE_SPEC, changedPaths, editArbitrary, fleetFiles } from "../helpers/fleet-spec.js";

const commit = (n: number) => n.toString(16).padStart(40, "a");

describe("incremental reconcile", () => {
  it("gives the status branch a full render gives, for random edit sequences, and after a restart from its files", () => {
    fc.assert(
      fc.property(fc.array(editArbitrary, { minLength: 1, maxLength: 12 }), (edits) => {
        let spec = BASE_SPEC;
        let tree = fleetFiles(spec);
        const cache: ParseCache = createParseCache();
        let incremental = reconcileStep(EMPTY_STATE, {
          sourceCommit: commit(0),
          tree,
          changedPaths: ALL,
          cache,
        }).state;
        let full: ReconcileState = incremental;
        edits.forEach((edit, step) => {
          spec = edit(spec);
          const next = fleetFiles(spec);
          const sourceCommit = commit(step + 1);
          const changed = changedPaths(incremental.tree, next);
          const a = reconcileStep(incremental, { sourceCommit, tree: next, changedPaths: changed, cache });
          const b = reconcileStep(full, { sourceCommit, tree: next, changedPaths: ALL });
          expect(a.valid).toBe(b.valid);
          expect(Object.fromEntries(a.state.files)).toEqual(Object.fromEntries(b.state.files));
          expect(Object.fromEntries(a.changes)).toEqual(Object.fromEntries(b.changes));
          // A restarted controller rebuilds its state from the branch's files and carries on the same.
          const restored = restoreState(a.state.files, a.state.tree, a.state.model);
          expect(restored.render).toEqual(a.state.render);
          expect(restored.appCommits).toEqual(a.state.appCommits);
          incremental = step % 3 === 2 ? restored : a.state;
          full = b.state;
          tree = next;
        });
        expect(tree.size).toBeGreaterThan(0);
      }),
      { numRuns: 60 },
    );
  });
});
