import { afterEach, describe, expect, it } from "vitest";
import { applyStrategicMergePatch } from "../../src/apimachinery/patch/strategic-merge.js";
import { loadFleet } from "../../src/load/load-fleet.js";
import { formatProblem } from "../../src/model/problem.js";
import { applyOverriders } from "../../src/render/override/apply-overriders.js";
import { renderFleet } from "../../src/render/render-fleet.js";
import { writeReplicas } from "../../src/render/replicas.js";
import { minimalFleetWith } from "../helpers/minimal-fleet.js";
import { isPolluted, prototypeFingerprint } from "../helpers/prototypes.js";

/**
 * C3 (security audit): fleet-repo content must never reach JavaScript's object prototype. Every
 * spelling of the attack — `__proto__` and `constructor.prototype`, as keys of a merge patch, a
 * label overrider, a selector or a manifest, and as segments of an interpreter path or a JSON
 * patch path — is a validation error at its line; and the engines, fed the same input without
 * validation, build their results on own properties only.
 */

const before = prototypeFingerprint();
afterEach(() => {
  expect(prototypeFingerprint()).toBe(before);
  expect(isPolluted()).toBe(false);
});

const OVERRIDE = (overriders: string) => `apiVersion: gitfleet.io/v1alpha1
kind: Override
metadata:
  name: tuning
spec:
  apps: [web]
  overrideRules:
    - targetCluster:
        clusterNames: [east]
      overriders:
${overriders}`;

const INTERPRETER = (path: string) => `apiVersion: gitfleet.io/v1alpha1
kind: ResourceInterpreter
metadata:
  name: widget
spec:
  target:
    apiVersion: example.com/v1
    kind: Widget
  replicasPath: ${path}
`;

const WIDGET = `apiVersion: example.com/v1
kind: Widget
metadata:
  name: w
spec:
  replicas: 2
`;

const cases: { name: string; files: Record<string, string>; expected: string[] }[] = [
  {
    name: "mergePatch with __proto__ (the audit's BASH_ENV spelling)",
    files: {
      "overrides/tuning.yaml": OVERRIDE(
        '        mergePatch:\n          __proto__:\n            BASH_ENV: "$(id > /tmp/pp)"\n',
      ),
    },
    expected: [
      `overrides/tuning.yaml:12:11: error: the key "__proto__" is not allowed: JavaScript reads it as an object's prototype, not as a field; remove or rename it [FORBIDDEN_KEY]`,
    ],
  },
  {
    name: "mergePatch with constructor.prototype",
    files: {
      "overrides/tuning.yaml": OVERRIDE(
        "        mergePatch:\n          spec:\n            constructor:\n              prototype:\n                polluted: yes\n",
      ),
    },
    expected: [
      `overrides/tuning.yaml:13:13: error: /spec/overrideRules/0/overriders/mergePatch/spec/constructor: the key "constructor" is not allowed: it reaches JavaScript's object prototype; remove or rename it [FORBIDDEN_KEY]`,
    ],
  },
  {
    name: "labelsOverrider naming prototype",
    files: {
      "overrides/tuning.yaml": OVERRIDE(
        "        labelsOverrider:\n          - operator: add\n            value:\n              prototype: x\n",
      ),
    },
    expected: [
      `overrides/tuning.yaml:14:15: error: /spec/overrideRules/0/overriders/labelsOverrider/0/value/prototype: the key "prototype" is not allowed: it reaches JavaScript's object prototype; remove or rename it [FORBIDDEN_KEY]`,
    ],
  },
  {
    name: "jsonPatch path through __proto__",
    files: {
      "overrides/tuning.yaml": OVERRIDE(
        "        jsonPatch:\n          - op: add\n            path: /__proto__/polluted\n            value: 1\n",
      ),
    },
    expected: [
      `overrides/tuning.yaml:13:19: error: /spec/overrideRules/0/overriders/jsonPatch/0/path: "/__proto__/polluted" steps through "__proto__", which is not allowed: it reaches JavaScript's object prototype [SCHEMA_VIOLATION]`,
    ],
  },
  {
    name: "jsonPatch from through constructor",
    files: {
      "overrides/tuning.yaml": OVERRIDE(
        "        jsonPatch:\n          - op: copy\n            from: /constructor/prototype\n            path: /metadata/x\n",
      ),
    },
    expected: [
      `overrides/tuning.yaml:13:19: error: /spec/overrideRules/0/overriders/jsonPatch/0/from: "/constructor/prototype" steps through "constructor", which is not allowed: it reaches JavaScript's object prototype [SCHEMA_VIOLATION]`,
    ],
  },
  {
    name: "interpreter replicasPath __proto__.timeoutMs (the audit's global timeout)",
    files: { "interpreters/widget.yaml": INTERPRETER("__proto__.timeoutMs"), "apps/web/widget.yaml": WIDGET },
    expected: [
      `interpreters/widget.yaml:9:17: error: /spec/replicasPath: "__proto__.timeoutMs" steps through "__proto__", which is not allowed: it reaches JavaScript's object prototype [SCHEMA_VIOLATION]`,
    ],
  },
  {
    name: "interpreter replicasPath constructor.prototype.x",
    files: {
      "interpreters/widget.yaml": INTERPRETER("spec.constructor.prototype.x"),
      "apps/web/widget.yaml": WIDGET,
    },
    expected: [
      `interpreters/widget.yaml:9:17: error: /spec/replicasPath: "spec.constructor.prototype.x" steps through "constructor", which is not allowed: it reaches JavaScript's object prototype [SCHEMA_VIOLATION]`,
    ],
  },
  {
    name: "a manifest with a __proto__ key",
    files: {
      "apps/web/config.yaml":
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web-config\ndata:\n  __proto__: x\n",
    },
    expected: [
      `apps/web/config.yaml:6:3: error: the key "__proto__" is not allowed: JavaScript reads it as an object's prototype, not as a field; remove or rename it [FORBIDDEN_KEY]`,
    ],
  },
  {
    name: "a Placement selector keyed constructor",
    files: {
      "placements/web.yaml":
        "apiVersion: gitfleet.io/v1alpha1\nkind: Placement\nmetadata:\n  name: web\nspec:\n  apps: [web]\n  clusterAffinity:\n    labelSelector:\n      matchLabels:\n        constructor: x\n",
    },
    expected: [
      `placements/web.yaml:10:9: error: /spec/clusterAffinity/labelSelector/matchLabels/constructor: the key "constructor" is not allowed: it reaches JavaScript's object prototype; remove or rename it [FORBIDDEN_KEY]`,
    ],
  },
  {
    name: "a Cluster named constructor",
    files: {
      "clusters/constructor.yaml":
        "apiVersion: gitfleet.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: constructor\nspec:\n  provider: aws\n",
    },
    expected: [
      `clusters/constructor.yaml:4:9: error: /metadata/name: "constructor" is reserved (it names JavaScript object internals); choose another name [SCHEMA_VIOLATION]`,
    ],
  },
];

describe("C3: prototype pollution from the fleet repo", () => {
  it.each(cases)("$name is a validation error at its line", ({ files, expected }) => {
    const result = loadFleet(minimalFleetWith(files));
    expect(result.model).toBeUndefined();
    expect(result.problems.filter((p) => p.severity === "error").map(formatProblem)).toEqual(expected);
  });

  it("renders a manifest whose data and labels use constructor and prototype as plain keys", () => {
    const result = loadFleet(
      minimalFleetWith({
        "apps/web/config.yaml":
          "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web-config\n  labels:\n    constructor: yes-really\ndata:\n  constructor: a\n  prototype: b\n  toString: c\n",
      }),
    );
    expect(result.problems.filter((p) => p.severity === "error")).toEqual([]);
    const model = result.model;
    if (!model) throw new Error("invalid");
    const config = renderFleet(model).objects.find(
      (o) => o.path === "rendered/east/shop/core.ConfigMap.web-config.yaml",
    );
    expect(config?.text).toContain("  constructor: a\n  prototype: b\n  toString: c\n");
    expect(config?.text).toContain("    constructor: yes-really\n");
  });

  it("a selector requiring a label named constructor does not match objects without it", () => {
    const result = loadFleet(
      minimalFleetWith({
        "placements/web.yaml":
          "apiVersion: gitfleet.io/v1alpha1\nkind: Placement\nmetadata:\n  name: web\nspec:\n  resourceSelectors:\n    - apiVersion: v1\n      kind: ConfigMap\n      labelSelector:\n        matchExpressions:\n          - {key: constructor, operator: Exists}\n",
      }),
    );
    const model = result.model;
    if (!model) throw new Error(result.problems.map(formatProblem).join("\n"));
    expect(renderFleet(model).objects).toEqual([]);
  });
});

describe("C3: the engines build on own properties, whatever they are given", () => {
  const hostile = (text: string) => JSON.parse(text) as never;

  it.each([
    ['{"__proto__": {"polluted": 1, "BASH_ENV": "x"}}'],
    ['{"constructor": {"prototype": {"polluted": 1}}}'],
    ['{"spec": {"__proto__": {"polluted": 1}}}'],
    ['{"spec": {"constructor": {"prototype": {"polluted": 1}}}}'],
    ['{"$setElementOrder/constructor": [], "constructor": [{"name": "x"}]}'],
    ['{"$deleteFromPrimitiveList/__proto__": ["x"]}'],
  ])("strategic merge patch %s", (patch) => {
    const result = applyStrategicMergePatch({ spec: { replicas: 1 } }, hostile(patch), undefined);
    expect(result.ok).toBe(true);
  });

  it.each(["__proto__.timeoutMs", "constructor.prototype.timeoutMs", "spec.__proto__.polluted"])(
    "writeReplicas through %s",
    (path) => {
      const object = writeReplicas(
        { spec: {} },
        "example.com/Widget",
        3,
        hostile(`{"spec": {"replicasPath": "${path}"}}`),
      );
      expect(JSON.stringify(object)).toContain("3");
    },
  );

  it("labels and annotations overriders with prototype keys", () => {
    const value = hostile('{"__proto__": "x", "constructor": "y"}');
    const result = applyOverriders(
      { object: { metadata: { name: "a" } }, podSpecPath: undefined, schema: undefined },
      {
        labelsOverrider: [{ operator: "add", value }],
        annotationsOverrider: [{ operator: "replace", value }],
      },
    );
    expect(result.ok).toBe(true);
  });
});
