import { describe, expect, it } from "vitest";
import { groupOf } from "../../src/apimachinery/kinds.js";
import { identityOf } from "../../src/model/identity.js";
import { readHeader } from "../../src/reconcile/restore-state.js";
import { renderFleet } from "../../src/render/render-fleet.js";

import { loadWithCharts, readExampleRepo } from "../helpers/example-repo.js";

describe("reading a rendered file's header", () => {
  it("gives every example object's identity and app, as a full parse does", async () => {
    const model = (await loadWithCharts(await readExampleRepo())).model;
    if (!model) throw new Error("example-repo is invalid");
    const objects = renderFleet(model).objects;
    let read = 0;
    for (const object of objects) {
      const header = readHeader(object.text);
      if (!header) continue;
      read++;
      expect(identityOf(groupOf(header.apiVersion), header.kind, header.namespace, header.name)).toBe(
        object.identity,
      );
      expect(header.app).toBe(object.app);
    }
    // Only files whose metadata holds multi-line or list values fall back to a full parse.
    expect(read).toBeGreaterThan(objects.length * 0.9);
  });

  it.each([
    ["no app label", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata: {}\n"],
    ["not gitfleet's layout", "kind: ConfigMap\n- a\n"],
    ["a list in metadata", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  finalizers:\n  - a\n  name: x\n"],
  ])("declines %s, so that the caller parses the file", (_name, text) => {
    expect(readHeader(text)).toBeUndefined();
  });

  it("reads quoted values", () => {
    const text =
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: "on"\n  namespace: "a: b"\n  labels:\n    gitfleet.io/app: "yes"\ndata: {}\n';
    expect(readHeader(text)).toEqual({
      apiVersion: "v1",
      kind: "ConfigMap",
      name: "on",
      namespace: "a: b",
      app: "yes",
    });
  });
});
