import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isPrototypeKey } from "../../src/apimachinery/json.js";
import { loadFleet } from "../../src/load/load-fleet.js";
import { renderFleet } from "../../src/render/render-fleet.js";
import { minimalFleetWith } from "../helpers/minimal-fleet.js";
import { isPolluted, prototypeFingerprint } from "../helpers/prototypes.js";

/**
 * C3, fuzzed: random maps whose keys (and random paths whose segments) are drawn from a pool that
 * includes the prototype names go into every place the fleet repo supplies a map or a path — merge
 * patches, label and annotation overriders, label selectors, Cluster labels, interpreter paths,
 * JSON patch paths. Validation never throws; input that names a prototype key is refused with a
 * problem at its line; input that does not is rendered; and Object.prototype is never touched.
 */

const KEYS = [
  "__proto__",
  "constructor",
  "prototype",
  "toString",
  "valueOf",
  "hasOwnProperty",
  "__defineGetter__",
  "spec",
  "metadata",
  "data",
  "x",
];

type Tree = { readonly entries: readonly (readonly [string, Tree | string])[] };

const key = fc.oneof(fc.constantFrom(...KEYS), fc.stringMatching(/^[a-z][a-z0-9]{0,6}$/));
const { tree } = fc.letrec<{ tree: Tree }>((t) => ({
  tree: fc.record({
    entries: fc.uniqueArray(fc.tuple(key, fc.oneof({ depthSize: "small" }, fc.constant("v"), t("tree"))), {
      maxLength: 4,
      selector: ([k]) => k,
    }),
  }),
}));

// JSON text (YAML is a superset) written by hand, so "__proto__" is a key like any other.
function json(node: Tree | string): string {
  if (typeof node === "string") return JSON.stringify(node);
  return `{${node.entries.map(([k, v]) => `${JSON.stringify(k)}: ${json(v)}`).join(", ")}}`;
}

function flatStrings(node: Tree): string {
  return `{${node.entries.map(([k]) => `${JSON.stringify(k)}: "v"`).join(", ")}}`;
}

function namesPrototype(node: Tree | string): boolean {
  return typeof node !== "string" && node.entries.some(([k, v]) => isPrototypeKey(k) || namesPrototype(v));
}

const override = (overriders: string) =>
  `apiVersion: gitfleet.io/v1alpha1\nkind: Override\nmetadata: {name: fuzz}\nspec:\n  apps: [web]\n  overrideRules:\n    - targetCluster: {clusterNames: [east]}\n      overriders: ${overriders}\n`;

// Each place a map goes, as the files that put it there and whether it is walked as a whole map.
// A manifest may hold "constructor" and "prototype" as data (they are valid Kubernetes keys); only
// "__proto__", which JavaScript cannot hold as a plain key, is refused there.
const MAP_PLACES: readonly {
  name: string;
  files: (map: Tree) => Record<string, string>;
  deep: boolean;
  refused?: (key: string) => boolean;
}[] = [
  {
    name: "mergePatch",
    files: (map) => ({ "overrides/fuzz.yaml": override(`{mergePatch: ${json(map)}}`) }),
    deep: true,
  },
  {
    name: "labelsOverrider",
    files: (map) => ({
      "overrides/fuzz.yaml": override(`{labelsOverrider: [{operator: add, value: ${flatStrings(map)}}]}`),
    }),
    deep: false,
  },
  {
    name: "annotationsOverrider",
    files: (map) => ({
      "overrides/fuzz.yaml": override(
        `{annotationsOverrider: [{operator: replace, value: ${flatStrings(map)}}]}`,
      ),
    }),
    deep: false,
  },
  {
    name: "Placement matchLabels",
    files: (map) => ({
      "placements/web.yaml": `apiVersion: gitfleet.io/v1alpha1\nkind: Placement\nmetadata: {name: web}\nspec:\n  apps: [web]\n  clusterAffinity: {labelSelector: {matchLabels: ${flatStrings(map)}}}\n`,
    }),
    deep: false,
  },
  {
    name: "Cluster labels",
    files: (map) => ({
      "clusters/east.yaml": `apiVersion: gitfleet.io/v1alpha1\nkind: Cluster\nmetadata: {name: east, labels: ${flatStrings(map)}}\nspec: {provider: aws}\n`,
    }),
    deep: false,
  },
  {
    name: "a manifest's data",
    files: (map) => ({
      "apps/web/config.yaml": `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: web-config}\ndata: ${flatStrings(map)}\n`,
    }),
    deep: false,
    refused: (key) => key === "__proto__",
  },
];

const segment = fc.oneof(fc.constantFrom(...KEYS), fc.stringMatching(/^[a-z][a-z0-9]{0,5}$/));
const segments = fc.array(segment, { minLength: 1, maxLength: 4 });

const PATH_PLACES: readonly {
  name: string;
  files: (segments: readonly string[]) => Record<string, string>;
}[] = [
  {
    name: "replicasPath",
    files: (s) => ({
      "interpreters/w.yaml": `apiVersion: gitfleet.io/v1alpha1\nkind: ResourceInterpreter\nmetadata: {name: w}\nspec:\n  target: {apiVersion: example.com/v1, kind: Widget}\n  replicasPath: ${JSON.stringify(s.join("."))}\n`,
      "apps/web/widget.yaml":
        "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec: {replicas: 2}\n",
    }),
  },
  {
    name: "jsonPatch path",
    files: (s) => ({
      "overrides/fuzz.yaml": override(
        `{jsonPatch: [{op: add, path: ${JSON.stringify(`/${s.join("/")}`)}, value: 1}]}`,
      ),
    }),
  },
];

describe("C3: random maps and paths with prototype names", () => {
  const before = prototypeFingerprint();

  it.each(MAP_PLACES)("maps in $name", ({ files, deep, refused = isPrototypeKey }) => {
    fc.assert(
      fc.property(tree, (map) => {
        const hostile = deep ? namesPrototype(map) : map.entries.some(([k]) => refused(k));
        const result = loadFleet(minimalFleetWith(files(map)));
        if (hostile) {
          expect(result.model).toBeUndefined();
          expect(result.problems.some((p) => p.code === "FORBIDDEN_KEY" && p.line > 0)).toBe(true);
        } else if (result.model) {
          renderFleet(result.model);
        }
        expect(prototypeFingerprint()).toBe(before);
        expect(isPolluted()).toBe(false);
      }),
      { numRuns: 150 },
    );
  });

  it.each(PATH_PLACES)("paths in $name", ({ files }) => {
    fc.assert(
      fc.property(segments, (path) => {
        const result = loadFleet(minimalFleetWith(files(path)));
        if (path.some(isPrototypeKey)) {
          expect(result.model).toBeUndefined();
          expect(result.problems.some((p) => /steps through/.test(p.message) && p.line > 0)).toBe(true);
        } else if (result.model) {
          renderFleet(result.model);
        }
        expect(prototypeFingerprint()).toBe(before);
        expect(isPolluted()).toBe(false);
      }),
      { numRuns: 150 },
    );
  });
});
