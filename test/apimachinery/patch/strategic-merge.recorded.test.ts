import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { Json } from "../../../src/apimachinery/json.js";
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

/** Edge cases of every directive and refusal, with kubectl's answer (or the message ours refuses with). */
interface EdgeCase {
  readonly name: string;
  readonly object: Json;
  readonly patch: Json;
  readonly result?: Json;
  readonly refused?: string;
}
const edges = JSON.parse(
  readFileSync(new URL("../../golden/smp-edge-cases.json", import.meta.url), "utf8"),
) as EdgeCase[];

describe("strategic merge patch on the directives' edges, as kubectl answered", () => {
  it.each(edges.map((e) => [e.name, e] as const))("%s", (_name, edge) => {
    const kind = String((edge.object as { kind: string }).kind);
    const actual = applyStrategicMergePatch(
      edge.object,
      edge.patch,
      schemaFor(kind === "Deployment" ? "apps" : "", kind),
    );
    if (edge.refused !== undefined) expect(actual).toEqual({ ok: false, error: edge.refused });
    else expect(actual).toEqual({ ok: true, value: edge.result });
  });
});
