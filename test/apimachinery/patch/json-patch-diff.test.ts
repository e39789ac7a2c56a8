import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Json } from "../../../src/apimachinery/json.js";
import { applyJsonPatch } from "../../../src/apimachinery/patch/json-patch.js";
import { jsonPatchDiff, pointerToken } from "../../../src/apimachinery/patch/json-patch-diff.js";

// Values without -0 (JSON cannot tell it from 0) and without prototype keys (never keys of user data here).
const json = fc
  .jsonValue({ maxDepth: 4 })
  .map((v) => JSON.parse(JSON.stringify(v)) as Json)
  .filter((v) => !JSON.stringify(v).includes('"__proto__"'));

describe("jsonPatchDiff", () => {
  it.each([
    ["equal maps", { a: 1, b: [1, 2] }, { b: [1, 2], a: 1 }, []],
    ["a changed scalar", { a: 1 }, { a: 2 }, [{ op: "replace", path: "/a", value: 2 }]],
    ["an added key", { a: 1 }, { a: 1, b: 2 }, [{ op: "add", path: "/b", value: 2 }]],
    ["a removed key", { a: 1, b: 2 }, { a: 1 }, [{ op: "remove", path: "/b" }]],
    [
      "a list element of an equal-length list",
      { c: [{ image: "a:1" }, { image: "b:1" }] },
      { c: [{ image: "a:1" }, { image: "b:2" }] },
      [{ op: "replace", path: "/c/1/image", value: "b:2" }],
    ],
    ["a list that grew, whole", { c: [1] }, { c: [1, 2] }, [{ op: "replace", path: "/c", value: [1, 2] }]],
    ["a changed type", { a: { b: 1 } }, { a: [1] }, [{ op: "replace", path: "/a", value: [1] }]],
    [
      "keys with / and ~ escaped",
      { "a/b": 1, "c~d": 1 },
      { "a/b": 2, "c~d": 2 },
      [
        { op: "replace", path: "/a~1b", value: 2 },
        { op: "replace", path: "/c~0d", value: 2 },
      ],
    ],
    ["a key named like Object's own methods", { valueOf: {} }, {}, [{ op: "remove", path: "/valueOf" }]],
    ["null against absent", { a: null }, {}, [{ op: "remove", path: "/a" }]],
  ])("%s", (_name, from, to, expected) => {
    expect(jsonPatchDiff(from as Json, to as Json)).toEqual(expected);
  });

  it("escapes ~ before /, as RFC 6901 says", () => {
    expect(pointerToken("~1/")).toBe("~01~1");
  });

  it("gives operations that, applied to the first value, give the second (property)", () => {
    fc.assert(
      fc.property(json, json, (from, to) => {
        const result = applyJsonPatch(from, jsonPatchDiff(from, to));
        expect("error" in result ? result : result.value).toEqual(to);
      }),
      { numRuns: 500 },
    );
  });

  it("gives nothing for equal values (property)", () => {
    fc.assert(fc.property(json, (value) => jsonPatchDiff(value, structuredClone(value)).length === 0));
  });
});
