import { beforeAll, describe, expect, it } from "vitest";
import { loadFleet } from "../../src/load/load-fleet.js";
import type { FileTree } from "../../src/model/file-tree.js";
import type { FleetModel } from "../../src/model/types.js";
import { hostsMovedWithoutRestore } from "../../src/plan/host-moves.js";
import { readDirectoryTree } from "../../src/source/read-directory.js";
import { HOSTED_EXAMPLE_DIR } from "../helpers/hosted-example.js";

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
