import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { JsonMap } from "../../src/apimachinery/json.js";
import { prunedBySchema } from "../../src/sim/api/schema-pruning.js";
import { type SimulatedMember, startMember } from "../../src/sim/member-server.js";
import { customResourceDefinition, declaredSpec } from "../helpers/crd.js";
import { memberRequest } from "../helpers/member.js";

// A custom resource's fields pruned by its CRD's structural schema, as kube-apiserver prunes them
// (the answers below are a real server's, for the same CRD and bodies).

const SCHEMA = declaredSpec({
  any: { type: "object", additionalProperties: true },
  template: {
    type: "object",
    "x-kubernetes-embedded-resource": true,
    properties: { spec: { type: "object" } },
  },
});

const WIDGET = (name: string): JsonMap => ({
  apiVersion: "example.com/v1",
  kind: "Widget",
  metadata: { name, bogus: 1 },
  spec: {
    size: 1,
    color: "red",
    tags: [{ k: "a", v: "b" }],
    labels: { x: "y" },
    free: { deep: { thing: 1 } },
    any: { what: { ever: 1 } },
    template: { apiVersion: "v1", kind: "Pod", metadata: { name: "p" }, spec: { x: 1 }, other: 1 },
  },
  extra: 1,
});

describe("pruning by a structural schema", () => {
  it("drops what no property, additionalProperties or preserve-unknown-fields keeps, metadata first", () => {
    const { paths, declared } = prunedBySchema(SCHEMA, WIDGET("w"));
    expect(paths).toEqual([
      "metadata.bogus",
      "extra",
      "spec.color",
      "spec.tags[0].v",
      "spec.template.other",
      "spec.template.spec.x",
    ]);
    expect(declared).toEqual({
      apiVersion: "example.com/v1",
      kind: "Widget",
      metadata: { name: "w" },
      spec: {
        any: { what: { ever: 1 } },
        free: { deep: { thing: 1 } },
        labels: { x: "y" },
        size: 1,
        tags: [{ k: "a" }],
        template: { apiVersion: "v1", kind: "Pod", metadata: { name: "p" }, spec: {} },
      },
    });
  });

  it("prunes every field of an object whose schema names none, and keeps all under preserve-unknown-fields", () => {
    expect(
      prunedBySchema({ type: "object" }, { apiVersion: "a/v1", kind: "K", spec: { a: 1 } }).paths,
    ).toEqual(["spec"]);
    expect(
      prunedBySchema({ type: "object", "x-kubernetes-preserve-unknown-fields": true }, { spec: { a: 1 } })
        .paths,
    ).toEqual([]);
  });
});

describe("a custom resource over HTTP", () => {
  let member: SimulatedMember;
  const call = (method: string, path: string, body?: unknown, contentType?: string) =>
    memberRequest(member.url, method, path, body, contentType);
  const WIDGETS = "/apis/example.com/v1/namespaces/default/widgets";

  beforeAll(async () => {
    member = await startMember({ name: "east" });
    await call(
      "POST",
      "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
      customResourceDefinition({
        group: "example.com",
        kind: "Widget",
        plural: "widgets",
        singular: "widget",
        schema: SCHEMA,
      }),
    );
  });
  afterAll(() => member.close());

  it("Strict refuses the fields the schema prunes, naming each", async () => {
    const answer = await call("POST", `${WIDGETS}?fieldValidation=Strict`, WIDGET("w1"));
    expect([answer.status, answer.body.message]).toEqual([
      400,
      'Widget in version "v1" cannot be handled as a Widget: strict decoding error: unknown field "metadata.bogus", unknown field "extra", unknown field "spec.color", unknown field "spec.tags[0].v", unknown field "spec.template.other", unknown field "spec.template.spec.x"',
    ]);
  });

  it("Warn drops them with a warning each, and stores what the schema keeps", async () => {
    const answer = await call("POST", WIDGETS, WIDGET("w2"));
    expect(answer.status).toBe(201);
    expect(answer.warning?.split(", 299").length).toBe(6);
    expect(answer.body).not.toHaveProperty("extra");
    expect(answer.body.spec).toMatchObject({ size: 1, tags: [{ k: "a" }], free: { deep: { thing: 1 } } });
  });

  it("refuses a server-side apply of a field the schema does not declare with the API server's 500", async () => {
    const config = {
      apiVersion: "example.com/v1",
      kind: "Widget",
      metadata: { name: "w3" },
      spec: { size: 1, color: "red" },
    };
    const answer = await call(
      "PATCH",
      `${WIDGETS}/w3?fieldManager=x`,
      JSON.stringify(config),
      "application/apply-patch+yaml",
    );
    expect([answer.status, answer.body.message]).toEqual([
      500,
      "failed to create typed patch object (/w3; example.com/v1, Kind=Widget): .spec.color: field not declared in schema",
    ]);
    // Several, metadata's first, then in the configuration's order, one per line.
    const many = { ...WIDGET("w5"), metadata: { name: "w5", bogus: 1 } };
    const listed = await call(
      "PATCH",
      `${WIDGETS}/w5?fieldManager=x`,
      JSON.stringify(many),
      "application/apply-patch+yaml",
    );
    expect([listed.status, listed.body.message]).toEqual([
      500,
      "failed to create typed patch object (/w5; example.com/v1, Kind=Widget): errors:\n  .metadata.bogus: field not declared in schema\n  .spec.color: field not declared in schema\n  .spec.tags[0].v: field not declared in schema\n  .spec.template.spec.x: field not declared in schema\n  .spec.template.other: field not declared in schema\n  .extra: field not declared in schema",
    ]);
  });
});
