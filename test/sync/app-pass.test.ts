import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { JsonMap } from "../../src/apimachinery/json.js";
import type { Health } from "../../src/model/health.js";
import { syncRoleOf } from "../../src/model/sync-annotations.js";
import {
  type AppInCluster,
  HOOK_RUN_ANNOTATION,
  type HookRecord,
  hookRunValue,
  type PassView,
  planAppPass,
} from "../../src/sync/app-pass.js";
import { appsInCluster } from "../../src/sync/cluster-pass.js";
import type { DesiredObject } from "../../src/sync/desired-objects.js";
import type { InventoryEntry } from "../../src/sync/inventory.js";

// One app's pass in one cluster, decided from what the cluster holds: hooks, waves, what waits.

function desired(kind: string, name: string, annotations: Record<string, string> = {}): DesiredObject {
  const group = kind === "Job" ? "batch" : kind === "Deployment" ? "apps" : "";
  const object: JsonMap = {
    apiVersion: group ? `${group}/v1` : "v1",
    kind,
    metadata: { name, namespace: "shop", annotations },
  };
  return {
    identity: `${group}/${kind}/shop/${name}`,
    app: "shop",
    object,
    digest: `digest-${name}-${JSON.stringify(annotations)}`,
    policy: { force: false, adopt: false, selfHeal: true },
    role: syncRoleOf(annotations),
  };
}

const entry = (d: DesiredObject): InventoryEntry => ({
  identity: d.identity,
  apiVersion: String(d.object.apiVersion),
  kind: String(d.object.kind),
  namespace: "shop",
  name: String((d.object.metadata as JsonMap).name),
  app: d.app,
  uid: `uid-${d.identity}`,
  digest: d.digest,
});

interface ClusterState {
  /** Objects the cluster holds as rendered. */
  readonly applied?: readonly DesiredObject[];
  /** Objects whose live object is not Healthy. */
  readonly unhealthy?: readonly DesiredObject[];
  /** Live hook Jobs: the phase they run for and how they ended. */
  readonly jobs?: readonly {
    hook: DesiredObject;
    phase: string;
    outcome: "Complete" | "Failed" | "Running";
  }[];
  readonly record?: HookRecord;
}

function view(app: AppInCluster, state: ClusterState): PassView {
  const live = new Map<string, JsonMap>();
  for (const d of state.applied ?? []) live.set(d.identity, d.object);
  for (const { hook, phase, outcome } of state.jobs ?? []) {
    const metadata = { ...(hook.object.metadata as JsonMap) };
    metadata.annotations = {
      ...(metadata.annotations as JsonMap),
      [HOOK_RUN_ANNOTATION]: `${phase}:${app.revision}`,
    };
    const conditions =
      outcome === "Running"
        ? []
        : [{ type: outcome, status: "True", ...(outcome === "Failed" ? { message: "exit code 1" } : {}) }];
    live.set(hook.identity, { ...hook.object, metadata, status: { conditions } });
  }
  const unhealthy = new Set((state.unhealthy ?? []).map((d) => d.identity));
  return {
    inventory: new Map((state.applied ?? []).map((d) => [d.identity, entry(d)])),
    live,
    health: (o): Health =>
      unhealthy.has(o.identity) ? { status: "Progressing", reason: "starting" } : { status: "Healthy" },
    record: state.record,
    commit: "c0ffee",
  };
}

const appOf = (objects: readonly DesiredObject[]) => appsInCluster(objects).get("shop") as AppInCluster;

const MIGRATE = desired("Job", "migrate", { "argocd.argoproj.io/hook": "PreSync" });
const SMOKE = desired("Job", "smoke", {
  "gitfleet.io/hook": "PostSync",
  "gitfleet.io/hook-delete-policy": "HookSucceeded",
});
const ALERT = desired("Job", "alert", { "gitfleet.io/hook": "SyncFail" });
const CONFIG = desired("ConfigMap", "config", { "gitfleet.io/sync-wave": "-1" });
const WEB = desired("Deployment", "web");

describe("one app's pass", () => {
  const app = appOf([MIGRATE, SMOKE, ALERT, CONFIG, WEB]);

  it("starts the PreSync hooks first and holds every object behind them", () => {
    const pass = planAppPass(app, view(app, {}));
    expect(pass.start.map((r) => `${r.phase} ${r.object.identity}`)).toEqual([
      "PreSync batch/Job/shop/migrate",
    ]);
    expect([...pass.held.values()].map((h) => h.reason)).toEqual([
      "waiting for PreSync hook Job shop/migrate",
      "waiting for PreSync hook Job shop/migrate",
    ]);
    expect(pass.prune).toBe(false);
    expect(pass.record).toEqual({ revision: app.revision, commit: "c0ffee", outcomes: {} });
  });

  it("starts a phase's hooks wave by wave, lowest first", () => {
    const early = desired("Job", "early", { "gitfleet.io/hook": "PreSync", "gitfleet.io/sync-wave": "-1" });
    const late = desired("Job", "late", { "gitfleet.io/hook": "PreSync", "gitfleet.io/sync-wave": "2" });
    const waves = appOf([late, early, WEB]);
    expect(planAppPass(waves, view(waves, {})).start.map((r) => r.object.identity)).toEqual([early.identity]);
    // While wave -1 runs, wave 2 waits; once it succeeded, wave 2 starts.
    const running = view(waves, { jobs: [{ hook: early, phase: "PreSync", outcome: "Running" }] });
    expect(planAppPass(waves, running).start).toEqual([]);
    const done = view(waves, { jobs: [{ hook: early, phase: "PreSync", outcome: "Complete" }] });
    expect(planAppPass(waves, done).start.map((r) => r.object.identity)).toEqual([late.identity]);
  });

  it("waits while the hook runs, without starting it again", () => {
    const pass = planAppPass(
      app,
      view(app, { jobs: [{ hook: MIGRATE, phase: "PreSync", outcome: "Running" }] }),
    );
    expect(pass.start).toEqual([]);
    expect(pass.held.size).toBe(2);
  });

  it("applies the first wave once PreSync succeeded, and keeps the outcome", () => {
    const pass = planAppPass(
      app,
      view(app, { jobs: [{ hook: MIGRATE, phase: "PreSync", outcome: "Complete" }] }),
    );
    expect([...pass.held]).toEqual([
      [WEB.identity, { reason: "sync wave 0 waits for wave -1 to be Healthy", by: "wave" }],
    ]);
    expect(pass.record?.outcomes).toEqual({ "PreSync batch/Job/shop/migrate": "Succeeded" });
  });

  it("starts PostSync only once every wave is applied and Healthy", () => {
    const record: HookRecord = {
      revision: app.revision,
      commit: "c0ffee",
      outcomes: { "PreSync batch/Job/shop/migrate": "Succeeded" },
    };
    const unhealthy = planAppPass(app, view(app, { applied: [CONFIG, WEB], unhealthy: [WEB], record }));
    expect(unhealthy.start).toEqual([]);
    expect(unhealthy.held.size).toBe(0);
    const healthy = planAppPass(app, view(app, { applied: [CONFIG, WEB], record }));
    expect(healthy.start.map((r) => r.phase)).toEqual(["PostSync"]);
    expect(healthy.prune).toBe(true);
  });

  it("ends the sync on a failed hook: objects stay as they run, SyncFail runs, a record says why", () => {
    const pass = planAppPass(
      app,
      view(app, { jobs: [{ hook: MIGRATE, phase: "PreSync", outcome: "Failed" }] }),
    );
    expect(pass.start.map((r) => `${r.phase} ${r.object.identity}`)).toEqual([
      "SyncFail batch/Job/shop/alert",
    ]);
    expect(pass.record?.failed).toBe("PreSync hook Job shop/migrate failed: exit code 1");
    expect([...pass.held.values()].every((h) => h.by === "hook")).toBe(true);
    // The next pass, with the hook's object deleted, still knows it failed.
    const next = planAppPass(app, view(app, { record: pass.record as HookRecord }));
    expect(next.record?.failed).toBe(pass.record?.failed);
    expect(next.hooks.find((r) => r.phase === "PreSync")).toMatchObject({
      outcome: "Failed",
      message: "exit code 1",
    });
  });

  it("runs the hooks again for a new rendering, whatever the record of the last one says", () => {
    const old: HookRecord = {
      revision: "an-older-rendering",
      commit: "0ld",
      outcomes: { "PreSync batch/Job/shop/migrate": "Succeeded" },
      failed: "PreSync hook Job shop/migrate failed",
    };
    const pass = planAppPass(app, view(app, { record: old }));
    expect(pass.start.map((r) => r.phase)).toEqual(["PreSync"]);
    expect(pass.record).toEqual({ revision: app.revision, commit: "c0ffee", outcomes: {} });
  });

  it("keeps an app at its rendering whole: no wave is held to correct drift", () => {
    const plain = appOf([CONFIG, WEB]);
    const pass = planAppPass(plain, view(plain, { applied: [CONFIG, WEB], unhealthy: [CONFIG] }));
    expect(pass.held.size).toBe(0);
    expect(pass.record).toBeUndefined();
  });

  it("a hook's run is told apart by phase: PostSync of a PreSync-and-PostSync hook runs again", () => {
    const both = desired("Job", "check", { "gitfleet.io/hook": "PreSync,PostSync" });
    const twice = appOf([both, WEB]);
    const ran = planAppPass(
      twice,
      view(twice, { applied: [WEB], jobs: [{ hook: both, phase: "PreSync", outcome: "Complete" }] }),
    );
    expect(ran.start.map((r) => r.phase)).toEqual(["PostSync"]);
    expect(hookRunValue("PostSync", twice.revision)).not.toBe(hookRunValue("PreSync", twice.revision));
  });
});

describe("sync waves (property)", () => {
  const objectArb = fc.record({
    wave: fc.integer({ min: -2, max: 3 }),
    applied: fc.boolean(),
    healthy: fc.boolean(),
  });
  it("applies waves in order: what waits is every object above the first wave not yet applied and Healthy", () => {
    fc.assert(
      fc.property(fc.array(objectArb, { minLength: 1, maxLength: 12 }), (specs) => {
        const objects = specs.map((s, i) =>
          desired("ConfigMap", `c${i}`, { "gitfleet.io/sync-wave": String(s.wave) }),
        );
        const app = appOf(objects);
        const pass = planAppPass(
          app,
          view(app, {
            applied: objects.filter((_, i) => specs[i]?.applied),
            unhealthy: objects.filter((_, i) => !specs[i]?.healthy),
          }),
        );
        const waves = [...new Set(specs.map((s) => s.wave))].sort((a, b) => a - b);
        const done = (w: number) => specs.every((s) => s.wave !== w || (s.applied && s.healthy));
        const open = waves.find((w) => !done(w));
        const atRendering = specs.every((s) => s.applied);
        const expected =
          waves.length <= 1 || open === undefined || atRendering
            ? []
            : objects.filter((_, i) => (specs[i]?.wave ?? 0) > open).map((o) => o.identity);
        expect([...pass.held.keys()].sort()).toEqual(expected.sort());
        expect(pass.prune).toBe(waves.length <= 1 || open === undefined);
        // Never holds an object below one it applies.
        const waveOf = (id: string) => specs[objects.findIndex((o) => o.identity === id)]?.wave ?? 0;
        const heldWaves = [...pass.held.keys()].map(waveOf);
        const appliedWaves = objects.filter((o) => !pass.held.has(o.identity)).map((o) => waveOf(o.identity));
        if (heldWaves.length > 0) expect(Math.max(...appliedWaves)).toBeLessThan(Math.min(...heldWaves));
      }),
      { numRuns: 300 },
    );
  });
});
