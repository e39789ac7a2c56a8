import { describe, expect, it } from "vitest";
import type { DesiredObject } from "../../src/sync/desired-objects.js";
import type { ClusterSyncResult, ObjectResult } from "../../src/sync/sync-result.js";
import { changedApps, syncedSet, withOtherApps } from "../../src/sync/sync-scope.js";
import { appConfigMap, desiredObject } from "../helpers/member-sync.js";

// Which apps a sync for a new render takes, after a complete sync: the ones whose objects changed.

const healthy = { status: "Healthy" } as const;

function result(
  desired: readonly DesiredObject[],
  extra: Partial<ClusterSyncResult> = {},
): ClusterSyncResult {
  return {
    cluster: "east",
    sourceCommit: "a".repeat(40),
    reachable: true,
    objects: desired.map((d) => ({ identity: d.identity, app: d.app, action: "created", health: healthy })),
    pruned: [],
    retained: [],
    inventory: new Map(),
    ...extra,
  };
}

const web = [appConfigMap("web-a", "web"), appConfigMap("web-b", "web")];
const api = [appConfigMap("api-a", "api")];
const all = [...web, ...api];

describe("the set a complete sync leaves", () => {
  it("is every desired object with its app and digest", () => {
    const set = syncedSet(all, result(all));
    expect([...(set?.keys() ?? [])]).toEqual(all.map((d) => d.identity));
    expect(set?.get(web[0]?.identity ?? "")).toEqual({ app: "web", digest: web[0]?.digest });
  });

  const incomplete: [string, Partial<ClusterSyncResult> | ((r: ClusterSyncResult) => ClusterSyncResult)][] = [
    ["unreachable", { reachable: false }],
    ["an inventory that could not be written", { error: "the inventory could not be written: x" }],
    ["a wave still ahead", { waiting: true }],
    ["a blocked prune", { pruneBlocked: { token: "t", reasons: ["budget"], count: 3 } }],
    ["a failed prune", { pruned: [{ identity: "x", app: "web", outcome: "failed" }] }],
    [
      "hooks",
      { hooks: [{ app: "web", phase: "PreSync", identity: "j", outcome: "Succeeded", commit: "c" }] },
    ],
    ...(["failed", "conflict", "held"] as const).map(
      (action): [string, (r: ClusterSyncResult) => ClusterSyncResult] => [
        `an object ${action}`,
        (r) => ({
          ...r,
          objects: r.objects.map((o, i): ObjectResult => (i === 1 ? { ...o, action } : o)),
        }),
      ],
    ),
    ["an object not synced at all", (r) => ({ ...r, objects: r.objects.slice(1) })],
  ];
  it.each(incomplete)("is none after a sync with %s", (_, change) => {
    const synced = typeof change === "function" ? change(result(all)) : result(all, change);
    expect(syncedSet(all, synced)).toBeUndefined();
  });
});

describe("the apps that changed", () => {
  const synced = syncedSet(all, result(all));
  if (!synced) throw new Error("a complete sync leaves a set");
  const none = new Map<string, string[]>();

  it("are none when nothing changed", () => {
    expect(changedApps(synced, all, none)).toEqual(new Set());
  });

  it("are the apps with an object rendered differently, added or removed", () => {
    const changedWeb = desiredObject(
      {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "web-a", namespace: "shop" },
        data: { v: "2" },
      },
      "web",
    );
    expect(changedApps(synced, [changedWeb, web[1] as DesiredObject, ...api], none)).toEqual(
      new Set(["web"]),
    );
    expect(changedApps(synced, [...all, appConfigMap("api-b", "api")], none)).toEqual(new Set(["api"]));
    expect(changedApps(synced, web, none)).toEqual(new Set(["api"]));
    // An object that moved to another app changes both.
    expect(changedApps(synced, [...web, appConfigMap("api-a", "jobs")], none)).toEqual(
      new Set(["api", "jobs"]),
    );
  });

  it("make the sync whole when one of them depends on another app, or another on it", () => {
    const changed = [...web, appConfigMap("api-b", "api"), ...api];
    expect(changedApps(synced, changed, new Map([["api", ["web"]]]))).toBeUndefined();
    expect(changedApps(synced, changed, new Map([["web", ["api"]]]))).toBeUndefined();
    // A dependency between apps that did not change leaves the change scoped.
    expect(changedApps(synced, changed, new Map([["web", ["db"]]]))).toEqual(new Set(["api"]));
  });

  it("make the sync whole when one of them has a hook", () => {
    const hook = desiredObject(
      {
        apiVersion: "batch/v1",
        kind: "Job",
        metadata: { name: "migrate", namespace: "shop", annotations: { "gitfleet.io/hook": "PreSync" } },
      },
      "api",
    );
    expect(hook.role.kind).toBe("hook");
    expect(changedApps(synced, [...all, hook], none)).toBeUndefined();
  });
});

describe("a scoped result", () => {
  it("carries the other apps' last results, as nothing done to them this time, and replaces the scoped ones", () => {
    const previous = result(all);
    const scoped = {
      ...result(api),
      objects: [
        { identity: api[0]?.identity ?? "", app: "api", action: "configured" as const, health: healthy },
      ],
    };
    const merged = withOtherApps(scoped, previous, new Set(["api"]));
    expect(merged.objects.map((o) => [o.app, o.action])).toEqual([
      ["web", "unchanged"],
      ["web", "unchanged"],
      ["api", "configured"],
    ]);
    expect(merged.objects[0]?.health).toEqual(healthy);
    // Drift the last sync reported (and did not correct) is still reported; an applied object's drift is not.
    const drifted: ObjectResult = {
      identity: "d",
      app: "web",
      action: "drifted",
      health: healthy,
      drift: ["data.v"],
    };
    const configured: ObjectResult = {
      identity: "c",
      app: "web",
      action: "configured",
      health: healthy,
      drift: ["data.v"],
    };
    const again = withOtherApps(scoped, { ...previous, objects: [drifted, configured] }, new Set(["api"]));
    expect(again.objects.slice(0, 2)).toEqual([
      drifted,
      { identity: "c", app: "web", action: "unchanged", health: healthy },
    ]);
    const unreachable = { ...scoped, reachable: false, objects: [] };
    expect(withOtherApps(unreachable, previous, new Set(["api"]))).toBe(unreachable);
  });
});
