import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
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
