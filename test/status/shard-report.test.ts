import { describe, expect, it } from "vitest";
import type { ClusterHealth } from "../../src/failover/cluster-health.js";
import {
  MAX_SHARD_REPORT_BYTES,
  readShardReport,
  type ShardReport,
  shardReportText,
} from "../../src/status/shard-report.js";
import type { ClusterSyncResult } from "../../src/sync/sync-result.js";

const COMMIT = "a".repeat(40);

const result: ClusterSyncResult = {
  cluster: "east",
  sourceCommit: COMMIT,
  reachable: true,
  objects: [
    {
      identity: "apps/Deployment/web/web",
      app: "web",
      action: "configured",
      health: { status: "Progressing", reason: "1 of 3 replicas ready" },
      desiredReplicas: 3,
      readyReplicas: 1,
      drift: ["spec.replicas"],
    },
    {
      identity: "/ConfigMap/web/web-config",
      app: "web",
      action: "held",
      health: { status: "Healthy" },
      held: "waiting for the rollout",
      heldBy: "rollout",
    },
  ],
  pruned: [{ identity: "/Service/web/old", app: "web", outcome: "deleted" }],
  pruneBlocked: { token: "tok-1", reasons: ["over the budget"], count: 4 },
  retained: ["/ConfigMap/web/kept"],
  inventory: new Map([
    [
      "apps/Deployment/web/web",
      {
        identity: "apps/Deployment/web/web",
        apiVersion: "apps/v1",
        kind: "Deployment",
        namespace: "web",
        name: "web",
        app: "web",
        uid: "0b7c5a9e-0000-4000-8000-000000000001",
        digest: "d1",
      },
    ],
  ]),
  pruneBase: COMMIT,
  version: "v1.32.0",
  served: { "apps/v1": ["Deployment"] },
};

const down: ClusterHealth = {
  ready: false,
  reason: "Unreachable",
  since: 1_700_000_000_000,
  failures: 3,
  successes: 0,
  lastError: "connect ECONNREFUSED",
};

const report: ShardReport = {
  shard: 1,
  holder: "replica-a_1234",
  conditions: new Map([
    ["east", { ready: true, since: 1_700_000_000_000, failures: 0, successes: 3 }],
    ["west", down],
  ]),
  results: new Map([["east", result]]),
};

describe("shard reports", () => {
  it("read back what was written: conditions and sync results, inventories included", () => {
    const back = readShardReport(shardReportText(report), 1, new Set(["east", "west"]));
    expect(back?.holder).toBe("replica-a_1234");
    // Conditions without the probes' running counts.
    expect(back?.conditions).toEqual(
      new Map([
        ["east", { ready: true, since: 1_700_000_000_000, failures: 0, successes: 0 }],
        ["west", { ...down, failures: 0 }],
      ]),
    );
    expect(back?.results.get("east")).toEqual(result);
    expect(shardReportText(back as ShardReport)).toBe(shardReportText(report));
  });

  it("change only when a condition does, not with every probe's count", () => {
    const probedAgain: ShardReport = {
      ...report,
      conditions: new Map([
        ["east", { ready: true, since: 1_700_000_000_000, failures: 0, successes: 40 }],
        ["west", { ...down, failures: 9 }],
      ]),
    };
    expect(shardReportText(probedAgain)).toBe(shardReportText(report));
  });

  it("keep only the clusters the shard has", () => {
    const back = readShardReport(shardReportText(report), 1, new Set(["west"]));
    expect([...(back?.conditions.keys() ?? [])]).toEqual(["west"]);
    expect(back?.results.size).toBe(0);
  });

  it.each([
    ["another shard's report", (t: string) => t, 0],
    ["not JSON", () => "{ not json", 1],
    ["not a report", () => JSON.stringify({ kind: "Other", shard: 1 }), 1],
    ["too large", () => " ".repeat(MAX_SHARD_REPORT_BYTES + 1), 1],
  ])("refuse %s", (_what, edit, shard) => {
    expect(readShardReport(edit(shardReportText(report)), shard, new Set(["east", "west"]))).toBeUndefined();
  });

  it("leave out values that do not validate", () => {
    const text = JSON.stringify({
      kind: "ShardReport",
      shard: 1,
      holder: "h",
      clusters: {
        east: {
          condition: { ready: "yes", since: 1, failures: 0, successes: 0 },
          sync: {
            sourceCommit: COMMIT,
            reachable: true,
            objects: [
              { identity: "x", app: "web", action: "exploded", health: { status: "Healthy" } },
              { identity: "y", app: "web", action: "created", health: { status: "Fine" } },
              {
                identity: "z",
                app: "web",
                action: "created",
                health: { status: "Healthy" },
                readyReplicas: -2,
              },
            ],
            inventory: [
              { apiVersion: "v1", kind: "ConfigMap", name: "../etc", app: "web", uid: "u", digest: "d" },
            ],
          },
        },
        west: { sync: { sourceCommit: "not-a-commit", reachable: true } },
      },
    });
    const back = readShardReport(text, 1, new Set(["east", "west"]));
    expect(back?.conditions.size).toBe(0);
    expect(back?.results.get("east")?.objects).toEqual([
      { identity: "z", app: "web", action: "created", health: { status: "Healthy" } },
    ]);
    expect(back?.results.has("west")).toBe(false);
  });
});
