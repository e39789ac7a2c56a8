import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { type LoadResult, loadFleet } from "../../src/load/load-fleet.js";
import type { ChartRenders } from "../../src/manifests/helm/chart-request.js";
import type { FileTree } from "../../src/model/file-tree.js";
import { chartsOf, readExampleRepo } from "../helpers/example-repo.js";

/**
 * Validation is total: random mutations of the example fleet's files (truncation, deleted and
 * duplicated lines, values of the wrong type, YAML punctuation, binary junk, whole-file garbage)
 * always give a result — problems with positions — and never an exception.
 */

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const WRONG_VALUES = [
  "[1, 2]",
  "{a: 1}",
  "123",
  "-7",
  "true",
  "null",
  "~",
  '""',
  "*undefined",
  "&a [*a]",
  "!!binary AAAA",
  "!!set {a}",
  ".inf",
  "0x1F",
  "2024-01-01",
  "'quoted'",
];
const PUNCTUATION = [
  ":",
  "-",
  "[",
  "]",
  "{",
  "}",
  "&",
  "*",
  "!",
  "|",
  ">",
  "%",
  "@",
  "`",
  '"',
  "'",
  "#",
  "\t",
  ",",
  "?",
];

type Mutation =
  | { kind: "truncate"; at: number }
  | { kind: "delete-line"; line: number }
  | { kind: "duplicate-line"; line: number }
  | { kind: "indent"; line: number; by: number }
  | { kind: "wrong-value"; line: number; value: string }
  | { kind: "punctuation"; at: number; char: string }
  | { kind: "junk"; at: number; bytes: Uint8Array }
  | { kind: "garbage"; bytes: Uint8Array };

const mutationArb: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant("truncate" as const), at: fc.nat() }),
  fc.record({ kind: fc.constant("delete-line" as const), line: fc.nat() }),
  fc.record({ kind: fc.constant("duplicate-line" as const), line: fc.nat() }),
  fc.record({ kind: fc.constant("indent" as const), line: fc.nat(), by: fc.integer({ min: -4, max: 4 }) }),
  fc.record({
    kind: fc.constant("wrong-value" as const),
    line: fc.nat(),
    value: fc.constantFrom(...WRONG_VALUES),
  }),
  fc.record({
    kind: fc.constant("punctuation" as const),
    at: fc.nat(),
    char: fc.constantFrom(...PUNCTUATION),
  }),
  fc.record({
    kind: fc.constant("junk" as const),
    at: fc.nat(),
    bytes: fc.uint8Array({ minLength: 1, maxLength: 16 }),
  }),
  fc.record({ kind: fc.constant("garbage" as const), bytes: fc.uint8Array({ maxLength: 200 }) }),
);

function mutate(bytes: Uint8Array, mutation: Mutation): Uint8Array {
  const lines = decoder.decode(bytes).split("\n");
  const pick = (n: number) => n % Math.max(lines.length, 1);
  const withLines = (edit: (copy: string[]) => void) => {
    const copy = [...lines];
    edit(copy);
    return encoder.encode(copy.join("\n"));
  };
  switch (mutation.kind) {
    case "truncate":
      return bytes.slice(0, mutation.at % (bytes.length + 1));
    case "delete-line":
      return withLines((copy) => copy.splice(pick(mutation.line), 1));
    case "duplicate-line":
      return withLines((copy) => copy.splice(pick(mutation.line), 0, copy[pick(mutation.line)] ?? ""));
    case "indent":
      return withLines((copy) => {
        const i = pick(mutation.line);
        const line = copy[i] ?? "";
        copy[i] =
          mutation.by >= 0
            ? " ".repeat(mutation.by) + line
            : line.slice(Math.min(-mutation.by, line.length - line.trimStart().length));
      });
    case "wrong-value":
      return withLines((copy) => {
        const i = pick(mutation.line);
        copy[i] = (copy[i] ?? "").replace(/:\s.*$/, `: ${mutation.value}`);
      });
    case "punctuation": {
      const text = decoder.decode(bytes);
      const at = mutation.at % (text.length + 1);
      return encoder.encode(text.slice(0, at) + mutation.char + text.slice(at + 1));
    }
    case "junk": {
      const at = mutation.at % (bytes.length + 1);
      return Uint8Array.from([...bytes.slice(0, at), ...mutation.bytes, ...bytes.slice(at)]);
    }
    case "garbage":
      return mutation.bytes;
  }
}

function expectLocatedProblems(tree: FileTree, result: LoadResult, junkFiles: ReadonlySet<string>): void {
  for (const problem of result.problems) {
    expect(tree.has(problem.file)).toBe(true);
    expect(problem.line).toBeGreaterThanOrEqual(1);
    expect(problem.column).toBeGreaterThanOrEqual(1);
    expect(problem.message.length).toBeGreaterThan(0);
  }
  // A result without a model must say why; 0xff is never valid UTF-8, so junk containing it is an error.
  if (result.model === undefined) expect(result.problems.some((p) => p.severity === "error")).toBe(true);
  for (const path of junkFiles) {
    // A chart's own files are helm's to read: a broken one fails the chart's render (at the App).
    if (/^apps\/[^/]+\/chart\//.test(path)) continue;
    if (!(tree.get(path) ?? new Uint8Array()).includes(0xff)) continue;
    expect(result.problems.some((p) => p.file === path && p.code === "NOT_UTF8")).toBe(true);
  }
}

describe("validation never throws", () => {
  let example: FileTree;
  let paths: string[];
  let charts: ChartRenders | undefined;
  beforeAll(async () => {
    example = await readExampleRepo();
    charts = await chartsOf(example);
    paths = [...example.keys()].sort();
  });

  // On the recorded seed (every `npm test`) the same 1,000 fleets each time; on a fresh one (`npm run
  // test:seeds`) 2,500 new ones, where new draws can find something.
  const RUNS = process.env.GITFLEET_PROPERTY_SEED === "new" ? 2500 : 1000;

  it(`returns located problems for ${RUNS.toLocaleString("en")} mutated fleets`, () => {
    let runs = 0;
    let invalid = 0;
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat(), mutationArb), { minLength: 1, maxLength: 3 }), (edits) => {
        const tree = new Map(example);
        const junkFiles = new Set<string>();
        for (const [index, mutation] of edits) {
          const path = paths[index % paths.length] ?? "";
          tree.set(path, mutate(tree.get(path) ?? new Uint8Array(), mutation));
          if (mutation.kind === "junk" && mutation.bytes.includes(0xff)) junkFiles.add(path);
        }
        const result = loadFleet(tree, undefined, charts);
        runs++;
        if (result.model === undefined) invalid++;
        expectLocatedProblems(tree, result, junkFiles);
      }),
      { numRuns: RUNS, verbose: 1 },
    );
    expect(runs).toBe(RUNS);
    // Most mutations break something; if almost none did, the mutator itself is broken.
    expect(invalid).toBeGreaterThan(runs / 4);
  }, 180_000);

  // Found by fast-check (seed 1571509676): the App's first line doubled broke its definition, and the
  // overlay it names was never built, so the 0xFF at the start of that overlay's kustomization went
  // unreported. Every YAML file of a kustomize app is now checked for its encoding, built or not.
  it.each([
    ["the App is broken", "apiVersion: gitfleet.io/v1alpha1\napiVersion: gitfleet.io/v1alpha1\n", 1],
    ["the App is sound", "apiVersion: gitfleet.io/v1alpha1\n", 1],
  ])("reports an overlay's kustomization that is not UTF-8 when %s", (_name, firstLines, reported) => {
    const tree = new Map(example);
    const app = decoder.decode(tree.get("apps/handbook/app.yaml"));
    tree.set("apps/handbook/app.yaml", encoder.encode(app.replace(/^apiVersion: .*\n/, firstLines)));
    const overlay = "apps/handbook/overlays/prod/kustomization.yaml";
    tree.set(overlay, Uint8Array.from([0xff, ...(tree.get(overlay) ?? [])]));
    const result = loadFleet(tree, undefined, charts);
    expect(result.model).toBeUndefined();
    const notUtf8 = result.problems.filter((p) => p.file === overlay && p.code === "NOT_UTF8");
    expect(notUtf8).toHaveLength(reported);
    expect(notUtf8[0]).toMatchObject({ line: 1, column: 1, message: expect.stringContaining("byte 0xff") });
  });

  it.each([
    ["wrong type for kind", "clusters/aws-use1.yaml", "kind: Cluster", "kind: [1, 2]", "WRONG_KIND"],
    ["apiVersion removed", "placements/web.yaml", "apiVersion: gitfleet.io/v1alpha1\n", "", "MISSING_FIELD"],
    ["manifest is a scalar", "apps/web/service.yaml", null, "just a string", "NOT_AN_OBJECT"],
    [
      "alias bomb",
      "apps/web/configmap.yaml",
      null,
      'a: &a ["x","x","x","x","x","x","x","x","x"]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: [*d,*d,*d,*d,*d,*d,*d,*d,*d]\n',
      "YAML_SYNTAX",
    ],
  ])("%s gives a %s... error", async (_name, path, search, replacement, code) => {
    const tree = new Map(example);
    const original = decoder.decode(tree.get(path));
    tree.set(path, encoder.encode(search === null ? replacement : original.replace(search, replacement)));
    const result = loadFleet(tree, undefined, charts);
    expect(result.model).toBeUndefined();
    expect(result.problems.filter((p) => p.file === path).map((p) => p.code)).toContain(code);
  });
});
