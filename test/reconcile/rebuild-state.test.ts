import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { loadFleet } from "../../src/load/load-fleet.js";
import { fileTreeFromText } from "../../src/model/file-tree.js";
import { ALL } from "../../src/reconcile/affected-apps.js";
import { type BranchRendered, rebuildState } from "../../src/reconcile/rebuild-state.js";
import { EMPTY_STATE, reconcileStep } from "../../src/reconcile/reconcile-step.js";
import { restoreState } from "../../src/reconcile/restore-state.js";
import { appStatusPath } from "../../src/status/status-files.js";
import { MINIMAL_FLEET } from "../helpers/minimal-fleet.js";

/**
 * Rebuilding the loop's state from a status branch gitfleet cannot vouch for: the source is rendered
 * again and the branch's rendered/ files are only compared with it, by object id, never read — so
 * whatever a writer of the branch changed or added there is repaired, never taken in.
 */

const SOURCE = "a".repeat(40);
const tree = fileTreeFromText(MINIMAL_FLEET);
const model = loadFleet(tree).model;
if (!model) throw new Error("the minimal fleet is invalid");
const honest = reconcileStep(EMPTY_STATE, { sourceCommit: SOURCE, tree, changedPaths: ALL }).state;

// A branch as its files say: status/ texts, and rendered/ compared as git compares them.
function branch(files: ReadonlyMap<string, string>) {
  const id = (text: string) =>
    createHash("sha1")
      .update(`blob ${Buffer.byteLength(text)}\0${text}`)
      .digest("hex");
  const status = new Map([...files].filter(([path]) => !path.startsWith("rendered/")));
  const ids = new Map(
    [...files].filter(([path]) => path.startsWith("rendered/")).map(([p, t]) => [p, id(t)]),
  );
  const rendered: BranchRendered = {
    paths: [...ids.keys()],
    holds: (path, text) => ids.get(path) === id(text),
  };
  return rebuildState({
    restored: restoreState(status, tree, model),
    rendered,
    files: status,
    observed: new Map(),
    now: Date.parse("2026-12-01T00:00:00Z"),
  });
}

const WEST_WEB = "rendered/west/shop/apps.Deployment.web.yaml";
const INJECTED = "rendered/west/kube-system/core.ConfigMap.injected.yaml";

describe("rebuildState", () => {
  it("repairs nothing on an intact branch, and renders what a trusted restore would hold", () => {
    const { state, repair } = branch(honest.files);
    expect([...repair]).toEqual([]);
    expect(state.files).toEqual(honest.files);
    expect(state.render.objects.map((o) => [o.path, o.text])).toEqual(
      honest.render.objects.map((o) => [o.path, o.text]),
    );
  });

  it.each([
    [
      "an image changed under rendered/",
      (files: Map<string, string>) =>
        files.set(WEST_WEB, (files.get(WEST_WEB) ?? "").replace(/image: .*/, "image: evil.example/miner:1")),
      [[WEST_WEB, "written again"]],
    ],
    [
      "an object added under rendered/",
      (files: Map<string, string>) =>
        files.set(
          INJECTED,
          "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: injected\n  namespace: kube-system\n",
        ),
      [[INJECTED, "removed"]],
    ],
    [
      "a real object copied to a cluster it is not placed on",
      (files: Map<string, string>) =>
        files.set("rendered/north/shop/apps.Deployment.web.yaml", files.get(WEST_WEB) ?? ""),
      [["rendered/north/shop/apps.Deployment.web.yaml", "removed"]],
    ],
    [
      "a rendered file deleted",
      (files: Map<string, string>) => files.delete(WEST_WEB),
      [[WEST_WEB, "written again"]],
    ],
    [
      "a file outside the layout",
      (files: Map<string, string>) => files.set("status/evil.yaml", "x: 1\n"),
      [["status/evil.yaml", "removed"]],
    ],
    [
      "a path renderedPath never writes",
      (files: Map<string, string>) => files.set("rendered/west/shop/not-a-rendered-file", "x: 1\n"),
      [["rendered/west/shop/not-a-rendered-file", "removed"]],
    ],
  ] as const)("%s: repaired, and never in what is applied", (_name, tamper, expected) => {
    const files = new Map(honest.files);
    tamper(files);
    const { state, repair } = branch(files);
    expect(
      [...repair].map(([path, text]) => [path, text === null ? "removed" : "written again"]).sort(),
    ).toEqual([...expected].map((e) => [...e]).sort());
    for (const [path, text] of repair) if (text !== null) expect(text).toBe(honest.files.get(path));
    expect(state.render.objects.map((o) => [o.path, o.text])).toEqual(
      honest.render.objects.map((o) => [o.path, o.text]),
    );
    expect(state.files).toEqual(honest.files);
  });

  it("takes a recorded division only for the fleet's own clusters and workloads", () => {
    const files = new Map(honest.files);
    const app = files.get(appStatusPath("web")) ?? "";
    const tampered = app.replace(/( {6,})east: 2\n/, "$1east: 2\n$1evil: 9\n");
    expect(tampered).not.toBe(app);
    files.set(appStatusPath("web"), tampered);
    const { state, repair } = branch(files);
    expect([...repair]).toEqual([[appStatusPath("web"), app]]);
    expect(state.render.decisions.map((d) => d.decision.clusters)).toEqual(
      honest.render.decisions.map((d) => d.decision.clusters),
    );
    expect(state.render.objects.some((o) => o.cluster === "evil")).toBe(false);
  });
});
