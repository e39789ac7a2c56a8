import { readFileSync } from "node:fs";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { JsonMap } from "../../src/apimachinery/json.js";
import { defaultedBySchema } from "../../src/sim/api/schema-defaults.js";
import { schemaErrors } from "../../src/sim/api/schema-validation.js";
import { errorText } from "../../src/sim/field-error.js";
import { type SimulatedMember, startMember } from "../../src/sim/member-server.js";
import { comparableAnswer } from "../helpers/api-answer.js";
import { memberRequest } from "../helpers/member.js";
import {
  MERGE,
  NARROWER_SIZE,
  sendWidgetRequest,
  WIDGET_CRD,
  WIDGET_CRD_PATH,
  WIDGET_NAMESPACE,
  WIDGET_REQUESTS,
  WIDGET_SCHEMA,
  WIDGETS,
  widget,
} from "../helpers/widget-schema.js";

// A custom resource's writes defaulted and validated by its CRD's schema, held to what a real
// kube-apiserver answered to the same requests (recorded by the second tier's kubectl-parity test).

const recorded = JSON.parse(
  readFileSync(new URL("../golden/crd-schema-answers.json", import.meta.url), "utf8"),
) as Record<string, { status: number; body: unknown }>;

let member: SimulatedMember;
beforeAll(async () => {
  member = await startMember({ name: "schema" });
});
afterAll(async () => {
  await member?.close();
});

describe("a custom resource's writes, as a real API server answered them", () => {
  it(`answers all ${WIDGET_REQUESTS.length} recorded requests as the real server did`, async () => {
    expect(Object.keys(recorded).sort()).toEqual(WIDGET_REQUESTS.map((r) => r.name).sort());
    await memberRequest(member.url, "POST", "/api/v1/namespaces", { metadata: { name: WIDGET_NAMESPACE } });
    await memberRequest(
      member.url,
      "POST",
      "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
      WIDGET_CRD,
    );
    const differing: string[] = [];
    for (const request of WIDGET_REQUESTS) {
      const answer = await sendWidgetRequest((...args) => memberRequest(member.url, ...args), request);
      const ours = { status: answer.status, body: comparableAnswer(answer.body) };
      if (JSON.stringify(ours) !== JSON.stringify(recorded[request.name]))
        differing.push(
          `${request.name}\n  real: ${JSON.stringify(recorded[request.name])}\n  ours: ${JSON.stringify(ours)}`,
        );
    }
    expect(differing).toEqual([]);
    // The record holds both answers: refusals and objects stored.
    const statuses = Object.values(recorded).map((a) => a.status);
    expect(statuses.filter((s) => s === 422).length).toBeGreaterThan(20);
    expect(statuses.filter((s) => s < 300).length).toBeGreaterThan(10);
  });

  it("stores nothing a refused write carried, and the defaults of what it took", async () => {
    const get = (name: string) => memberRequest(member.url, "GET", `${WIDGETS}/${name}`);
    expect((await get("size-below-minimum")).status).toBe(404);
    expect((await get("dry-run-invalid")).status).toBe(404);
    expect((await get("dry-run-valid")).status).toBe(404);
    const stored = await get("null-defaulted");
    expect(stored.body.spec).toEqual({ size: 5, color: "red", nested: { mode: "auto", level: 1 } });
    const valid = await get("valid");
    // The merge patch that set nested to null got its default back; the refused ones changed nothing.
    expect(valid.body.spec).toEqual({ size: 6, color: "red", nested: { mode: "auto", level: 1 } });
  });
});

describe("a CRD whose schema changes", () => {
  it("ratchets what a stored object already held: another field changes, the held value may not change to another refused one", async () => {
    const send = (method: string, path: string, body?: unknown, type?: string) =>
      memberRequest(member.url, method, path, body, type);
    expect((await send("POST", WIDGETS, widget("ratchet", { size: 9 }))).status).toBe(201);
    expect((await send("PATCH", WIDGET_CRD_PATH, NARROWER_SIZE, "application/json-patch+json")).status).toBe(
      200,
    );
    // The narrowed schema is served at once: a new object of size 9 is refused.
    expect((await send("POST", `${WIDGETS}?dryRun=All`, widget("probe", { size: 9 }))).status).toBe(422);
    expect((await send("PATCH", `${WIDGETS}/ratchet`, { spec: { color: "blue" } }, MERGE)).status).toBe(200);
    const changed = await send("PATCH", `${WIDGETS}/ratchet`, { spec: { size: 10 } }, MERGE);
    expect([changed.status, changed.body.message]).toEqual([
      422,
      'Widget.parity.example.com "ratchet" is invalid: spec.size: Invalid value: 10: spec.size in body should be less than or equal to 8',
    ]);
    expect((await send("PATCH", `${WIDGETS}/ratchet`, { spec: { size: 8 } }, MERGE)).status).toBe(200);
  });
});

describe("schema validation", () => {
  const object = (spec: unknown): JsonMap =>
    ({ apiVersion: "parity.example.com/v1", kind: "Widget", spec }) as JsonMap;
  const errors = (spec: unknown, old?: unknown) =>
    schemaErrors(WIDGET_SCHEMA, object(spec), old === undefined ? undefined : object(old)).map(errorText);

  it.each([
    ["an unchanged invalid value is ratcheted", { size: 0 }, { size: 0 }, []],
    [
      "a changed one is not",
      { size: 0 },
      { size: 11 },
      ["spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1"],
    ],
    [
      "an invalid value beside an unchanged one is still found",
      { size: 0, name: "A" },
      { size: 0, name: "B" },
      ['spec.name: Invalid value: "A": spec.name in body should be at least 3 chars long'],
    ],
    [
      "a list-type map item is found again by its key, wherever it moved",
      {
        size: 5,
        ports: [
          { name: "b", port: 1 },
          { name: "a", port: "x" },
        ],
      },
      { size: 5, ports: [{ name: "a", port: "x" }] },
      [],
    ],
    [
      "an item of another list is not",
      { size: 5, levels: [1, 9] },
      { size: 5, levels: [9] },
      ["spec.levels[1]: Invalid value: 9: spec.levels[1] in body should be less than or equal to 5"],
    ],
    [
      "duplicates the stored object held already are not reported",
      { size: 5, tags: ["a", "a", "b"] },
      { size: 5, tags: ["a", "a"] },
      [],
    ],
    [
      "duplicates a valid stored object did not hold are",
      { size: 5, tags: ["a", "a"] },
      { size: 5, tags: ["a"] },
      ['spec.tags[1]: Duplicate value: "a"'],
    ],
  ] as const)("%s", (_what, spec, old, expected) => {
    expect(errors(spec, old)).toEqual(expected);
  });

  const DEFAULTS = { color: "red", nested: { mode: "auto", level: 1 } };
  it.each([
    [
      "a null where the schema holds none and has no default is dropped",
      { size: 1, flag: null },
      { size: 1, ...DEFAULTS },
    ],
    [
      "a nullable field keeps its null",
      { size: 1, optional: null },
      { size: 1, optional: null, ...DEFAULTS },
    ],
    [
      "a null where the schema has a default takes it",
      { size: 1, color: null, nested: null },
      { size: 1, ...DEFAULTS },
    ],
    [
      "a given value is kept, its siblings defaulted",
      { size: 1, color: "blue", nested: { level: 3 } },
      { size: 1, color: "blue", nested: { mode: "auto", level: 3 } },
    ],
    [
      "list items are defaulted",
      { size: 1, ports: [{ name: "a" }, { name: "b", port: 81 }] },
      {
        size: 1,
        ...DEFAULTS,
        ports: [
          { name: "a", port: 80 },
          { name: "b", port: 81 },
        ],
      },
    ],
  ] as const)("defaults: %s", (_what, spec, expected) => {
    const given = object(structuredClone(spec));
    expect(defaultedBySchema(WIDGET_SCHEMA, given).spec).toEqual(expected);
    // The object given is left as it was.
    expect(given.spec).toEqual(spec);
  });
});

describe("what a CRD or a body cannot make the check do", () => {
  const OPEN: JsonMap = {
    type: "object",
    properties: {
      spec: {
        type: "object",
        properties: { name: { type: "string", pattern: "(a+)+$" } },
        "x-kubernetes-preserve-unknown-fields": true,
      },
    },
  };
  const deep = (levels: number, leaf: unknown): JsonMap => {
    let value: unknown = leaf;
    for (let i = 0; i < levels; i++) value = { down: value };
    return value as JsonMap;
  };

  it("a pattern that backtracks in other engines is matched in one pass over a long string", () => {
    const name = `${"a".repeat(100_000)}!`;
    expect(schemaErrors(OPEN, { spec: { name } }).map((e) => e.detail)).toEqual([
      "spec.name in body should match '(a+)+$'",
    ]);
  });

  it("an object 20,000 levels deep where the schema keeps anything is defaulted and compared without recursing into it", () => {
    const before = { spec: { free: deep(20_000, 1) } };
    const after = { spec: { free: deep(20_000, 2) } };
    expect(defaultedBySchema(OPEN, after)).toEqual(after);
    expect(schemaErrors(OPEN, after, before)).toEqual([]);
    expect(schemaErrors(OPEN, before, before)).toEqual([]);
  });

  // The body is level 1; its status (a field the schema keeps whole) opens level 2 and goes on down.
  it.each([
    [999, 201],
    [1000, 201],
    [1001, 400],
  ])(
    "a body nested %i levels deep is answered %i (a simulated member takes 1,000)",
    async (levels, status) => {
      const body = JSON.stringify({ ...widget(`deep-${levels}`, { size: 1 }), status: deep(levels - 1, 1) });
      const answer = await memberRequest(member.url, "POST", WIDGETS, body);
      expect(answer.status).toBe(status);
      if (status === 400)
        expect(answer.body.message).toBe("the request body is nested deeper than 1000 levels");
    },
  );
});

describe("schema defaulting and validation, on any spec", () => {
  // Specs of the Widget's fields with values of any JSON type (most of them wrong), and fields it does not name.
  const FIELDS = Object.keys((WIDGET_SCHEMA.properties as { spec: { properties: JsonMap } }).spec.properties);
  const anySpec = fc.dictionary(
    fc.oneof(fc.constantFrom(...FIELDS), fc.string({ maxLength: 4 })),
    fc.jsonValue({ maxDepth: 3 }),
    {
      maxKeys: 8,
    },
  );
  const widgetOf = (spec: unknown): JsonMap =>
    ({ apiVersion: "parity.example.com/v1", kind: "Widget", spec }) as JsonMap;

  it("defaults once: defaulting what was defaulted changes nothing, and keeps every field given a value", () => {
    fc.assert(
      fc.property(anySpec, (spec) => {
        const once = defaultedBySchema(WIDGET_SCHEMA, widgetOf(spec));
        expect(defaultedBySchema(WIDGET_SCHEMA, once)).toEqual(once);
        // A value given stays: a scalar as it was, an object or a list (which may take defaults inside).
        for (const [key, value] of Object.entries(spec))
          if (value !== null && typeof value !== "object") expect((once.spec as JsonMap)[key]).toEqual(value);
          else if (value !== null) expect(once.spec).toHaveProperty([key]);
      }),
    );
  });

  it("finds only what is under spec (or a number's unnamed range check), and never refuses an update that changes nothing", () => {
    fc.assert(
      fc.property(anySpec, (spec) => {
        const object = defaultedBySchema(WIDGET_SCHEMA, widgetOf(spec));
        for (const error of schemaErrors(WIDGET_SCHEMA, object))
          expect(error.field === "<nil>" || error.field.startsWith("spec")).toBe(true);
        expect(schemaErrors(WIDGET_SCHEMA, object, structuredClone(object))).toEqual([]);
      }),
    );
  });
});
