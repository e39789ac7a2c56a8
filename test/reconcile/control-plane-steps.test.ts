import { beforeAll, describe, expect, it } from "vitest";
import type { FileTree } from "../../src/model/file-tree.js";
import { ALL } from "../../src/reconcile/affected-apps.js";
import { EMPTY_STATE, reconcileStep } from "../../src/reconcile/reconcile-step.js";
import { readDirectoryTree } from "../../src/source/read-directory.js";
import { HOSTED_EXAMPLE_DIR } from "../helpers/hosted-example.js";

// The reconcile refuses a commit that steps a running hosted control plane where it cannot go, as it
// refuses an invalid one: nothing rendered changes, and status/source.yaml says where and why.

const commit = (n: number) => n.toString(16).padStart(40, "a");
let example: FileTree;
beforeAll(async () => {
  example = await readDirectoryTree(HOSTED_EXAMPLE_DIR);
});

function withClass(from: string, to: string): FileTree {
  const tree = new Map(example);
  const text = new TextDecoder().decode(tree.get("controlplanes/standard.yaml"));
  if (!text.includes(from)) throw new Error(`no ${from}`);
  tree.set("controlplanes/standard.yaml", new TextEncoder().encode(text.replace(from, to)));
  return tree;
}

describe("reconcile: hosted control-plane version steps", () => {
  it.each([
    ["a kube-apiserver minor downgrade", "version: v1.34.1", "version: v1.33.2", "is a minor downgrade"],
    ["a skipped minor", "version: v1.34.1", "version: v1.36.0", "upgrade one minor at a time"],
    ["an etcd minor downgrade", "version: 3.6.4-0", "version: 3.5.21-0", "etcd that holds data"],
  ])("refuses %s and keeps what runs", (_name, from, to, reason) => {
    const start = reconcileStep(EMPTY_STATE, { sourceCommit: commit(0), tree: example, changedPaths: ALL });
    expect(start.valid).toBe(true);
    const step = reconcileStep(start.state, {
      sourceCommit: commit(1),
      tree: withClass(from, to),
      changedPaths: ALL,
    });
    expect(step.valid).toBe(false);
    expect([...step.changes.keys()].filter((path) => path.startsWith("rendered/"))).toEqual([]);
    expect(step.changes.get("status/source.yaml")).toContain(reason);
    expect(step.changes.get("status/source.yaml")).toContain("controlplanes/standard.yaml");
  });

  it("takes a patch step, and a minor step up, as any change", () => {
    const start = reconcileStep(EMPTY_STATE, { sourceCommit: commit(0), tree: example, changedPaths: ALL });
    for (const to of ["version: v1.34.2", "version: v1.35.0"]) {
      const step = reconcileStep(start.state, {
        sourceCommit: commit(1),
        tree: withClass("version: v1.34.1", to),
        changedPaths: ["controlplanes/standard.yaml"],
      });
      expect(step.valid).toBe(true);
      const apiServer = step.changes.get(
        "rendered/meta-1/gitfleet-cp-pc-1/apps.Deployment.kube-apiserver.yaml",
      );
      expect(apiServer).toContain(`registry.k8s.io/kube-apiserver:${to.slice("version: ".length)}`);
    }
  });
});
