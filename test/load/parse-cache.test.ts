import { deserialize, serialize } from "node:v8";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { loadFleet } from "../../src/load/load-fleet.js";
import { createParseCache, parseCacheFrom, parseCacheRecords } from "../../src/load/parse-cache.js";
import { rememberedFor } from "../../src/model/rules/remembered-findings.js";
import { BASE_SPEC, changedPaths, editArbitrary, type FleetSpec, fleetFiles } from "../helpers/fleet-spec.js";

describe("the parse cache as records", () => {
  it("loads, once copied as a snapshot copies it, exactly what a load without a cache gives", () => {
    fc.assert(
      fc.property(fc.array(editArbitrary, { minLength: 1, maxLength: 6 }), (edits) => {
        let spec: FleetSpec = BASE_SPEC;
        const cache = createParseCache();
        for (const edit of edits) {
          spec = edit(spec);
          loadFleet(fleetFiles(spec), cache);
        }
        // One more edit, so that the copy is used for files that changed and files that did not.
        const next = fleetFiles({ ...spec, broken: spec.apps[0]?.name, noise: spec.noise + 1 });
        const copy = parseCacheFrom(deserialize(serialize(parseCacheRecords(cache))));
        const fromCopy = loadFleet(next, copy);
        const fresh = loadFleet(next);
        expect(fromCopy.problems).toEqual(fresh.problems);
        expect(fromCopy.model).toEqual(fresh.model);
        // The copy parses again what the original parses again: the files that changed.
        const original = loadFleet(next, cache);
        expect(fromCopy.parsedFiles).toBe(original.parsedFiles);
        expect(fromCopy.parsedFiles).toBeGreaterThan(0);
        expect(fromCopy.parsedFiles).toBeLessThanOrEqual(changedPaths(fleetFiles(spec), next).length);
        expect(fromCopy.problems.some((p) => p.code === "YAML_SYNTAX" && p.line > 0)).toBe(true);
      }),
      { numRuns: 25 },
    );
  });

  it("keeps each file's reads with it: a changed file is read again, an unchanged one is not", () => {
    const cache = createParseCache();
    const tree = fleetFiles(BASE_SPEC);
    loadFleet(tree, cache);
    const records = parseCacheRecords(cache);
    expect(records.map((r) => r.path)).toEqual([...tree.keys()].filter((p) => cache.files.has(p)).sort());
    expect(records.filter((r) => r.reads.length > 0).length).toBeGreaterThan(0);
    const copy = parseCacheFrom(records);
    const changed = fleetFiles({
      ...BASE_SPEC,
      apps: BASE_SPEC.apps.map((a, i) => (i === 0 ? { ...a, replicas: 9 } : a)),
    });
    const result = loadFleet(changed, copy);
    expect(result.parsedFiles).toBe(1);
    const stale = [...changed.keys()].filter((p) => copy.files.get(p)?.reads.size === 0);
    expect(stale).toEqual([]);
  });

  it("keeps the per-object checks' findings with the reads, so a copy replays them", () => {
    const tree = new Map(fleetFiles(BASE_SPEC));
    const path = [...tree.keys()].find((p) => p.endsWith("deployment.yaml")) as string;
    const text = new TextDecoder().decode(tree.get(path));
    // A schema violation the per-object schema check finds, and remembers.
    tree.set(path, new TextEncoder().encode(text.replace(/replicas: \d+/, 'replicas: "many"')));
    const cache = createParseCache();
    const original = loadFleet(tree, cache);
    expect(original.problems.some((p) => p.file === path && p.code === "SCHEMA_VIOLATION")).toBe(true);
    const records = deserialize(serialize(parseCacheRecords(cache)));
    const kept = records.flatMap((r: { remembered: [string, [string][]][] }) =>
      r.remembered.flatMap(([, entries]) => entries.map(([check]) => check)),
    );
    expect(kept).toEqual(expect.arrayContaining(["manifest-content", "manifest-schemas"]));
    const copy = parseCacheFrom(records);
    const again = loadFleet(tree, copy);
    expect(again.problems).toEqual(original.problems);
    // The copies of the reads are remembered as checked: the load replayed their findings.
    const resource = copy.files.get(path)?.reads.values().next().value?.value as object;
    expect(rememberedFor(resource).map(([check]) => check)).toEqual(["manifest-content", "manifest-schemas"]);
  });
});
