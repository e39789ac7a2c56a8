import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  appOfStatusPath,
  appStatusDirectory,
  appStatusFiles,
  appStatusPath,
  unbucketedApp,
} from "../../src/status/status-files.js";

// status/apps/ holds one file per app in 256 bucket directories, so a one-app change rewrites two
// small trees however many apps the fleet has.

describe("app status buckets", () => {
  it("spreads 50,000 generated app names evenly over the 256 buckets", () => {
    const counts = new Map<string, number>();
    for (let a = 0; a < 50_000; a++) {
      const directory = appStatusDirectory(`app-${String(a).padStart(5, "0")}`);
      counts.set(directory, (counts.get(directory) ?? 0) + 1);
    }
    expect(counts.size).toBe(256);
    const sizes = [...counts.values()];
    // 195 on average; a bucket twice the average would make its tree twice as costly to rewrite.
    expect(Math.min(...sizes)).toBeGreaterThan(140);
    expect(Math.max(...sizes)).toBeLessThan(260);
  });

  it.each([
    ["status/apps/web.yaml", "web", true],
    [appStatusPath("web"), "web", false],
    [`${appStatusDirectory("api")}web.yaml`, undefined, false],
    ["status/apps/zz/web.yaml", undefined, false],
    ["status/apps/05/deeper/web.yaml", undefined, false],
    ["status/clusters/web.yaml", undefined, false],
    ["status/apps/web.yml", undefined, false],
  ])("%s is the status file of %s (unbucketed: %s)", (path, app, unbucketed) => {
    expect(appOfStatusPath(path)).toBe(app);
    expect(unbucketedApp(path)).toBe(unbucketed ? app : undefined);
  });

  it("takes each app's file in its bucket over one left before buckets, whatever the order", () => {
    const paths = [
      "status/apps/web.yaml",
      appStatusPath("web"),
      "status/apps/api.yaml",
      "rendered/x/web.yaml",
    ];
    for (const order of [paths, [...paths].reverse()])
      expect(Object.fromEntries(appStatusFiles(order))).toEqual({
        web: appStatusPath("web"),
        api: "status/apps/api.yaml",
      });
  });

  it("finds the app again from its path, for any app name", () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/), (app) => {
        expect(appStatusPath(app)).toMatch(/^status\/apps\/[0-9a-f]{2}\/[^/]+\.yaml$/);
        expect(appOfStatusPath(appStatusPath(app))).toBe(app);
        expect(unbucketedApp(appStatusPath(app))).toBeUndefined();
        expect(unbucketedApp(`status/apps/${app}.yaml`)).toBe(app);
      }),
    );
  });
});
