import { describe, expect, it } from "vitest";
import type { Json } from "../../../src/apimachinery/json.js";
import { type MapSchema, schemaFor } from "../../../src/apimachinery/patch/patch-schema.js";
import { applyStrategicMergePatch } from "../../../src/apimachinery/patch/strategic-merge.js";

const deployment = schemaFor("apps", "Deployment");
const pod = (containers: Json, extra: Record<string, Json> = {}): Json => ({
  spec: { template: { spec: { containers, ...extra } } },
});
const apply = (original: Json, patch: Json) => applyStrategicMergePatch(original, patch, deployment);

describe("strategic merge patch", () => {
  it.each<[string, Json, Json, Json]>([
    [
      "null deletes a key",
      { metadata: { labels: { a: "1", b: "2" } } },
      { metadata: { labels: { a: null } } },
      { metadata: { labels: { b: "2" } } },
    ],
    [
      "containers merge by name; new ones lead in patch order",
      pod([
        { name: "a", image: "x" },
        { name: "b", image: "y" },
      ]),
      pod([
        { name: "c", image: "z" },
        { name: "a", image: "x2" },
      ]),
      pod([
        { name: "c", image: "z" },
        { name: "a", image: "x2" },
        { name: "b", image: "y" },
      ]),
    ],
    [
      "env merges by name, ports by containerPort",
      pod([{ name: "a", env: [{ name: "A", value: "1" }], ports: [{ containerPort: 80 }] }]),
      pod([{ name: "a", env: [{ name: "B", value: "2" }], ports: [{ containerPort: 80, name: "http" }] }]),
      pod([
        {
          name: "a",
          env: [
            { name: "B", value: "2" },
            { name: "A", value: "1" },
          ],
          ports: [{ containerPort: 80, name: "http" }],
        },
      ]),
    ],
    [
      "tolerations are replaced whole",
      pod([], { tolerations: [{ key: "a", operator: "Exists" }] }),
      pod([], { tolerations: [{ key: "b", operator: "Exists" }] }),
      pod([], { tolerations: [{ key: "b", operator: "Exists" }] }),
    ],
    [
      "args are replaced whole",
      pod([{ name: "a", args: ["1", "2"] }]),
      pod([{ name: "a", args: ["3"] }]),
      pod([{ name: "a", args: ["3"] }]),
    ],
    [
      "$patch: delete removes a list element by merge key",
      pod([{ name: "a" }, { name: "b" }]),
      pod([{ name: "a", $patch: "delete" }]),
      pod([{ name: "b" }]),
    ],
    [
      "$patch: replace replaces a map",
      { spec: { selector: { matchLabels: { a: "1", b: "2" } } } },
      { spec: { selector: { matchLabels: { $patch: "replace", c: "3" } } } },
      { spec: { selector: { matchLabels: { c: "3" } } } },
    ],
    [
      "$setElementOrder orders the merged list",
      pod([{ name: "a" }, { name: "b" }, { name: "c" }]),
      {
        spec: {
          template: {
            spec: {
              $setElementOrder: null,
              "$setElementOrder/containers": [{ name: "c" }, { name: "a" }],
              containers: [{ name: "c", image: "new" }],
            },
          },
        },
      },
      null,
    ],
    [
      "finalizers merge as a set",
      { metadata: { finalizers: ["b", "a"] } },
      { metadata: { finalizers: ["c", "a"] } },
      { metadata: { finalizers: ["c", "b", "a"] } },
    ],
    [
      "$deleteFromPrimitiveList wins over an add of the same value (applied last)",
      { metadata: { finalizers: ["c"] } },
      { metadata: { finalizers: ["c", "b"], "$deleteFromPrimitiveList/finalizers": ["c"] } },
      { metadata: { finalizers: ["b"] } },
    ],
    [
      "$retainKeys drops the keys it does not list",
      { spec: { strategy: { type: "RollingUpdate", rollingUpdate: { maxSurge: 1 } } } },
      { spec: { strategy: { $retainKeys: ["type"], type: "Recreate" } } },
      { spec: { strategy: { type: "Recreate" } } },
    ],
    [
      "a value of another type replaces the original",
      { spec: { replicas: "3" } },
      { spec: { replicas: 3 } },
      { spec: { replicas: 3 } },
    ],
    [
      "a new subtree loses its nulls and its directive maps",
      {},
      { spec: { a: { b: null, c: 1, d: { $patch: "replace", e: 1 } } } },
      { spec: { a: { c: 1 } } },
    ],
  ])("%s", (_name, original, patch, expected) => {
    const result = apply(original, patch);
    if (expected === null) {
      // A key "$setElementOrder" names no list: kubectl refuses it.
      expect(result).toEqual({
        ok: false,
        error: "invalid patch directive $setElementOrder: it must be $setElementOrder/<list>",
      });
      return;
    }
    expect(result).toEqual({ ok: true, value: expected });
  });

  it("orders by $setElementOrder as kubectl does: named items by the directive, interleaved with the rest by the original order", () => {
    // kubectl 1.32 gives b, c, a for this patch (b came before c in the original).
    const result = apply(pod([{ name: "a" }, { name: "b" }, { name: "c" }]), {
      spec: {
        template: {
          spec: {
            "$setElementOrder/containers": [{ name: "c" }, { name: "a" }],
            containers: [{ name: "c", image: "new" }],
          },
        },
      },
    });
    expect(result).toEqual({
      ok: true,
      value: pod([{ name: "b" }, { name: "c", image: "new" }, { name: "a" }]),
    });
  });

  it("replaces lists of custom resources whole (no schema, as kustomize does)", () => {
    const cloneSet = {
      spec: { template: { spec: { containers: [{ name: "a", image: "x" }, { name: "b" }] } } },
    };
    const patch = { spec: { template: { spec: { containers: [{ name: "a", image: "y" }] } } } };
    expect(applyStrategicMergePatch(cloneSet, patch, schemaFor("apps.kruise.io", "CloneSet"))).toEqual({
      ok: true,
      value: patch,
    });
  });

  it.each<[string, Json, string]>([
    [
      "a list element without its merge key",
      pod([{ image: "x" }]),
      'list item {"image":"x"} does not contain the merge key "name"',
    ],
    [
      "$patch: merge in a list",
      pod([{ name: "a", $patch: "merge" }]),
      "merging lists cannot yet be specified in the patch",
    ],
    [
      "an unknown directive value",
      { spec: { selector: { $patch: "sideways" } } },
      'invalid patch directive "sideways" in a mapping',
    ],
    [
      "a $setElementOrder that contradicts the patch",
      {
        spec: {
          template: { spec: { "$setElementOrder/containers": [{ name: "b" }], containers: [{ name: "a" }] } },
        },
      },
      "the order of the patch list does not match $setElementOrder/containers",
    ],
  ])("refuses %s", (_name, patch, error) => {
    const original = {
      spec: { selector: { matchLabels: { a: "1" } }, template: { spec: { containers: [{ name: "a" }] } } },
    };
    expect(apply(original, patch)).toEqual({ ok: false, error });
  });

  it.each<[string, Json]>([
    ["a list", [{ spec: {} }]],
    ["a string", "spec"],
    ["null", null],
  ])("refuses a patch that is %s: a strategic merge patch is a mapping", (_name, patch) => {
    expect(apply({ spec: {} }, patch)).toEqual({
      ok: false,
      error: "a strategic merge patch must be a mapping",
    });
  });

  it("refuses to merge a list of mappings its schema gives no merge key", () => {
    const schema: MapSchema = { kind: "map", fields: { items: { kind: "list", strategy: "merge" } } };
    const result = applyStrategicMergePatch({ items: [{ a: 1 }] }, { items: [{ a: 2 }] }, schema);
    expect(result).toEqual({ ok: false, error: "cannot merge a list of mappings without a merge key" });
    // A list of scalars with the same schema merges as a set.
    expect(applyStrategicMergePatch({ items: ["a"] }, { items: ["b", "a"] }, schema)).toEqual({
      ok: true,
      value: { items: ["b", "a"] },
    });
  });

  it("kustomize copies a new list its schema replaces as written, and cleans one it merges", () => {
    const schema: MapSchema = {
      kind: "map",
      fields: {
        replaced: { kind: "list", strategy: "replace" },
        merged: { kind: "list", strategy: "merge", mergeKey: "name" },
      },
    };
    const items = [
      { name: "a", gone: null },
      { name: "b", $patch: "delete" },
    ];
    const result = applyStrategicMergePatch({}, { replaced: items, merged: items }, schema, "kustomize");
    expect(result).toEqual({ ok: true, value: { replaced: items, merged: [{ name: "a" }] } });
  });

  it("kustomize refuses a patch list of scalars where the object's list holds mappings (it would empty the list)", () => {
    const result = applyStrategicMergePatch(pod([{ name: "a" }]), pod(["x"]), deployment, "kustomize");
    expect(result).toEqual({ ok: false, error: "list items must all be mappings" });
  });

  it("never modifies its inputs", () => {
    const original = pod([{ name: "a", env: [{ name: "A", value: "1" }] }]);
    const patch = pod([{ name: "a", env: [{ name: "A", $patch: "delete" }] }]);
    const before = JSON.stringify([original, patch]);
    apply(original, patch);
    expect(JSON.stringify([original, patch])).toBe(before);
  });
});
