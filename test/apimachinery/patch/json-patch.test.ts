import { describe, expect, it } from "vitest";
import type { Json } from "../../../src/apimachinery/json.js";
import { applyJsonPatch } from "../../../src/apimachinery/patch/json-patch.js";
import type { JsonPatchOperation } from "../../../src/model/types.js";

const deployment: Json = {
  spec: { template: { spec: { containers: [{ name: "web", env: [{ name: "A", value: "1" }] }] } } },
};
const env = "/spec/template/spec/containers/0/env";

describe("JSON patch (RFC 6902)", () => {
  it.each<[string, JsonPatchOperation[], Json]>([
    [
      "add appends with -",
      [{ op: "add", path: `${env}/-`, value: { name: "B", value: "2" } }],
      {
        spec: {
          template: {
            spec: {
              containers: [
                {
                  name: "web",
                  env: [
                    { name: "A", value: "1" },
                    { name: "B", value: "2" },
                  ],
                },
              ],
            },
          },
        },
      },
    ],
    [
      "replace",
      [{ op: "replace", path: `${env}/0/value`, value: "9" }],
      { spec: { template: { spec: { containers: [{ name: "web", env: [{ name: "A", value: "9" }] }] } } } },
    ],
    [
      "remove",
      [{ op: "remove", path: `${env}/0` }],
      { spec: { template: { spec: { containers: [{ name: "web", env: [] }] } } } },
    ],
    [
      "copy and move",
      [
        { op: "copy", from: "/spec/template/spec/containers/0/name", path: "/metadata" },
        { op: "move", from: "/metadata", path: "/kind" },
      ],
      {
        spec: { template: { spec: { containers: [{ name: "web", env: [{ name: "A", value: "1" }] }] } } },
        kind: "web",
      },
    ],
    [
      "test then replace",
      [
        { op: "test", path: `${env}/0/name`, value: "A" },
        { op: "replace", path: `${env}/0/name`, value: "Z" },
      ],
      { spec: { template: { spec: { containers: [{ name: "web", env: [{ name: "Z", value: "1" }] }] } } } },
    ],
  ])("%s", (_name, operations, expected) => {
    expect(applyJsonPatch(deployment, operations)).toEqual({ ok: true, value: expected });
  });

  it.each<[string, JsonPatchOperation[], string]>([
    [
      "a path that does not exist",
      [{ op: "replace", path: "/spec/replicas/x", value: 1 }],
      "operation 1 (replace /spec/replicas/x): the path does not exist in the object",
    ],
    [
      "a failed test",
      [{ op: "test", path: `${env}/0/value`, value: "2" }],
      `operation 1 (test ${env}/0/value): the test failed: the value differs`,
    ],
    [
      "an index past the end",
      [{ op: "add", path: `${env}/5`, value: {} }],
      `operation 1 (add ${env}/5): the list index is past the end of the list`,
    ],
  ])("refuses %s", (_name, operations, error) => {
    expect(applyJsonPatch(deployment, operations)).toEqual({ ok: false, error });
  });

  it("does not modify the document", () => {
    const before = JSON.stringify(deployment);
    applyJsonPatch(deployment, [{ op: "remove", path: env }]);
    expect(JSON.stringify(deployment)).toBe(before);
  });
});
