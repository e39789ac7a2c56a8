import { describe, expect, it } from "vitest";
import type { RestoredBranch } from "../../src/controller/branch-restore.js";
import { snapshotFrom, snapshotParts } from "../../src/controller/snapshot/reconciler-snapshot.js";
import { decodeSnapshot } from "../../src/controller/snapshot/snapshot-codec.js";
import { loadFleet } from "../../src/load/load-fleet.js";
import { createParseCache } from "../../src/load/parse-cache.js";
import { EMPTY_STATE } from "../../src/reconcile/reconcile-step.js";
import { BASE_SPEC, fleetFiles } from "../helpers/fleet-spec.js";
import { encodeSnapshotBytes } from "../helpers/snapshot-bytes.js";

const header = { code: "c", statusBranch: "gitfleet/status", statusTip: "b".repeat(40) };

// A branch whose collections span several parts (2,000 entries each), and one that is empty.
function branchOf(size: number): RestoredBranch {
  const tree = new Map(fleetFiles(BASE_SPEC));
  for (let i = 0; i < size; i++) tree.set(`notes/n${i}.txt`, new TextEncoder().encode(`note ${i}`));
  const loaded = loadFleet(tree);
  const range = (n: number) => Array.from({ length: n }, (_, i) => i);
  return {
    state: {
      ...EMPTY_STATE,
      sourceCommit: "s".repeat(40),
      renderedCommit: "s".repeat(40),
      tree,
      model: loaded.model,
      files: new Map(range(size).map((i) => [`rendered/c/f${i}.yaml`, `n: ${i}\n`])),
      appCommits: new Map(range(size).map((i) => [`app-${i}`, "s".repeat(40)])),
    },
    statusTip: header.statusTip,
    renderedTree: "t".repeat(40),
    observed: new Map(range(size).map((i) => [`status/apps/a${i}.yaml`, `observed: ${i}\n`])),
    syncFiles: new Map([["status/inventory/east.yaml", "objects: 0\n"]]),
    trusted: true,
    repair: new Map([["status/x.yaml", null]]),
    sweep: false,
  };
}

describe("the reconciler's snapshot as parts", () => {
  it.each([0, 4500])(
    "gives back the branch and the parse cache held (%i entries per collection)",
    async (size) => {
      const branch = branchOf(size);
      const cache = createParseCache();
      loadFleet(branch.state.tree, cache);
      const parts = [...snapshotParts(branch, cache)];
      if (size > 0) expect(parts.length).toBeGreaterThan(10);
      const decoded = decodeSnapshot(await encodeSnapshotBytes(header, parts), header);
      if (!decoded.ok) throw new Error(decoded.reason);
      const back = snapshotFrom(decoded.parts);
      expect(back?.branch).toEqual(branch);
      expect(back?.parse.map((r) => r.path)).toEqual([...cache.files.keys()].sort());
      // Each file's bytes are written once: a record takes the tree's.
      for (const record of back?.parse ?? [])
        expect(record.bytes).toBe(back?.branch.state.tree.get(record.path));
    },
  );

  it.each([
    ["no parts", []],
    ["no skeleton first", [{ kind: "files", entries: [] }]],
    ["a batch that is not one", [{ kind: "skeleton", branch: branchOf(0) }, { kind: "files" }]],
  ])("is not made from %s", (_, parts) => {
    expect(snapshotFrom(parts)).toBeUndefined();
  });
});
