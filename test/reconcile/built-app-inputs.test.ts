import { describe, expect, it } from "vitest";
import { createParseCache } from "../../src/load/load-fleet.js";
import { ALL } from "../../src/reconcile/affected-apps.js";
import { EMPTY_STATE, reconcileStep } from "../../src/reconcile/reconcile-step.js";
import { minimalFleetWith } from "../helpers/minimal-fleet.js";

// A built app may read files outside its own directory (a shared kustomize base elsewhere in the
// repo): a change there re-renders it in an incremental reconcile, as a full render would.

const base = (image: string) => ({
  "apps/web/deployment.yaml": null,
  "apps/web/config.yaml": null,
  "apps/web/kustomization.yaml": "resources: [../../shared/base]\nnamePrefix: shop-\n",
  "shared/base/kustomization.yaml": "resources: [deployment.yaml]\n",
  "shared/base/deployment.yaml": `apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: "${image}"}]
`,
});

describe("incremental reconcile of built apps", () => {
  it("renders a kustomize app again when a base outside its directory changes", () => {
    const commit = (n: number) => n.toString(16).padStart(40, "a");
    const cache = createParseCache();
    const first = minimalFleetWith(base("ghcr.io/example/web:1.0.0"));
    const start = reconcileStep(EMPTY_STATE, {
      sourceCommit: commit(0),
      tree: first,
      changedPaths: ALL,
      cache,
    });
    expect(start.valid).toBe(true);
    const next = minimalFleetWith(base("ghcr.io/example/web:2.0.0"));
    const changedPaths = ["shared/base/deployment.yaml"];
    const incremental = reconcileStep(start.state, {
      sourceCommit: commit(1),
      tree: next,
      changedPaths,
      cache,
    });
    const full = reconcileStep(start.state, { sourceCommit: commit(1), tree: next, changedPaths: ALL });
    expect(Object.fromEntries(incremental.changes)).toEqual(Object.fromEntries(full.changes));
    const rendered = [...incremental.changes].filter(([path]) =>
      path.endsWith("apps.Deployment.shop-web.yaml"),
    );
    expect(rendered.length).toBe(2);
    for (const [, text] of rendered) expect(text).toContain("ghcr.io/example/web:2.0.0");
  });
});
