import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { asMap, type Json, type JsonMap } from "../../../src/apimachinery/json.js";
import { schemaFor } from "../../../src/apimachinery/patch/patch-schema.js";
import { applyStrategicMergePatch } from "../../../src/apimachinery/patch/strategic-merge.js";
import { jsonDigest, smpCases } from "../../helpers/smp-generators.js";

/**
 * The differential cases of strategic-merge.kubectl.test.ts replayed against kubectl's recorded
 * answers (test/golden/smp-kubectl-answers.json: a digest of each result, or "refused"), without
 * running kubectl: fast enough for mutation testing to run on every mutant. The kubectl test keeps
 * the record true.
 */
const recorded = JSON.parse(
  readFileSync(new URL("../../golden/smp-kubectl-answers.json", import.meta.url), "utf8"),
) as { seed: number; answers: string[] };

describe("strategic merge patch against kubectl's recorded answers", () => {
  it(`gives kubectl's answer on all ${recorded.answers.length} recorded cases`, () => {
    const cases = smpCases(recorded.answers.length, recorded.seed);
    const differing: string[] = [];
    cases.forEach(([object, patch], index) => {
      const kind = String((object as { kind: string }).kind);
      const group = kind === "Deployment" || kind === "StatefulSet" ? "apps" : "";
      const actual = applyStrategicMergePatch(object, patch, schemaFor(group, kind));
      const ours = actual.ok ? jsonDigest(actual.value) : "refused";
      if (ours !== recorded.answers[index])
        differing.push(
          `case ${index}: kubectl ${recorded.answers[index]}, ours ${ours} (patch ${JSON.stringify(patch)})`,
        );
    });
    expect(differing).toEqual([]);
    // The record holds answers of both kinds: a record of refusals alone would prove little.
    expect(recorded.answers.filter((a) => a === "refused").length).toBeLessThan(recorded.answers.length / 4);
  });
});

/**
 * Edge cases of every directive and refusal with the reference's answer (or the message ours refuses
 * with), recorded by scripts/record-smp-edge-cases.mjs: kubectl patch's for the kubectl flavour,
 * kubectl kustomize's for the kustomize flavour (a patch there carries the target's identity).
 */
interface EdgeCase {
  readonly name: string;
  readonly object: Json;
  readonly patch: Json;
  readonly result?: Json;
  readonly refused?: string;
}
const recordedEdges = (file: string) =>
  JSON.parse(readFileSync(new URL(`../../golden/${file}`, import.meta.url), "utf8")) as EdgeCase[];

describe.each([
  ["kubectl", "smp-edge-cases.json"],
  ["kustomize", "smp-kustomize-edge-cases.json"],
] as const)("strategic merge patch on the directives' edges, as %s answered", (flavor, file) => {
  const edges = recordedEdges(file);
  it.each(edges.map((e) => [e.name, e] as const))("%s", (_name, edge) => {
    const object = edge.object as { apiVersion: string; kind: string; metadata: { name: string } };
    const patch =
      flavor === "kustomize"
        ? {
            ...(edge.patch as JsonMap),
            apiVersion: object.apiVersion,
            kind: object.kind,
            metadata: { ...asMap((edge.patch as JsonMap).metadata ?? {}), name: object.metadata.name },
          }
        : edge.patch;
    const actual = applyStrategicMergePatch(
      edge.object,
      patch,
      schemaFor(object.kind === "Deployment" ? "apps" : "", object.kind),
      flavor,
    );
    if (edge.refused !== undefined) expect(actual).toEqual({ ok: false, error: edge.refused });
    else expect(actual).toEqual({ ok: true, value: edge.result });
  });

  it("holds answers and refusals both", () => {
    expect(edges.filter((e) => e.refused !== undefined).length).toBeGreaterThan(2);
    expect(edges.filter((e) => e.result !== undefined).length).toBeGreaterThan(edges.length / 2);
  });
});
