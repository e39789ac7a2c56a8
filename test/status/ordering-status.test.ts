import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { fleetView } from "../../src/observe/fleet-view.js";
import { appObserved } from "../../src/status/observed-status.js";
import { appStatusPath } from "../../src/status/status-files.js";
import type { ClusterSyncResult, ObjectResult } from "../../src/sync/sync-result.js";
import { API_APP, SOURCE, statusFiles } from "../helpers/status-files.js";

// What status/apps/ and the dashboard say about an app a dependency, a hook, a wave, a suspend or a
// window holds, and about its hooks.

const result = (objects: ObjectResult[], hooks: ClusterSyncResult["hooks"] = []): ClusterSyncResult => ({
  cluster: "idc-east-1",
  sourceCommit: "b".repeat(40),
  reachable: true,
  objects,
  pruned: [],
  retained: [],
  inventory: new Map(),
  ...(hooks.length > 0 ? { hooks } : {}),
});

const held = (by: NonNullable<ObjectResult["heldBy"]>, reason: string): ObjectResult => ({
  identity: "apps/Deployment/shop/api",
  app: "api",
  action: "held",
  health: { status: "Healthy" },
  held: reason,
  heldBy: by,
});

describe("status of an app held in a cluster", () => {
  it.each([
    [
      "dependency",
      "dependsOn",
      "waiting for mysql in idc-east-1 (Degraded: StatefulSet db/mysql: crash loop)",
    ],
    ["wave", "syncWave", "sync wave 1 waits for wave 0 to be Healthy"],
    ["hook", "hook", "waiting for PreSync hook Job shop/migrate"],
    ["suspend", "suspended", "suspended (App spec.suspend)"],
    ["window", "syncWindow", "sync window: deny window freeze is open until 2026-12-03T16:00:00.000Z"],
  ] as const)("held by a %s: observed.%s says why, and the dashboard shows it", (by, key, reason) => {
    const text = appObserved("api", ["idc-east-1"], new Map([["idc-east-1", result([held(by, reason)])]]));
    const observed = (parse(text) as { observed: Record<string, Record<string, unknown>> }).observed;
    expect(observed["idc-east-1"]?.[key]).toBe(reason);
    const files = statusFiles({
      "status/source.yaml": SOURCE,
      [appStatusPath("api")]: `${API_APP.slice(0, API_APP.indexOf("observed:"))}${text}`,
    });
    const view = fleetView(files, []);
    expect(view.apps.find((a) => a.name === "api")?.clusters["idc-east-1"]).toMatchObject({
      held: key,
      reason,
    });
  });

  it("lists each hook's outcome, with why a failed one failed", () => {
    const text = appObserved(
      "api",
      ["idc-east-1"],
      new Map([
        [
          "idc-east-1",
          result(
            [
              {
                identity: "apps/Deployment/shop/api",
                app: "api",
                action: "unchanged",
                health: { status: "Healthy" },
              },
            ],
            [
              {
                app: "api",
                phase: "PreSync",
                identity: "batch/Job/shop/migrate",
                outcome: "Succeeded",
                commit: "c",
              },
              {
                app: "api",
                phase: "PostSync",
                identity: "batch/Job/shop/smoke",
                outcome: "Failed",
                commit: "c",
                message: "Job has reached the specified backoff limit",
              },
              {
                app: "other",
                phase: "PreSync",
                identity: "batch/Job/shop/x",
                outcome: "Running",
                commit: "c",
              },
            ],
          ),
        ],
      ]),
    );
    expect(
      (parse(text) as { observed: Record<string, { hooks: unknown }> }).observed["idc-east-1"]?.hooks,
    ).toEqual({
      "PreSync Job shop/migrate": "Succeeded",
      "PostSync Job shop/smoke": "Failed: Job has reached the specified backoff limit",
    });
  });

  it.each([
    [[["PreSync", "Succeeded"]], { health: "Healthy" }],
    [[["PreSync", "Running"]], { health: "Progressing", reason: "PreSync hook Job ops/migrate running" }],
    [
      [["PreSync", "Pending", "could not be started: conflict: Job ops/migrate exists …"]],
      {
        health: "Progressing",
        reason:
          "PreSync hook Job ops/migrate pending: could not be started: conflict: Job ops/migrate exists …",
      },
    ],
    [
      [["PreSync", "Failed", "backoff limit"]],
      { health: "Degraded", reason: "PreSync hook Job ops/migrate failed: backoff limit" },
    ],
  ] as const)("an app of hooks alone stands as its hooks do: %j", (hooks, expected) => {
    const text = appObserved(
      "ops",
      ["idc-east-1"],
      new Map([
        [
          "idc-east-1",
          result(
            [],
            hooks.map(([phase, outcome, message]) => ({
              app: "ops",
              phase,
              identity: "batch/Job/ops/migrate",
              outcome,
              commit: "c",
              ...(message ? { message } : {}),
            })),
          ),
        ],
      ]),
    );
    const observed = (parse(text) as { observed: Record<string, Record<string, unknown>> }).observed[
      "idc-east-1"
    ];
    expect(observed).toMatchObject(expected);
    expect(Object.keys((observed?.hooks as object | undefined) ?? {})).toEqual(["PreSync Job ops/migrate"]);
  });
});
