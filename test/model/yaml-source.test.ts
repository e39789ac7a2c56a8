import { describe, expect, it } from "vitest";
import { locate, parseSourceFile } from "../../src/model/yaml-source.js";

const encode = (text: string) => new TextEncoder().encode(text);

describe("parsing YAML sources", () => {
  const text = "a: 1\nb:\n  c: [x, w]\n  d: {e: f}\n---\n---\nz: true\n";
  const parsed = parseSourceFile("f.yaml", encode(text));

  it("keeps non-empty documents with their index in the file", () => {
    expect(parsed.problems).toEqual([]);
    expect(parsed.documents.map((d) => [d.index, d.value])).toEqual([
      [0, { a: 1, b: { c: ["x", "w"], d: { e: "f" } } }],
      [2, { z: true }],
    ]);
  });

  it.each([
    [["a"], "value", 1, 4],
    [["a"], "key", 1, 1],
    [["b", "c", 1], "value", 3, 10],
    [["b", "d", "e"], "value", 4, 10],
    [["b", "d", "e"], "key", 4, 7],
    [["b", "missing"], "value", 3, 3],
    [["b", "missing", "deeper"], "key", 2, 1],
    [[], "value", 1, 1],
  ] as const)("locates %j (%s) at %i:%i", (segments, target, line, column) => {
    const [first] = parsed.documents;
    if (!first) throw new Error("no document");
    expect(locate(first, segments, target)).toMatchObject({ line, column });
    // The syntax tree is parsed again from the file's bytes for each document asking for a position.
    const second = parsed.documents[1];
    if (!second) throw new Error("no second document");
    const reparsed = { syntax: { bytes: encode(text), dialect: "kubectl" as const } };
    expect(locate({ ...first, ...reparsed }, segments, target)).toEqual(locate(first, segments, target));
    expect(locate({ ...second, ...reparsed }, ["z"], target)).toMatchObject({ line: 7 });
  });

  it("reads YAML the way Kubernetes does: 1.1 booleans and octals, timestamps as strings", () => {
    const [doc] = parseSourceFile(
      "k.yaml",
      encode(
        "a: on\nb: yes\nc: 0755\nd: 2024-01-01\ne: 1:30\nf: n\ng: e0\nh: .\ni: 1e3\nj: .5\nk: 1.\nl: ._\nm: ._1\np: ._e1\n",
      ),
    ).documents;
    expect(doc?.value).toEqual({
      a: true,
      b: true,
      c: 493,
      d: "2024-01-01",
      e: "1:30",
      f: false,
      g: "e0",
      h: ".",
      i: 1000,
      j: 0.5,
      k: 1,
      // go-yaml drops underscores before matching: a point with no digit stays a string.
      l: "._",
      m: 0.1,
      p: "._e1",
    });
  });

  it("reports the first invalid UTF-8 byte with its line and column", () => {
    const bytes = Uint8Array.from([...encode("a: 1\nb: x"), 0xc3, 0x28]);
    expect(parseSourceFile("bad.yaml", bytes).problems).toEqual([
      {
        file: "bad.yaml",
        line: 2,
        column: 5,
        path: "",
        severity: "error",
        code: "NOT_UTF8",
        message: "file is not valid UTF-8 (byte 0xc3); save it as UTF-8 text",
      },
    ]);
  });

  it("rejects mapping keys that JSON cannot hold, and reports unknown tags as warnings", () => {
    const result = parseSourceFile("k.yaml", encode("? [a]\n: 1\n---\nv: !custom x\n"));
    expect(result.problems.map((p) => `${p.line}:${p.column} ${p.severity} ${p.message}`)).toEqual([
      "1:3 error YAML: mapping keys must be plain strings (Kubernetes objects are JSON)",
      "4:4 warning YAML: Unresolved tag: !custom",
    ]);
  });

  it("rejects self-referencing aliases, which no Kubernetes object can hold", () => {
    const result = parseSourceFile("c.yaml", encode("a: &x [1, *x]\n"));
    expect(result.documents).toEqual([]);
    expect(result.problems.map((p) => `${p.line}:${p.column} ${p.code} ${p.message}`)).toEqual([
      "1:1 YAML_SYNTAX YAML: an alias refers to one of its own ancestors; Kubernetes objects cannot contain cycles",
    ]);
  });
});
