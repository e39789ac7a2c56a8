// Records the strategic merge patch's edge cases with the reference tools' answers:
//   test/golden/smp-edge-cases.json            kubectl patch --local --type strategic
//   test/golden/smp-kustomize-edge-cases.json  kubectl kustomize (a patches: entry)
// Each case names the directive or the step of the merge it pins. gitfleet's answer is printed beside
// the reference's (SAME or DIFF); a refusal records gitfleet's message, which the fast replay
// (test/apimachinery/patch/strategic-merge.recorded.test.ts) checks. The kubectl tests check the
// record against kubectl again. Run after `npm run build`: node scripts/record-smp-edge-cases.mjs
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "yaml";
import { schemaFor } from "../dist/src/apimachinery/patch/patch-schema.js";
import { applyStrategicMergePatch } from "../dist/src/apimachinery/patch/strategic-merge.js";

const D = (spec) => ({ apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "w" }, spec });
const T = (podSpec) => D({ template: { spec: podSpec } });
const P = (podSpec) => ({ spec: { template: { spec: podSpec } } });
const c = (name, more = {}) => ({ name, image: `${name}:1`, ...more });
const CM = (metadata) => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "m", ...metadata } });

/** Both flavours: [object, patch]. */
const common = {
  deleteMap: [
    T({ containers: [c("a")], securityContext: { runAsUser: 1 } }),
    P({ securityContext: { $patch: "delete" } }),
  ],
  retainKeys: [
    D({ strategy: { type: "RollingUpdate", rollingUpdate: { maxSurge: 1 } } }),
    { spec: { strategy: { $retainKeys: ["type"], type: "Recreate" } } },
  ],
  retainKeysUnset: [
    D({ strategy: { type: "RollingUpdate", rollingUpdate: { maxSurge: 1 } } }),
    { spec: { strategy: { $retainKeys: ["type"] } } },
  ],
  deleteFromPrimitive: [
    T({ containers: [c("a", { args: ["x", "y", "x", "z"] })] }),
    P({ containers: [{ name: "a", "$deleteFromPrimitiveList/args": ["x"] }] }),
  ],
  finalizersDelete: [
    CM({ finalizers: ["a", "b", "c"] }),
    { metadata: { "$deleteFromPrimitiveList/finalizers": ["b"] } },
  ],
  finalizersMergeOrder: [
    CM({ finalizers: ["a", "b"] }),
    { metadata: { "$setElementOrder/finalizers": ["b", "c", "a"], finalizers: ["c"] } },
  ],
  finalizersAppend: [CM({ finalizers: ["a", "b"] }), { metadata: { finalizers: ["c", "a"] } }],
  finalizersKeepFirst: [CM({ finalizers: ["a", "b"] }), { metadata: { finalizers: ["a"] } }],
  finalizersEmptyPatch: [CM({ finalizers: ["a", "b", "a"] }), { metadata: { finalizers: [] } }],
  finalizersBothEmpty: [CM({ finalizers: [] }), { metadata: { finalizers: [] } }],
  finalizersOrderEmpty: [
    CM({ finalizers: ["a", "b"] }),
    { metadata: { "$setElementOrder/finalizers": [], finalizers: ["c"] } },
  ],
  finalizersOrderAndDelete: [
    CM({ finalizers: ["a", "b", "c"] }),
    { metadata: { "$setElementOrder/finalizers": ["c", "a"], "$deleteFromPrimitiveList/finalizers": ["b"] } },
  ],
  emptyLists: [T({ containers: [c("a")], volumes: [] }), P({ volumes: [] })],
  listDeleteItem: [T({ containers: [c("a"), c("b")] }), P({ containers: [{ name: "a", $patch: "delete" }] })],
  listReplace: [T({ containers: [c("a"), c("b")] }), P({ containers: [c("z"), { $patch: "replace" }] })],
  listAddNew: [T({ containers: [c("a"), c("b")] }), P({ containers: [c("z"), { name: "b", image: "b:2" }] })],
  setOrderContainers: [
    T({ containers: [c("a"), c("b"), c("c")] }),
    P({
      "$setElementOrder/containers": [{ name: "c" }, { name: "a" }, { name: "b" }],
      containers: [{ name: "a", image: "a:2" }],
    }),
  ],
  setOrderWithDirective: [
    T({ containers: [c("a"), c("b")] }),
    P({ "$setElementOrder/containers": [{ name: "b" }], containers: [{ name: "a", $patch: "delete" }] }),
  ],
  setOrderWithReplace: [
    T({ containers: [c("a"), c("b")] }),
    P({ "$setElementOrder/containers": [{ name: "z" }], containers: [c("z"), { $patch: "replace" }] }),
  ],
  setOrderEmptyPatch: [
    T({ containers: [c("a"), c("b")] }),
    P({ "$setElementOrder/containers": [{ name: "b" }, { name: "a" }] }),
  ],
  setOrderDeleteThenAdd: [
    T({ containers: [c("a"), c("b"), c("c"), c("d")] }),
    P({
      "$setElementOrder/containers": [{ name: "a" }, { name: "e" }, { name: "c" }],
      containers: [{ name: "b", $patch: "delete" }, { name: "a", image: "a:2" }, c("e")],
    }),
  ],
  typeChangeToList: [
    D({ replicas: 2, selector: { matchLabels: { a: "b" } } }),
    { spec: { selector: ["x"] } },
  ],
  typeChangeToListCleaned: [
    D({ replicas: 2, selector: { matchLabels: { a: "b" } } }),
    { spec: { selector: [{ a: null, b: 1 }, { $patch: "delete" }] } },
  ],
  typeChangeToMapCleaned: [D({ paused: true }), { spec: { paused: { a: 1, b: null } } }],
  typeNullOriginal: [D({ paused: null }), { spec: { paused: { a: 1 } } }],
  typeNullOriginalCleaned: [
    D({ paused: null }),
    { spec: { paused: { a: 1, b: null, c: { $patch: "delete" } } } },
  ],
  longDirectiveLikeKey: [D({ x: ["a", "b"] }), { spec: { aaaaaaaaaaaaaaaaaaaaaaaaax: ["a"] } }],
  replaceMap: [
    D({ strategy: { type: "RollingUpdate", rollingUpdate: { maxSurge: 1 } } }),
    { spec: { strategy: { $patch: "replace", type: "Recreate" } } },
  ],
  deleteMapAbsent: [T({ containers: [c("a")] }), P({ securityContext: { $patch: "delete" } })],
  strayOrderKey: [T({ containers: [c("a"), c("b")] }), P({ $setElementOrder: [{ name: "b" }] })],
  strayDeleteFromKey: [
    CM({ finalizers: ["a"] }),
    { metadata: { "$deleteFromPrimitiveListx/finalizers": ["a"] } },
  ],
  dollarField: [D({ replicas: 1 }), { spec: { $extra: { a: 1, b: null } } }],
  finalizersOrderEmptyMany: [
    CM({ finalizers: Array.from({ length: 23 }, (_, i) => `f${i}`) }),
    { metadata: { "$setElementOrder/finalizers": [], finalizers: ["n1", "f3", "n2", "f20"] } },
  ],
  containersOrderEmptyMany: [
    T({ containers: Array.from({ length: 22 }, (_, i) => c(`c${i}`)) }),
    P({ "$setElementOrder/containers": [], containers: [c("n1"), { name: "c21", image: "x" }, c("n0")] }),
  ],
  setOrderReplaceFirst: [
    T({ containers: [c("a"), c("b")] }),
    P({ "$setElementOrder/containers": [{ name: "z" }], containers: [{ $patch: "replace" }, c("z")] }),
  ],
  setOrderNotList: [CM({ finalizers: ["a"] }), { metadata: { "$setElementOrder/finalizers": "a" } }],
  setOrderWrongOrder: [
    T({ containers: [c("a"), c("b")] }),
    P({
      "$setElementOrder/containers": [{ name: "b" }, { name: "a" }],
      containers: [
        { name: "a", image: "a:2" },
        { name: "b", image: "b:2" },
      ],
    }),
  ],
  unknownDirective: [D({ replicas: 1 }), { spec: { $bogus: 1 } }],
  mixedTolerations: [
    T({ containers: [c("a")], tolerations: [{ key: "k", operator: "Exists" }] }),
    P({ tolerations: [{ key: "j", operator: "Exists" }] }),
  ],
  envDup: [
    T({
      containers: [
        c("a", {
          env: [
            { name: "A", value: "1" },
            { name: "B", value: "2" },
          ],
        }),
      ],
    }),
    P({
      containers: [
        {
          name: "a",
          env: [
            { name: "B", value: "3" },
            { name: "C", value: "4" },
          ],
        },
      ],
    }),
  ],
  mixedScalarTypes: [CM({ finalizers: ["a"] }), { metadata: { finalizers: [1] } }],
  listOfLists: [CM({ finalizers: [["a"]] }), { metadata: { finalizers: [["b"]] } }],
  nullInList: [CM({ finalizers: ["a"] }), { metadata: { finalizers: [null] } }],
  typeChangeListToMap: [
    T({ containers: [c("a")], volumes: [{ name: "v" }] }),
    P({ volumes: { a: 1, b: null } }),
  ],
  typeChangeNullToList: [D({ paused: null }), { spec: { paused: [{ a: 1, b: null }] } }],
  badDirectiveMap: [D({ replicas: 1 }), { spec: { $patch: "bogus" } }],
  badDirectiveList: [T({ containers: [c("a")] }), P({ containers: [{ name: "a", $patch: "bogus" }] })],
  retainNotList: [D({ strategy: { type: "x" } }), { spec: { strategy: { $retainKeys: "type" } } }],
  deleteFromNotList: [
    CM({ finalizers: ["a"] }),
    { metadata: { "$deleteFromPrimitiveList/finalizers": "a" } },
  ],
};

/**
 * kubectl alone: inputs kustomize v5.5 answers oddly (it drops or empties a list whose items lack their
 * merge key or repeat one, and ignores a port patched without its protocol), where gitfleet follows
 * kubectl in both flavours; docs/kustomize.md lists them.
 */
const kubectlOnly = {
  nullMergeKey: [
    T({ containers: [{ name: null, image: "a:1" }, c("b")] }),
    P({ containers: [{ name: null, image: "a:2" }] }),
  ],
  containersEmptyPatch: [
    T({ containers: [c("a"), c("b"), c("a", { image: "a:2" })] }),
    P({ containers: [] }),
  ],
  setOrderDuplicates: [
    T({ containers: [c("a"), c("a", { image: "a:2" }), c("b")] }),
    P({ "$setElementOrder/containers": [{ name: "b" }], containers: [] }),
  ],
  setOrderKeyless: [
    T({ containers: [{ image: "x:1" }, c("a")] }),
    P({ "$setElementOrder/containers": [{ name: "a" }] }),
  ],
  mapMergeKeys: [
    T({
      containers: [
        { name: { x: 1 }, image: "a:1" },
        { name: { x: 2 }, image: "b:1" },
      ],
    }),
    P({ containers: [{ name: { x: 2 }, image: "b:2" }] }),
  ],
  mergeDirectiveList: [T({ containers: [c("a")] }), P({ containers: [{ name: "a", $patch: "merge" }] })],
  deleteNoKey: [T({ containers: [c("a")] }), P({ containers: [{ $patch: "delete" }] })],
  itemNoKey: [T({ containers: [c("a")] }), P({ containers: [{ image: "b:1" }] })],
  keylessOriginal: [
    T({ containers: [{ image: "x:1" }, c("a")] }),
    P({ containers: [{ name: "a", image: "a:2" }] }),
  ],
  keylessOrderEntry: [T({ containers: [c("a")] }), P({ "$setElementOrder/containers": [{ image: "a:1" }] })],
  itemsNotMaps: [T({ containers: [c("a")] }), P({ containers: ["x"] })],
  portsKey: [
    T({ containers: [c("a", { ports: [{ containerPort: 80, protocol: "TCP" }] })] }),
    P({ containers: [{ name: "a", ports: [{ containerPort: 81 }, { containerPort: 80, name: "http" }] }] }),
  ],
};

/** kustomize alone: lists the schema replaces (args) and merges (containers, finalizers), new fields. */
const kustomizeOnly = {
  replacedListAsWritten: [
    T({ containers: [c("a", { args: ["x"] })] }),
    P({ containers: [{ name: "a", args: ["y", "x"] }] }),
  ],
  newReplacedListKeepsNulls: [
    T({ containers: [c("a")] }),
    P({
      containers: [{ name: "a", command: ["sh"], args: ["-c"] }],
      hostAliases: [{ ip: "1.2.3.4", hostnames: ["h"] }],
    }),
  ],
  newMergedListCleaned: [
    T({ containers: [c("a")] }),
    P({
      volumes: [
        { name: "v", emptyDir: {}, secret: null },
        { name: "u", $patch: "delete" },
      ],
    }),
  ],
  newUnknownListAsWritten: [D({ replicas: 1 }), { spec: { extra: [{ a: null }, { $patch: "delete" }] } }],
  containersPrepend: [
    T({ containers: [c("a"), c("b"), c("c")] }),
    P({ containers: [{ name: "c", image: "c:2" }, c("d")] }),
  ],
};

const dir = mkdtempSync(join(tmpdir(), "gitfleet-smp-record-"));
const identity = (object) => ({
  apiVersion: object.apiVersion,
  kind: object.kind,
  metadata: { name: object.metadata.name },
});
const sortKeys = (v) =>
  Array.isArray(v)
    ? v.map(sortKeys)
    : v && typeof v === "object"
      ? Object.fromEntries(
          Object.keys(v)
            .sort()
            .map((k) => [k, sortKeys(v[k])]),
        )
      : v;

function reference(flavor, object, patch) {
  try {
    if (flavor === "kubectl") {
      writeFileSync(join(dir, "o.json"), JSON.stringify(object));
      const out = execFileSync(
        "kubectl",
        [
          "patch",
          "--local",
          "-f",
          join(dir, "o.json"),
          "--type",
          "strategic",
          "-p",
          JSON.stringify(patch),
          "-o",
          "json",
        ],
        { stdio: ["ignore", "pipe", "pipe"] },
      );
      return JSON.parse(out.toString());
    }
    writeFileSync(join(dir, "o.yaml"), JSON.stringify(object));
    writeFileSync(
      join(dir, "p.yaml"),
      JSON.stringify({
        ...patch,
        ...identity(object),
        metadata: { ...patch.metadata, ...identity(object).metadata },
      }),
    );
    writeFileSync(
      join(dir, "kustomization.yaml"),
      JSON.stringify({ resources: ["o.yaml"], patches: [{ path: "p.yaml" }] }),
    );
    return parse(
      execFileSync("kubectl", ["kustomize", dir], { stdio: ["ignore", "pipe", "pipe"] }).toString(),
    );
  } catch (error) {
    return { refused: String(error.stderr).trim().slice(0, 300) };
  }
}

// The patch as each tool applies it: kustomize's carries its target's identity.
const applied = (flavor, object, patch) =>
  flavor === "kustomize"
    ? { ...patch, ...identity(object), metadata: { ...patch.metadata, ...identity(object).metadata } }
    : patch;

function agree(ours, answer) {
  if (ours.ok && !answer.refused)
    return JSON.stringify(sortKeys(ours.value)) === JSON.stringify(sortKeys(answer));
  return !ours.ok && !!answer.refused;
}

function record(flavor, cases, file) {
  const out = [];
  for (const [name, [object, patch]] of Object.entries(cases)) {
    const answer = reference(flavor, object, patch);
    const group = object.kind === "Deployment" ? "apps" : "";
    const ours = applyStrategicMergePatch(
      object,
      applied(flavor, object, patch),
      schemaFor(group, object.kind),
      flavor,
    );
    const same = agree(ours, answer);
    console.log(flavor, name, same ? "SAME" : "DIFF", ours.ok ? "" : `ours refused: ${ours.error}`);
    if (!same) console.log("  ours", JSON.stringify(ours), "\n  reference", JSON.stringify(answer));
    out.push({
      name,
      object,
      patch,
      ...(answer.refused ? { refused: ours.ok ? "" : ours.error } : { result: answer }),
    });
  }
  writeFileSync(new URL(`../test/golden/${file}`, import.meta.url), `${JSON.stringify(out, null, 1)}\n`);
}

try {
  record("kubectl", { ...common, ...kubectlOnly }, "smp-edge-cases.json");
  record("kustomize", { ...common, ...kustomizeOnly }, "smp-kustomize-edge-cases.json");
} finally {
  rmSync(dir, { recursive: true, force: true });
}
