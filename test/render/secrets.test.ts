import { describe, expect, it } from "vitest";
import type { JsonMap } from "../../src/apimachinery/json.js";
import {
  LAST_APPLIED_ANNOTATION,
  redactSecretValues,
  SECRET_DIGEST_ANNOTATION,
  SECRET_KEYS_ANNOTATION,
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
