import { beforeAll, describe, expect, it } from "vitest";
import { loadFleet } from "../../src/load/load-fleet.js";
import type { FileTree } from "../../src/model/file-tree.js";
import type { FleetModel } from "../../src/model/types.js";
import { hostsMovedWithoutRestore, planHostMove } from "../../src/plan/host-moves.js";
import { readDirectoryTree } from "../../src/source/read-directory.js";
import { HOSTED_EXAMPLE_DIR, offsiteExample } from "../helpers/hosted-example.js";

// A change that moves a hosted cluster to another host without restoring it is warned of at the host
// line: the cluster would start there with an empty etcd and new CAs.
const encoder = new TextEncoder();
let base: Map<string, Uint8Array>;
beforeAll(async () => {
  base = new Map(await readDirectoryTree(HOSTED_EXAMPLE_DIR)) as Map<string, Uint8Array>;
  // pc-3: a dedicated etcd of its own (pc-1 and pc-2 share one, which moves with both).
  base.set(
    "clusters/pc-3.yaml",
    encoder.encode(
      "apiVersion: gitfleet.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: pc-3\nspec:\n  controlPlane:\n    host: meta-1\n    class: standard\n    expose: { type: LoadBalancer }\n",
    ),
  );
  base.set(
    "clusters/meta-2.yaml",
    encoder.encode("apiVersion: gitfleet.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: meta-2\nspec: {}\n"),
  );
});

const model = (tree: Map<string, Uint8Array>) => {
  const loaded = loadFleet(tree as FileTree);
  expect(loaded.problems.filter((p) => p.severity === "error")).toEqual([]);
  return loaded.model as FleetModel;
};
const moved = (extra: Record<string, string> = {}) => {
  const tree = new Map(base);
  const pc3 = new TextDecoder().decode(tree.get("clusters/pc-3.yaml"));
  tree.set("clusters/pc-3.yaml", encoder.encode(pc3.replace("host: meta-1", "host: meta-2")));
  for (const [path, text] of Object.entries(extra)) tree.set(path, encoder.encode(text));
  return tree;
};

describe("a hosted cluster moved to another host", () => {
  it("is warned of at its host line when nothing restores it", () => {
    const head = moved();
    const warnings = hostsMovedWithoutRestore(model(base), model(head), head as FileTree);
    expect(warnings).toHaveLength(1);
    const line = new TextDecoder()
      .decode(head.get("clusters/pc-3.yaml"))
      .split("\n")
      .findIndex((l) => l.includes("host: meta-2"));
    expect(warnings[0]).toMatchObject({
      file: "clusters/pc-3.yaml",
      line: line + 1,
      severity: "warning",
      code: "HOST_MOVED_WITHOUT_RESTORE",
      message: expect.stringContaining(
        "pc-3's control plane moves from meta-1 to meta-2 with nothing restored: it starts there with an empty etcd and new CAs",
      ),
    });
  });

  it.each([
    [
      "with an EtcdRestore of it",
      () =>
        moved({
          "controlplanes/back.yaml":
            "apiVersion: gitfleet.io/v1alpha1\nkind: EtcdRestore\nmetadata: { name: back }\nspec: { cluster: pc-3, snapshot: s.db }\n",
        }),
    ],
    ["not moved", () => base],
  ])("is not warned of %s", (_name, head) => {
    const tree = head();
    expect(hostsMovedWithoutRestore(model(base), model(tree), tree as FileTree)).toEqual([]);
  });

  it("is not warned of with no base (a first commit)", () => {
    const head = moved();
    expect(hostsMovedWithoutRestore(undefined, model(head), head as FileTree)).toEqual([]);
  });
});

// The change `gitfleet move-host` writes, as data: the host edited where and as it is written.
describe("moving every control plane of a host", () => {
  const long = "a".repeat(40);
  const meta2 = "apiVersion: gitfleet.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: meta-2\nspec: {}\n";
  it.each([
    [
      "flow style",
      `apiVersion: gitfleet.io/v1alpha1\nkind: Cluster\nmetadata: { name: pc-3 }\nspec:\n  controlPlane: { host: meta-1, class: offsite, expose: { type: LoadBalancer } }\n`,
      "pc-3",
      "  controlPlane: { host: meta-2, class: offsite, expose: { type: LoadBalancer } }",
      "controlplanes/pc-3-to-meta-2.yaml",
    ],
    [
      "single quotes, and a name that leaves its Job no room",
      `apiVersion: gitfleet.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: ${long}\nspec:\n  controlPlane:\n    host: 'meta-1'\n    class: offsite\n    expose: { type: LoadBalancer }\n`,
      long,
      "    host: 'meta-2'",
      /^controlplanes\/move-[0-9a-f]{16}\.yaml$/,
    ],
  ])("edits a host written in %s", async (_name, file, cluster, line, restoreFile) => {
    const tree = await offsiteExample();
    for (const path of ["clusters/pc-1.yaml", "clusters/pc-2.yaml", "clusters/pc-3.yaml"]) tree.delete(path);
    for (const path of [...tree.keys()]) if (/^(apps|placements)\//.test(path)) tree.delete(path);
    tree.set(`clusters/${cluster}.yaml`, encoder.encode(file));
    tree.set("clusters/meta-2.yaml", encoder.encode(meta2));
    const move = planHostMove(model(tree), tree as FileTree, "meta-1", "meta-2");
    expect(move.moved.map((m) => m.cluster)).toEqual([cluster]);
    expect(move.files.get(`clusters/${cluster}.yaml`)?.split("\n")).toContain(line);
    expect(move.moved[0]?.file).toMatch(restoreFile);
    // The repo with the change is valid.
    const changed = new Map(tree);
    for (const [path, text] of move.files) changed.set(path, encoder.encode(text));
    model(changed);
  });

  it("refuses a host whose control plane runs in the host it moves from", async () => {
    const tree = await offsiteExample();
    tree.set(
      "clusters/meta-2.yaml",
      encoder.encode(
        "apiVersion: gitfleet.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: meta-2\nspec:\n  controlPlane:\n    host: meta-1\n    class: offsite\n    expose: { type: LoadBalancer }\n",
      ),
    );
    expect(() => planHostMove(model(tree), tree as FileTree, "meta-1", "meta-2")).toThrow(
      "meta-2's own control plane runs in meta-1",
    );
  });
});
