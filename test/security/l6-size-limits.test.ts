import { describe, expect, it } from "vitest";
import { loadFleet } from "../../src/load/load-fleet.js";
import { formatProblem } from "../../src/model/problem.js";
import { minimalFleetWith } from "../helpers/minimal-fleet.js";

/**
 * L6 (security audit): no size limits — a 50 MB manifest cost 2 GB of memory, ConfigMaps beyond the
 * API server's 1 MiB limit validated, and `0 0 30 2 *` validated although it never runs.
 */

const errors = (files: Record<string, string>) =>
  loadFleet(minimalFleetWith(files))
    .problems.filter((p) => p.severity === "error")
    .map(formatProblem);

describe("L6: content limits", () => {
  it("refuses a file over 8 MiB before parsing it", () => {
    const big = `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n  x: "${"A".repeat(9 * 2 ** 20)}"\n`;
    expect(errors({ "apps/web/big.yaml": big })).toEqual([
      "apps/web/big.yaml:1:1: error: the file is 9.0 MiB; files of the fleet repo may hold at most 8 MiB (split it) [TOO_LARGE]",
    ]);
  });

  it.each([
    ["a ConfigMap", "ConfigMap", `data:\n  x: "${"A".repeat(1_100_000)}"\n`],
    ["a ConfigMap's binaryData", "ConfigMap", `binaryData:\n  x: "${"QUFB".repeat(400_000)}"\n`],
    ["a Secret's data", "Secret", `data:\n  x: "${"QUFB".repeat(400_000)}"\n`],
    ["a Secret's stringData", "Secret", `stringData:\n  x: "${"A".repeat(1_100_000)}"\n`],
  ])("refuses %s over the API server's 1 MiB limit, naming no value", (_name, kind, body) => {
    const found = errors({
      "apps/web/big.yaml": `apiVersion: v1\nkind: ${kind}\nmetadata:\n  name: big\n${body}`,
    });
    expect(found).toEqual([
      expect.stringMatching(
        new RegExp(
          `^apps/web/big\\.yaml:1:1: error: ${kind} big holds 1\\.\\d MiB of data; the API server refuses more than 1 MiB \\[TOO_LARGE\\]$`,
        ),
      ),
    ]);
    expect(found.join("")).not.toContain("AAAA");
  });

  it.each([
    ["0 0 30 2 *", "no month in the schedule has a day 30 (the longest has 29)"],
    ["0 0 31 4,6,9,11 *", "no month in the schedule has a day 31 (the longest has 30)"],
  ])("refuses the cron schedule %s, which never runs", (schedule, reason) => {
    const cron = `apiVersion: gitfleet.io/v1alpha1\nkind: CronScale\nmetadata:\n  name: peak\n  namespace: shop\nspec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n  rules:\n    - name: never\n      schedule: "${schedule}"\n      targetReplicas: 3\n`;
    expect(errors({ "autoscaling/peak.yaml": cron })).toEqual([
      `autoscaling/peak.yaml:10:17: error: /spec/rules/0/schedule: "${schedule}" is not a cron schedule: day of month: ${reason} [SCHEMA_VIOLATION]`,
    ]);
  });
});
