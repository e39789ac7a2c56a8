import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import type { Json } from "../../src/apimachinery/json.js";
import { renderFleet } from "../../src/render/render-fleet.js";
import { emitYaml } from "../../src/render/yaml-emitter.js";
import { readEmittedYaml } from "../../src/render/yaml-reader.js";
import { loadWithCharts, readExampleRepo } from "../helpers/example-repo.js";

/** The fast reader against the `yaml` package (YAML 1.1, as kubectl reads) on what the emitter writes. */
describe("reading emitted YAML", () => {
  it("reads any JSON value the emitter wrote exactly as a YAML 1.1 parser does", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 5 }), (value) => {
        const text = emitYaml(value as Json);
        expect(readEmittedYaml(text)).toEqual(parse(text, { version: "1.1" }));
      }),
      { numRuns: 2000 },
    );
  });

  it("reads strings that look like other things, multi-line text and awkward keys", () => {
    const value = {
      "": "on",
      "a: b": ["yes", "0755", "1e3", "-", "- x", "#", "a #b", "x:", "~", "null", ""],
      text: "line one\n  indented\n\nlast\n",
      stripped: "no newline\nat the end",
      nested: [[1, [2, { k: "v" }]], { "": {} }, [], {}],
      numbers: [0, -1, 1.5, 1e21, 5e-324, -2.5e-7],
      __proto__: { polluted: true },
    };
    const text = emitYaml(value as Json);
    const read = readEmittedYaml(text);
    expect(read).toEqual(parse(text, { version: "1.1" }));
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("reads every rendered object of the example fleet", async () => {
    const model = (await loadWithCharts(await readExampleRepo())).model;
    if (!model) throw new Error("example-repo is invalid");
    for (const object of renderFleet(model).objects)
      expect(readEmittedYaml(object.text)).toEqual(object.object);
  });

  it.each([
    ["a flow mapping", "a: {b: 1}\n"],
    ["a comment", "a: 1 # note\n"],
    ["YAML 1.1 yes", "a: yes\n"],
    ["an anchor", "a: &x 1\n"],
    ["a tab", "a:\n\tb: 1\n"],
  ])("declines %s, for a full parser to read", (_name, text) => {
    expect(readEmittedYaml(text)).toBeUndefined();
  });
});
