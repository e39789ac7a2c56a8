import { describe, expect, it } from "vitest";
import type { JsonMap } from "../../src/apimachinery/json.js";
import {
  LAST_APPLIED_ANNOTATION,
  redactSecretValues,
  SECRET_DIGEST_ANNOTATION,
  SECRET_KEYS_ANNOTATION,
  secretKeyChanges,
  secretValuesChanged,
} from "../../src/render/secrets.js";

const KEY = new TextEncoder().encode("a-test-digest-key-of-32-bytes-ok");
const secret = (fields: JsonMap, annotations: JsonMap = {}): JsonMap => ({
  apiVersion: "v1",
  kind: "Secret",
  metadata: { name: "db", namespace: "shop", annotations },
  type: "Opaque",
  ...fields,
});
const annotationsOf = (object: JsonMap) =>
  (object.metadata as { annotations: Record<string, string> }).annotations;
const digestOf = (fields: JsonMap) =>
  annotationsOf(redactSecretValues(secret(fields), KEY))[SECRET_DIGEST_ANNOTATION];

describe("a Secret's digest", () => {
  it.each([
    ["a key renamed", { data: { a: "dg==" } }, { data: { b: "dg==" } }],
    ["a key moved from data to stringData", { data: { a: "v" } }, { stringData: { a: "v" } }],
    ["a value changed", { data: { a: "dg==" } }, { data: { a: "dw==" } }],
    ["a key added", { data: { a: "dg==" } }, { data: { a: "dg==", b: "" } }],
    ["a value moved to another key", { data: { a: "dg==", b: "" } }, { data: { a: "", b: "dg==" } }],
  ])("changes with %s", (_case, before, after) => {
    expect(digestOf(before)).toMatch(/^hmac-sha256:[0-9a-f]{64}$/);
    expect(digestOf(after)).not.toBe(digestOf(before));
  });

  it("is the same whatever order the keys are written in", () => {
    expect(digestOf({ data: { a: "dg==", b: "dw==" } })).toBe(digestOf({ data: { b: "dw==", a: "dg==" } }));
  });

  it("keeps no value: not in the object, the keys annotation or kubectl's last-applied copy", () => {
    const redacted = redactSecretValues(
      secret(
        { data: { password: "aHVudGVyMg==" }, stringData: { token: "hunter2" } },
        {
          [LAST_APPLIED_ANNOTATION]: '{"stringData":{"token":"hunter2"}}',
        },
      ),
      KEY,
    );
    const text = JSON.stringify(redacted);
    for (const value of ["hunter2", "aHVudGVyMg=="]) expect(text).not.toContain(value);
    expect(redacted.data).toBeUndefined();
    expect(redacted.stringData).toBeUndefined();
    expect(annotationsOf(redacted)[LAST_APPLIED_ANNOTATION]).toBeUndefined();
    expect(annotationsOf(redacted)[SECRET_KEYS_ANNOTATION]).toMatch(
      /^data\.password=[0-9a-f]{16},stringData\.token=[0-9a-f]{16}$/,
    );
  });
});

describe("what a change did to a Secret's keys", () => {
  const redacted = (fields: JsonMap) => redactSecretValues(secret(fields), KEY);

  it.each([
    ["nothing", { data: { a: "MQ==", b: "Mg==" } }, { data: { a: "MQ==", b: "Mg==" } }, [], [], []],
    ["a key added", { data: { a: "MQ==" } }, { data: { a: "MQ==", c: "Mw==" } }, ["data.c"], [], []],
    ["a key removed", { data: { a: "MQ==", b: "Mg==" } }, { data: { a: "MQ==" } }, [], ["data.b"], []],
    ["a value changed", { data: { a: "MQ==" } }, { data: { a: "OQ==" } }, [], [], ["data.a"]],
    [
      "all at once, each list sorted",
      { data: { z: "MQ==", y: "Mg==", b: "Mw==" }, stringData: { p: "x" } },
      { data: { z: "MA==", b: "Mw==", x: "NA==", c: "NQ==" }, stringData: { p: "y" } },
      ["data.c", "data.x"],
      ["data.y"],
      ["data.z", "stringData.p"],
    ],
    ["every key from none", {}, { data: { b: "Mg==", a: "MQ==" } }, ["data.a", "data.b"], [], []],
    ["every key to none", { data: { b: "Mg==", a: "MQ==" } }, {}, [], ["data.a", "data.b"], []],
  ] as [string, JsonMap, JsonMap, string[], string[], string[]][])(
    "%s",
    (_name, before, after, added, removed, changed) => {
      expect(secretKeyChanges(redacted(before), redacted(after))).toEqual({ added, removed, changed });
    },
  );

  it("reads no keys from an object without the annotation, or with an empty one", () => {
    const empty = { kind: "Secret", metadata: { annotations: { [SECRET_KEYS_ANNOTATION]: "" } } };
    expect(secretKeyChanges({ kind: "Secret" }, empty)).toEqual({ added: [], removed: [], changed: [] });
    expect(secretKeyChanges(empty, redacted({ data: { a: "MQ==" } })).added).toEqual(["data.a"]);
  });

  it("gives a Secret without values a digest and no keys annotation", () => {
    const annotations = annotationsOf(redactSecretValues(secret({}), KEY));
    expect(annotations[SECRET_DIGEST_ANNOTATION]).toMatch(/^hmac-sha256:[0-9a-f]{64}$/);
    expect(Object.keys(annotations)).not.toContain(SECRET_KEYS_ANNOTATION);
  });
});

describe("whether an Override changed a Secret's values", () => {
  it.each([
    ["nothing", { data: { a: "MQ==" } }, { data: { a: "MQ==" } }, false],
    ["data", { data: { a: "MQ==" } }, { data: { a: "Mg==" } }, true],
    ["stringData", { stringData: { a: "x" } }, { stringData: { a: "y" } }, true],
    ["stringData added", { data: { a: "MQ==" } }, { data: { a: "MQ==" }, stringData: { b: "y" } }, true],
    [
      "only labels",
      { data: { a: "MQ==" } },
      { data: { a: "MQ==" }, metadata: { labels: { x: "y" } } },
      false,
    ],
  ] as [string, JsonMap, JsonMap, boolean][])("%s", (_name, template, rendered, changed) => {
    expect(secretValuesChanged(secret(template), secret(rendered))).toBe(changed);
  });
});
