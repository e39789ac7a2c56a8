import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  explainInvalidApiVersion,
  explainInvalidKind,
  explainInvalidPathSegmentName,
} from "../../src/apimachinery/names.js";
import { loadFleet } from "../../src/load/load-fleet.js";
import { formatProblem } from "../../src/model/problem.js";
import { parseRenderedPath, renderedPath } from "../../src/model/rendered-path.js";
import { renderFleet } from "../../src/render/render-fleet.js";
import { minimalFleetWith } from "../helpers/minimal-fleet.js";

/**
 * M1 (security audit): `core/v1` and `v1`, and dots in groups, kinds and names, let two objects of
 * two apps share one file on the status branch, so adding an app deleted another app's object.
 * Now the path is injective for every object validation accepts, and the old spellings are errors.
 */

describe("M1: rendered paths never collide", () => {
  it("apiVersion core/v1 (the audit's hijack of another app's ConfigMap) is refused", () => {
    const result = loadFleet(
      minimalFleetWith({
        "apps/other/app.yaml":
          "apiVersion: gitfleet.io/v1alpha1\nkind: App\nmetadata:\n  name: other\nspec:\n  namespace: shop\n",
        "apps/other/cm.yaml":
          "apiVersion: core/v1\nkind: ConfigMap\nmetadata:\n  name: web-config\ndata:\n  k: hijacked\n",
      }),
    );
    expect(result.problems.filter((p) => p.severity === "error").map(formatProblem)).toEqual([
      'apps/other/cm.yaml:1:13: error: /apiVersion: apiVersion "core/v1": the core group has no name; write "v1" [INVALID_NAME]',
      "apps/web/config.yaml:4:9: error: /metadata/name: ConfigMap shop/web-config is already defined at apps/other/cm.yaml:4 (app other); each object may be defined once [DUPLICATE_RESOURCE]",
    ]);
  });

  it("two apps' objects that differ only by dots land in different files", () => {
    const result = loadFleet(
      minimalFleetWith({
        "apps/web/a.yaml":
          "apiVersion: a.b/v1\nkind: Thing\nmetadata:\n  name: c\n---\napiVersion: a/v1\nkind: Thing\nmetadata:\n  name: b.c\n",
        "apps/web/crds.yaml": [
          "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: things.a.b\nspec:\n  group: a.b\n  scope: Namespaced\n  names: {kind: Thing, plural: things}\n  versions:\n    - {name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}}\n",
        ].join(""),
      }),
    );
    const model = result.model;
    if (!model) throw new Error(result.problems.map(formatProblem).join("\n"));
    const paths = renderFleet(model)
      .objects.filter((o) => o.path.includes("Thing"))
      .map((o) => o.path);
    expect(new Set(paths).size).toBe(paths.length);
  });

  // What validation accepts, drawn at random: every distinct identity gets a distinct path.
  const label = fc.stringMatching(/^[a-z0-9]([a-z0-9.-]{0,6}[a-z0-9])?$/);
  const group = fc.oneof(fc.constant(""), label);
  const kind = fc.stringMatching(/^[A-Z][A-Za-z0-9]{0,6}$/);
  const name = fc.oneof(label, fc.stringMatching(/^[A-Za-z0-9 :.]{1,8}$/));
  const namespace = fc.option(fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,4}[a-z0-9])?$/), { nil: undefined });
  const identity = fc.record({ group, kind, namespace, name });

  const validIdentity = (i: { group: string; kind: string; name: string }) =>
    explainInvalidKind(i.kind) === undefined &&
    explainInvalidApiVersion(i.group ? `${i.group}/v1` : "v1") === undefined &&
    explainInvalidPathSegmentName(i.name) === undefined &&
    i.name.trim() === i.name;

  it("reads back as the identity it names, and refuses paths it never writes (property)", () => {
    fc.assert(
      fc.property(identity, (i) => {
        fc.pre(validIdentity(i));
        expect(parseRenderedPath(renderedPath({ cluster: "c", ...i }))).toEqual({ cluster: "c", ...i });
      }),
      { numRuns: 1000 },
    );
    for (const path of [
      "rendered/c/shop/apps.Deployment.yaml",
      "rendered/c/shop/apps.deployment.web.yaml",
      "rendered/c/shop/Deployment.web.yaml",
      "rendered/c/shop/apps.Deployment.web.yml",
      "rendered/c/apps.Deployment.web.yaml",
      "rendered/c/shop/x/apps.Deployment.web.yaml",
      "status/c/shop/apps.Deployment.web.yaml",
    ])
      expect(parseRenderedPath(path), path).toBeUndefined();
  });

  it("is injective over every identity validation accepts (property)", () => {
    fc.assert(
      fc.property(fc.array(identity, { maxLength: 60 }), (identities) => {
        const valid = identities.filter(
          (i) =>
            explainInvalidKind(i.kind) === undefined &&
            explainInvalidApiVersion(i.group ? `${i.group}/v1` : "v1") === undefined &&
            explainInvalidPathSegmentName(i.name) === undefined &&
            i.name.trim() === i.name,
        );
        const byPath = new Map<string, string>();
        for (const i of valid) {
          const key = JSON.stringify([i.group, i.kind, i.namespace ?? null, i.name]);
          const path = renderedPath({ cluster: "c", ...i });
          const earlier = byPath.get(path);
          if (earlier !== undefined) expect(earlier).toBe(key);
          byPath.set(path, key);
        }
      }),
      { numRuns: 500 },
    );
  });
});
