import { describe, expect, it } from "vitest";
import type { Json } from "../../../src/apimachinery/json.js";
import { schemaFor } from "../../../src/apimachinery/patch/patch-schema.js";
import type { Overriders } from "../../../src/model/types.js";
import { applyOverriders } from "../../../src/render/override/apply-overriders.js";

const podSpecPath = ["spec", "template", "spec"];
const deployment = (containers: Json[], metadata: Json = { name: "web" }): Json => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata,
  spec: {
    template: {
      spec: { containers, initContainers: [{ name: "migrate", image: "ghcr.io/example/migrate:1" }] },
    },
  },
});
const target = (object: Json) => ({ object, podSpecPath, schema: schemaFor("apps", "Deployment") });

describe("applying a rule's overriders", () => {
  it.each<[string, Json, Overriders, Json]>([
    [
      "image registry for every container, not init containers",
      deployment([
        { name: "web", image: "ghcr.io/example/web:1.4" },
        { name: "log", image: "docker.io/fluent/fluent-bit:3" },
      ]),
      {
        imageOverrider: [
          { component: "Registry", operator: "replace", value: "harbor.idc.example.com:5000" },
        ],
      },
      deployment([
        { name: "web", image: "harbor.idc.example.com:5000/example/web:1.4" },
        { name: "log", image: "harbor.idc.example.com:5000/fluent/fluent-bit:3" },
      ]),
    ],
    [
      "image at a predicate path only",
      deployment([
        { name: "web", image: "web:1" },
        { name: "log", image: "log:1" },
      ]),
      {
        imageOverrider: [
          {
            predicate: { path: "/spec/template/spec/containers/1/image" },
            component: "Tag",
            operator: "replace",
            value: "2",
          },
        ],
      },
      deployment([
        { name: "web", image: "web:1" },
        { name: "log", image: "log:2" },
      ]),
    ],
    [
      "command and args per container: add appends, remove deletes every equal element",
      deployment([{ name: "web", image: "web:1", args: ["--a", "--b", "--a"] }]),
      {
        commandOverrider: [{ containerName: "web", operator: "add", value: ["/bin/web"] }],
        argsOverrider: [
          { containerName: "web", operator: "remove", value: ["--a"] },
          { containerName: "nope", operator: "add", value: ["x"] },
        ],
      },
      deployment([{ name: "web", image: "web:1", args: ["--b"], command: ["/bin/web"] }]),
    ],
    [
      "labels: add creates and upserts, replace only existing keys, remove deletes",
      deployment([], { name: "web", labels: { tier: "front", old: "x" } }),
      {
        labelsOverrider: [
          { operator: "add", value: { region: "us-east", tier: "edge" } },
          { operator: "replace", value: { absent: "y" } },
          { operator: "remove", value: { old: "" } },
        ],
      },
      deployment([], { name: "web", labels: { tier: "edge", region: "us-east" } }),
    ],
    [
      "annotations map is created when missing",
      deployment([]),
      { annotationsOverrider: [{ operator: "add", value: { "shop.example.com/cdn": "eu" } }] },
      deployment([], { name: "web", annotations: { "shop.example.com/cdn": "eu" } }),
    ],
    [
      "jsonPatch runs after the image change; mergePatch last, by container name",
      deployment([{ name: "web", image: "web:1", env: [{ name: "A", value: "1" }] }]),
      {
        imageOverrider: [{ component: "Tag", operator: "replace", value: "2" }],
        jsonPatch: [
          {
            op: "add",
            path: "/spec/template/spec/containers/0/env/-",
            value: { name: "CDN_ORIGIN", value: "https://cdn-eu.example.com" },
          },
        ],
        mergePatch: {
          spec: {
            template: {
              spec: { containers: [{ name: "web", resources: { requests: { memory: "16Gi" } } }] },
            },
          },
        },
      },
      deployment([
        {
          name: "web",
          image: "web:2",
          env: [
            { name: "A", value: "1" },
            { name: "CDN_ORIGIN", value: "https://cdn-eu.example.com" },
          ],
          resources: { requests: { memory: "16Gi" } },
        },
      ]),
    ],
  ])("%s", (_name, object, overriders, expected) => {
    expect(applyOverriders(target(object), overriders)).toEqual({ ok: true, value: expected });
  });

  it.each<[string, Overriders, string]>([
    [
      "a JSON patch path that does not exist",
      { jsonPatch: [{ op: "replace", path: "/spec/replicas/x", value: 1 }] },
      "jsonPatch: operation 1 (replace /spec/replicas/x): the path does not exist in the object",
    ],
    [
      "an image change that breaks the reference",
      { imageOverrider: [{ component: "Repository", operator: "remove" }] },
      'imageOverrider[0]: remove Repository "" on "web:1" gives an invalid image: repository "" must be lowercase path components',
    ],
    [
      "a predicate path without an image",
      {
        imageOverrider: [
          { predicate: { path: "/spec/nothing" }, component: "Tag", operator: "replace", value: "2" },
        ],
      },
      "imageOverrider[0]: no image (a string) at /spec/nothing",
    ],
    [
      "a merge patch of the wrong shape",
      { mergePatch: { spec: { template: { spec: { containers: [{ image: "x" }] } } } } },
      'mergePatch: list item {"image":"x"} does not contain the merge key "name"',
    ],
  ])("fails with the overrider named: %s", (_name, overriders, error) => {
    expect(applyOverriders(target(deployment([{ name: "web", image: "web:1" }])), overriders)).toEqual({
      ok: false,
      error,
    });
  });

  it("leaves kinds without a pod spec untouched by image, command and args overriders", () => {
    const configMap: Json = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "c" },
      data: { image: "web:1" },
    };
    const result = applyOverriders(
      { object: configMap, podSpecPath: undefined, schema: schemaFor("", "ConfigMap") },
      { imageOverrider: [{ component: "Tag", operator: "replace", value: "2" }] },
    );
    expect(result).toEqual({ ok: true, value: configMap });
  });
});
