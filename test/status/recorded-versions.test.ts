import { describe, expect, it } from "vitest";
import { clusterObserved } from "../../src/status/observed-status.js";
import { recordedVersions } from "../../src/status/recorded-observations.js";
import type { ClusterSyncResult } from "../../src/sync/sync-result.js";

// A restarted controller orders a hosted control plane's components by the /version the status
// branch recorded for the hosted cluster, until it has synced it again.

const synced = (cluster: string, version?: string): ClusterSyncResult =>
  ({
    cluster,
    sourceCommit: "a".repeat(40),
    reachable: true,
    objects: [],
    pruned: [],
    retained: [],
    inventory: new Map(),
    ...(version ? { version } : {}),
  }) as unknown as ClusterSyncResult;

describe("recorded Kubernetes versions", () => {
  const files = new Map([
    ["status/clusters/pc-1.yaml", clusterObserved(synced("pc-1", "v1.36.1"))],
    ["status/clusters/pc-2.yaml", clusterObserved(synced("pc-2"))],
    ["status/clusters/meta-1.yaml", clusterObserved(synced("meta-1", "v1.36.3"))],
    ["status/clusters/pc-3.yaml", `observed:\n  kubernetesVersion: "${"v".repeat(200)}"\n`],
  ]);

  it("reads the version of each cluster asked for, and only those", () => {
    expect(Object.fromEntries(recordedVersions(files, ["pc-1", "pc-2", "pc-9"]))).toEqual({
      "pc-1": "v1.36.1",
    });
    expect(Object.fromEntries(recordedVersions(files, ["meta-1"]))).toEqual({ "meta-1": "v1.36.3" });
  });

  it("skips a value no /version gives (the branch is untrusted input)", () => {
    expect(recordedVersions(files, ["pc-3"]).size).toBe(0);
  });
});
