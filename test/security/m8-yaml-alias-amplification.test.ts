import { describe, expect, it } from "vitest";
import { loadFleet } from "../../src/load/load-fleet.js";
import { formatProblem } from "../../src/model/problem.js";
import { expandedSize } from "../../src/model/yaml-source.js";
import { minimalFleetWith } from "../helpers/minimal-fleet.js";

/**
 * M8 (security audit): `maxAliasCount` bounded how many aliases a file holds, not what they expand
 * to: a 1 MB file validated and rendered a 301 MB status blob, and 900 aliases crashed every
 * reconcile. A document is now measured as it expands, and refused past 3 MiB — the most the API
 * server would ever take — without expanding it.
 */

function aliased(anchorBytes: number, aliases: number): string {
  const keys = Array.from({ length: aliases }, (_, i) => `  k${i}: *s`).join("\n");
  return `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\n  annotations:\n    x: &s "${"A".repeat(anchorBytes)}"\ndata:\n${keys}\n`;
}

describe("M8: YAML alias amplification is bounded by expanded size", () => {
  it.each([
    ["the audit's 1 MB anchor aliased 300 times", aliased(1_000_000, 300)],
    ["the audit's 900-alias crash", aliased(1_000_000, 900)],
    ["100 KB aliased 40 times (4 MB, under the alias count)", aliased(100_000, 40)],
  ])("%s is TOO_LARGE at the document", (_name, text) => {
    const result = loadFleet(minimalFleetWith({ "apps/web/big.yaml": text }));
    expect(result.model).toBeUndefined();
    expect(result.problems.filter((p) => p.severity === "error").map(formatProblem)).toEqual([
      "apps/web/big.yaml:1:1: error: the document is larger than 3 MiB once its aliases are expanded; the API server takes no object that large [TOO_LARGE]",
    ]);
  });

  it("keeps documents whose aliases expand to little", () => {
    const result = loadFleet(minimalFleetWith({ "apps/web/big.yaml": aliased(1000, 20) }));
    expect(result.problems.filter((p) => p.severity === "error")).toEqual([]);
  });

  it("stops measuring at the limit: a million-fold expansion costs the limit, not the expansion", () => {
    const leaf = "x".repeat(100);
    let node: unknown = leaf;
    for (let i = 0; i < 12; i++) node = Array.from({ length: 10 }, () => node);
    expect(expandedSize(node, 1000)).toBe("too-large");
    expect(expandedSize({ a: "bc" }, 1000)).toBe(3 + 4);
  });
});
