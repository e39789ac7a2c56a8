import { relative } from "node:path";
import { describe, expect, it } from "vitest";
import { importGraph, SRC } from "../helpers/import-graph.js";

/**
 * The layers point one way: no module of src/ reaches itself through its imports (type-only imports
 * count — a type two modules share belongs below both). Lists every cycle it finds.
 */

// The files reachable from `start` through imports.
function reachable(graph: ReadonlyMap<string, readonly string[]>, start: string): Set<string> {
  const seen = new Set<string>();
  const next = [...(graph.get(start) ?? [])];
  for (let file = next.pop(); file !== undefined; file = next.pop()) {
    if (seen.has(file)) continue;
    seen.add(file);
    next.push(...(graph.get(file) ?? []));
  }
  return seen;
}

// Each group of files that reach one another (a cycle), as paths relative to src/.
function cycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const reach = new Map([...graph.keys()].map((file) => [file, reachable(graph, file)]));
  const groups = new Map<string, string[]>();
  for (const [file, from] of reach) {
    if (!from.has(file)) continue;
    const group = [...from].filter((other) => reach.get(other)?.has(file)).map((f) => relative(SRC, f));
    groups.set(group.sort().join(" "), group);
  }
  return [...groups.values()];
}

describe("architecture", () => {
  it("finds a cycle when there is one (the check itself)", () => {
    const graph = new Map([
      ["/a.ts", ["/b.ts"]],
      ["/b.ts", ["/c.ts"]],
      ["/c.ts", ["/a.ts"]],
      ["/d.ts", ["/a.ts"]],
    ]);
    expect(cycles(graph).map((c) => c.length)).toEqual([3]);
  });

  it("src/ has no import cycles", () => {
    const graph = importGraph();
    expect(graph.size).toBeGreaterThan(100);
    expect(cycles(graph)).toEqual([]);
  });
});
