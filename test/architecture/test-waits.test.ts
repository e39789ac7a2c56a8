import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

// A test waits for a state, never for time: every wait in a test body sits in a loop that polls a
// condition (a loop with a condition besides its counter, or one it leaves by `return` or `break`),
// or carries a comment within the four lines above it saying "fixed wait" and why no condition can
// be polled (a check that nothing happens, a timed scenario). Helpers are exempt: `until` and its
// kin are the polling.

const ROOT = join(import.meta.dirname, "..");
const WAIT = /await (sleep|delay)\(|await new Promise\(\(?(resolve|r)\)? => setTimeout\(/;
const LOOP_HEADER = /^\s*(for|while)\s*\(|^\s*do\s*\{/;

function testFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === "helpers" || name === "fixtures" ? [] : testFiles(path);
    return /\.(test|e2e)\.ts$/.test(name) ? [path] : [];
  });
}

/** The line without its string literals and comments, so braces inside YAML or text do not count. */
function code(line: string): string {
  return line.replace(/\/\/.*$/, "").replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`(?:[^`\\]|\\.)*`/g, '""');
}

/** The line index of the nearest block opened above `at` and still open there, if any. */
function enclosingOpener(lines: string[], at: number): number | undefined {
  let depth = 0;
  for (let i = at - 1; i >= 0; i--) {
    const text = code(lines[i] ?? "");
    for (let c = text.length - 1; c >= 0; c--) {
      if (text[c] === "}") depth++;
      else if (text[c] === "{") {
        if (depth === 0) return i;
        depth--;
      }
    }
  }
  return undefined;
}

/** The loop's body: its lines from the header to the brace that closes it. */
function loopBody(lines: string[], start: number): string {
  let depth = 0;
  const body: string[] = [];
  for (let i = start; i < lines.length; i++) {
    const text = code(lines[i] ?? "");
    body.push(text);
    for (const ch of text) {
      if (ch === "{") depth++;
      else if (ch === "}") depth--;
    }
    if (depth <= 0 && i > start) break;
  }
  return body.join("\n");
}

/** The loop's header, which may span lines: from its keyword to the parenthesis that closes it. */
function header(lines: string[], start: number): { text: string; end: number } {
  let text = "";
  let depth = 0;
  for (let i = start; i < lines.length; i++) {
    const line = code(lines[i] ?? "");
    text += ` ${line}`;
    for (const ch of line) {
      if (ch === "(") depth++;
      else if (ch === ")") depth--;
    }
    if (depth <= 0) return { text: text.trim(), end: i };
  }
  return { text: text.trim(), end: lines.length - 1 };
}

/** The first line of the loop header that ends on `line`, if one does (headers span up to six lines). */
function loopHeaderEndingAt(lines: string[], line: number): number | undefined {
  for (let j = line; j >= Math.max(0, line - 6); j--) {
    if (LOOP_HEADER.test(code(lines[j] ?? "")) && header(lines, j).end === line) return j;
  }
  return undefined;
}

/** A loop that polls: a condition besides a counter, `for (;;)`, or a way out from inside. */
function polls(lines: string[], start: number): boolean {
  const { text } = header(lines, start);
  if (/^\s*for\s*\(\s*(const|let|var)\s+[^;]*\s(of|in)\s/.test(text)) return false;
  if (/&&|\|\||for\s*\(\s*;\s*;|while\s*\(\s*!|while\s*\([^<>=]*\)/.test(text)) return true;
  return /\breturn\b|\bbreak\b|\bthrow\b/.test(loopBody(lines, start));
}

/** Whether the wait on line `index` polls a state or carries its reason. */
function explained(lines: string[], index: number): boolean {
  if (LOOP_HEADER.test(code(lines[index] ?? "")) && polls(lines, index)) return true;
  if (lines.slice(Math.max(0, index - 4), index + 1).some((l) => /fixed wait/i.test(l))) return true;
  // The body of a loop without braces: the header ends on the line above.
  const bare = loopHeaderEndingAt(lines, index - 1);
  if (bare !== undefined && polls(lines, bare)) return true;
  for (let at = enclosingOpener(lines, index); at !== undefined; at = enclosingOpener(lines, at)) {
    const loop = loopHeaderEndingAt(lines, at);
    if (loop !== undefined && polls(lines, loop)) return true;
  }
  return false;
}

function unexplainedWaits(text: string): number[] {
  const lines = text.split("\n");
  return lines.flatMap((line, index) =>
    WAIT.test(code(line)) && !explained(lines, index) ? [index + 1] : [],
  );
}

describe("waits in tests", () => {
  it.each([
    [
      "a wait in a loop polling a condition",
      "for (let i = 0; i < 9 && !done(); i++) {\n  await sleep(10);\n}",
      [],
    ],
    ["a one-line poll", "for (let i = 0; i < 9 && !(await ready()); i++) await sleep(50);", []],
    ["a wait in a loop left by return", "for (;;) {\n  if (await done()) return;\n  await sleep(10);\n}", []],
    [
      "a counted loop with an early exit",
      "for (let i = 0; i < 9; i++) {\n  if (ok()) break;\n  await sleep(10);\n}",
      [],
    ],
    [
      "a poll whose header spans lines",
      "for (\n  let i = 0;\n  i < 9 && !ok();\n  i++\n)\n  await sleep(250);",
      [],
    ],
    [
      "a while spanning lines",
      "while (\n  Date.now() < deadline &&\n  !ok()\n) {\n  await sleep(250);\n}",
      [],
    ],
    ["a counted loop without braces", "for (let i = 0; i < 3; i++)\n  await sleep(250);", [2]],
    ["a fixed wait with its reason", "// A fixed wait: nothing may change.\nawait sleep(300);", []],
    ["a bare wait", "await act();\nawait sleep(300);\nexpect(x).toBe(1);", [2]],
    [
      "a wait in a counted loop",
      "for (let i = 0; i < 4; i++) {\n  await act();\n  await sleep(150);\n}",
      [3],
    ],
    [
      "a wait in a loop over data",
      "for (const c of clusters) {\n  if (c) break;\n  await sleep(150);\n}",
      [3],
    ],
    [
      "a bare setTimeout wait",
      'await act("{");\nawait new Promise((resolve) => setTimeout(resolve, 200));',
      [2],
    ],
  ])("%s", (_name, text, expected) => {
    expect(unexplainedWaits(text)).toEqual(expected);
  });

  it("every wait in a test body polls a state or says why it cannot", () => {
    const offenders = testFiles(ROOT).flatMap((path) =>
      unexplainedWaits(readFileSync(path, "utf8")).map((line) => `${relative(ROOT, path)}:${line}`),
    );
    expect(offenders).toEqual([]);
  });
});
