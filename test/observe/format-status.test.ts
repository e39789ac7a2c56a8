import { describe, expect, it } from "vitest";
import { parseKubeVersion } from "../../src/apimachinery/kube-version.js";
import { type ClusterFacts, fleetView } from "../../src/observe/fleet-view.js";
import { amount, formatClustersBelow, formatStatus } from "../../src/observe/format-status.js";
import { appStatusPath } from "../../src/status/status-files.js";
import { upgradeStatusText } from "../../src/status/upgrade-file.js";
import { fleetFiles } from "../helpers/status-files.js";

const FACTS: ClusterFacts[] = [
  { name: "east", provider: "aws", region: "us-east", mode: "push", unschedulable: false, labels: {} },
  { name: "west", provider: "gcp", region: "eu-west", mode: "push", unschedulable: false, labels: {} },
];

describe("gitfleet status's text", () => {
  it("prints clusters and apps worst first, then why anything is not Healthy (golden)", async () => {
    const text = formatStatus(fleetView(fleetFiles(), FACTS, "d".repeat(40)));
    await expect(text).toMatchFileSnapshot("../golden/status/fleet.txt");
    // Worst first in both tables, whatever the golden file says.
    const lines = text.split("\n");
    expect(lines.findIndex((l) => l.startsWith("west "))).toBeLessThan(
      lines.findIndex((l) => l.startsWith("east ")),
    );
    expect(lines.findIndex((l) => l.startsWith("web "))).toBeLessThan(
      lines.findIndex((l) => l.startsWith("api ")),
    );
    expect(text).toContain("web in west: Degraded — Deployment shop/web: 1 of 2 replicas ready");
  });

  it("lists the workloads whose replicas fit nowhere, each on one bounded line", () => {
    const files = new Map(fleetFiles());
    const api = files.get(appStatusPath("api")) ?? "";
    const line = "2 of 4 replicas of Deployment shop/api fit nowhere: the selected clusters fit 2 (pods)";
    files.set(
      appStatusPath("api"),
      api.replace("  replicas: 2\n", `  replicas: 4\n  unplaced: 2\n  shortfall: "${line}\\nforged: line"\n`),
    );
    const view = fleetView(files, FACTS);
    expect(view.apps.find((a) => a.name === "api")?.workloads[0]?.shortfall).toBe(`${line} forged: line`);
    expect(formatStatus(view)).toContain(`\nFit nowhere:\n  api: ${line} forged: line\n`);
    expect(formatStatus(fleetView(fleetFiles(), FACTS))).not.toContain("Fit nowhere:");
  });

  it("lists control-plane upgrades with each batch's state, and why a batch failed", () => {
    const files = new Map(fleetFiles());
    files.set(
      "status/upgrades/cve.yaml",
      upgradeStatusText({
        upgrade: "cve",
        version: "v1.36.3",
        batches: [
          {
            name: "canary",
            state: "Failed",
            since: "2026-12-02T10:00:00.000Z",
            reason: "pc-1: Deployment kube-apiserver 1 CrashLoopBackOff; onFailure: Halt",
            clusters: { "pc-1": "Degraded" },
          },
          { name: "rest", state: "Pending", since: "2026-12-02T10:00:00.000Z", clusters: {} },
        ],
      }),
    );
    const text = formatStatus(fleetView(files, FACTS));
    expect(text).toContain(
      "Control-plane upgrades:\n  cve → v1.36.3: canary Failed, rest Pending\n    canary: pc-1: Deployment kube-apiserver 1 CrashLoopBackOff; onFailure: Halt\n",
    );
    expect(formatStatus(fleetView(fleetFiles(), FACTS))).not.toContain("Control-plane upgrades:");
  });

  it.each([
    [
      "v1.33.5",
      "1 cluster below v1.33.5:\nCLUSTER  VERSION  MODE  STATE\neast     v1.33.4  push  Healthy\n\nVersion not reported yet: west\n",
      1,
    ],
    ["v1.33.4", "No cluster reports a version below v1.33.4.\n\nVersion not reported yet: west\n", 0],
    [
      "v1.34.0-rc.1",
      "1 cluster below v1.34.0-rc.1:\nCLUSTER  VERSION  MODE  STATE\neast     v1.33.4  push  Healthy\n\nVersion not reported yet: west\n",
      1,
    ],
  ])("lists the clusters below %s, and those whose version is unknown", (version, text, count) => {
    const view = fleetView(fleetFiles(), FACTS, "d".repeat(40));
    const listed = formatClustersBelow(
      view,
      parseKubeVersion(version) as NonNullable<ReturnType<typeof parseKubeVersion>>,
    );
    expect(listed).toEqual({ text, below: count });
  });

  it.each([
    ["cpu", 0.6, "0.6"],
    ["cpu", 12, "12"],
    ["memory", 805306368, "768Mi"],
    ["memory", 51539607552, "48Gi"],
    ["memory", 1.5 * 2 ** 30, "1.5Gi"],
    ["pods", 6, "6"],
    ["cpu", 0, "0"],
  ] as const)("%s %d reads %s", (resource, value, text) => {
    expect(amount(resource, value)).toBe(text);
  });
});
