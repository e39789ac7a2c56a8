import { describe, expect, it } from "vitest";
import { clusterObserved } from "../../src/status/observed-status.js";
import { MAX_QUOTA_RESOURCES, quotaUsageOf } from "../../src/sync/quota-usage.js";
import type { ClusterSyncResult, ObjectResult } from "../../src/sync/sync-result.js";

// A member's ResourceQuota status is what a FederatedResourceQuota's namespace uses there; it is
// read from what the member says, so only resource names and quantities within bounds are kept.

const quota = (status: unknown) => ({
  apiVersion: "v1",
  kind: "ResourceQuota",
  metadata: { name: "shop", namespace: "shop" },
  status,
});

describe("a ResourceQuota's usage as a member reports it", () => {
  it("keeps the limits and the usage", () => {
    expect(
      quotaUsageOf(quota({ hard: { "requests.cpu": "4" }, used: { "requests.cpu": "1500m" } }) as never),
    ).toEqual({
      hard: { "requests.cpu": "4" },
      used: { "requests.cpu": "1500m" },
    });
  });

  it.each([
    ["not counted yet", {}],
    ["another kind", undefined],
  ])("is nothing when %s", (_case, status) => {
    const live = status === undefined ? { apiVersion: "v1", kind: "ConfigMap" } : quota(status);
    expect(quotaUsageOf(live as never)).toBeUndefined();
  });

  it("drops what is no quantity or no resource name, and keeps at most the bound", () => {
    const used: Record<string, unknown> = {
      pods: 3,
      "requests.memory": "lots",
      "Bad Name": "1",
      "requests.cpu": "9".repeat(70),
    };
    for (let i = 0; i < MAX_QUOTA_RESOURCES + 10; i++)
      used[`requests.example.com/r${String(i).padStart(3, "0")}`] = "1";
    const read = quotaUsageOf(quota({ used }) as never);
    expect(read?.used.pods).toBe("3");
    expect(Object.keys(read?.used ?? {})).not.toContain("requests.memory");
    expect(Object.keys(read?.used ?? {})).not.toContain("Bad Name");
    expect(Object.keys(read?.used ?? {})).not.toContain("requests.cpu");
    expect(Object.keys(read?.used ?? {}).length).toBeLessThanOrEqual(MAX_QUOTA_RESOURCES);
  });

  it("is recorded in the cluster's status file, by namespace and name", () => {
    const object: ObjectResult = {
      identity: "/ResourceQuota/shop/shop",
      app: "gitfleet-quotas",
      action: "unchanged",
      health: { status: "Healthy" },
      quotaUsage: { hard: { "requests.cpu": "4" }, used: { "requests.cpu": "1500m" } },
    } as ObjectResult;
    const result = {
      cluster: "east",
      sourceCommit: "a".repeat(40),
      reachable: true,
      objects: [object],
      pruned: [],
      retained: [],
      inventory: new Map(),
    } as unknown as ClusterSyncResult;
    expect(clusterObserved(result)).toContain(
      'quotas:\n    shop/shop:\n      hard:\n        requests.cpu: "4"\n      used:\n        requests.cpu: 1500m\n',
    );
  });
});
