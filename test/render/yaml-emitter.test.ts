import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Json } from "../../src/apimachinery/json.js";
import { parseSourceFile } from "../../src/model/yaml-source.js";
import { emitYaml } from "../../src/render/yaml-emitter.js";

// Read back the way gitfleet and kubectl read YAML (1.1, no timestamps).
function readBack(text: string): unknown {
  const parsed = parseSourceFile("x.yaml", new TextEncoder().encode(text));
  expect(parsed.problems).toEqual([]);
  return parsed.documents[0]?.value ?? null;
}

describe("YAML emitter", () => {
  it("writes kubectl-style block YAML", () => {
    const object: Json = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "web", labels: { app: "web", version: "1.0" } },
      data: { "server.cfg": "port 80\nhost x\n", on: "yes", empty: "", list: [] as Json[] } as Json,
      spec: {
        ports: [{ port: 80, name: "http" }, { port: 443 }],
        args: ["--a", "-b", "c d"],
        nested: [[1, 2], []],
      },
    };
    expect(emitYaml(object)).toBe(`apiVersion: v1
kind: ConfigMap
metadata:
  name: web
  labels:
    app: web
    version: "1.0"
data:
  server.cfg: |
    port 80
    host x
  "on": "yes"
  empty: ""
  list: []
spec:
  ports:
  - port: 80
    name: http
  - port: 443
  args:
  - "--a"
  - "-b"
  - c d
  nested:
  - - 1
    - 2
  - []
`);
  });

  it("reads back as the same value for any JSON", () => {
    fc.assert(
      // "__proto__" is the one key the fleet repo's reader refuses (see the C3 security tests).
      fc.property(
        fc.jsonValue().filter((v) => !JSON.stringify(v).includes('"__proto__"')),
        (value) => {
          const json = JSON.parse(JSON.stringify(value)) as Json;
          // YAML has no -0 and the emitter writes numbers as JavaScript prints them.
          expect(readBack(emitYaml(json))).toEqual(
            JSON.parse(JSON.stringify(json, (_k, v) => (Object.is(v, -0) ? 0 : v))),
          );
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("keeps strings that YAML would read as something else", () => {
    const tricky = [
      "yes",
      "No",
      "on",
      "OFF",
      "y",
      "~",
      "null",
      "1.0",
      "0755",
      "0x1F",
      "1e3",
      "1:30",
      "2024-01-01",
      ".inf",
      "-",
      "- a",
      "a: b",
      "a #b",
      "#x",
      "[x]",
      "{x}",
      "*a",
      "&a",
      "!t",
      "%x",
      "@x",
      "`x`",
      "'q'",
      '"q"',
      " lead",
      "trail ",
      "tab\there",
      "multi\nline",
      "multi\nline\n",
      "\nlead",
      "end\n\n",
      "a\r\nb",
      "üñí",
      "emoji 🙂",
    ];
    const value = Object.fromEntries(tricky.map((t, i) => [`k${i}`, t]));
    expect(readBack(emitYaml(value))).toEqual(value);
    const keys = Object.fromEntries(tricky.map((t, i) => [t, i]));
    expect(readBack(emitYaml(keys))).toEqual(keys);
  });
});
