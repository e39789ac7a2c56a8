import { describe, expect, it } from "vitest";
import type { Json } from "../../src/apimachinery/json.js";
import type { ResourceInterpreter } from "../../src/model/types.js";
import { divideJobCompletions, writeReplicas } from "../../src/render/replicas.js";

const cloneSetInterpreter: ResourceInterpreter = {
  apiVersion: "gitfleet.io/v1alpha1",
  kind: "ResourceInterpreter",
  metadata: { name: "kruise-cloneset" },
  spec: {
    target: { apiVersion: "apps.kruise.io/v1alpha1", kind: "CloneSet" },
    replicasPath: "spec.replicas",
  },
  origin: { file: "interpreters/cloneset.yaml", index: 0 },
};

describe("writing scheduled replicas through the interpreter", () => {
  it.each<[string, Json, string, ResourceInterpreter | undefined, Json]>([
    [
      "Deployment spec.replicas",
      { spec: { replicas: 12 } },
      "apps/Deployment",
      undefined,
      { spec: { replicas: 5 } },
    ],
    ["StatefulSet spec.replicas", { spec: {} }, "apps/StatefulSet", undefined, { spec: { replicas: 5 } }],
    [
      "Job parallelism, completions untouched",
      { spec: { parallelism: 4, completions: 8 } },
      "batch/Job",
      undefined,
      { spec: { parallelism: 5, completions: 8 } },
    ],
    [
      "a CloneSet through its ResourceInterpreter",
      { spec: { replicas: 24 } },
      "apps.kruise.io/CloneSet",
      cloneSetInterpreter,
      { spec: { replicas: 5 } },
    ],
    [
      "a kind without replicas is unchanged",
      { data: { a: "1" } },
      "/ConfigMap",
      undefined,
      { data: { a: "1" } },
    ],
  ])("%s", (_name, object, kind, interpreter, expected) => {
    expect(writeReplicas(object, kind, 5, interpreter)).toEqual(expected);
  });

  it("divides Job completions by the parallelism each cluster got", () => {
    const parallelism = new Map([
      ["a", 3],
      ["b", 1],
    ]);
    expect(divideJobCompletions(8, parallelism, "ascending")).toEqual(
      new Map([
        ["a", 6],
        ["b", 2],
      ]),
    );
    expect(
      divideJobCompletions(
        3,
        new Map([
          ["a", 1],
          ["b", 1],
        ]),
        "descending",
      ),
    ).toEqual(
      new Map([
        ["a", 1],
        ["b", 2],
      ]),
    );
  });
});
