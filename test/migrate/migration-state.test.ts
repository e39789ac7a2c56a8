import { describe, expect, it } from "vitest";
import {
  advanceMigration,
  gatesForCluster,
  type MigrationInput,
  type MigrationStatus,
  type PairReport,
} from "../../src/migrate/migration-state.js";
import type { Migration, MigrationBatch, MigrationSpec } from "../../src/model/types.js";
import { readEmittedYaml } from "../../src/render/yaml-reader.js";
import { migrationStatusText, readMigrationStatus } from "../../src/status/migration-file.js";

// The Migration state machine: batches started only when approved and the one before Succeeded,
// observed, failed, rolled back; every step survives a round trip through its status file.

const SOURCE = "a".repeat(40);
const T0 = Date.parse("2026-11-29T12:00:00Z");
const MINUTE = 60_000;

function migration(batches: MigrationBatch[], spec: Partial<MigrationSpec> = {}): Migration {
  return {
    apiVersion: "gitfleet.io/v1alpha1",
    kind: "Migration",
    metadata: { name: "shop-legacy" },
    spec: { conflictResolution: "Adopt", onFailure: "Halt", observe: "10m", batches, ...spec },
    origin: { file: "migrations/shop-legacy.yaml" },
  } as unknown as Migration;
}

const BATCHES = (approved: [boolean, boolean, boolean]): MigrationBatch[] => [
  { name: "test", apps: ["checkout", "catalog"], clusters: ["test-1"], approved: approved[0] },
  { name: "staging", apps: ["checkout"], clusters: ["staging-1"], approved: approved[1] },
  { name: "prod", apps: ["checkout"], clusters: ["prod-1", "prod-2"], approved: approved[2] },
];

const EVERYWHERE = ["test-1", "staging-1", "prod-1", "prod-2"];

/** One step; `reports` gives every pair's health (Healthy at SOURCE by default). */
function step(
  m: Migration,
  previous: MigrationStatus | undefined,
  now: number,
  reports: Record<string, PairReport> = {},
  fallback: PairReport | undefined = { health: "Healthy", syncedCommit: SOURCE },
) {
  const input: MigrationInput = {
    migration: m,
    previous,
    sourceCommit: SOURCE,
    clustersOf: () => EVERYWHERE,
    report: (app, cluster) => reports[`${app}/${cluster}`] ?? fallback,
    now,
  };
  const outcome = advanceMigration(input);
  // Whatever a step decides must survive the status file: a restart continues from it.
  const reread = readMigrationStatus(readEmittedYaml(migrationStatusText(outcome.status)));
  expect(reread).toEqual(outcome.status);
  return outcome;
}

const states = (status: MigrationStatus) => status.batches.map((b) => `${b.name}:${b.state}`);

describe("a migration's batches", () => {
  it("start only when approved, one after the other, each observed before the next", () => {
    const unapproved = step(migration(BATCHES([false, false, false])), undefined, T0);
    expect(states(unapproved.status)).toEqual(["test:WaitingApproval", "staging:Pending", "prod:Pending"]);
    expect(unapproved.gates.get("checkout/test-1")).toEqual({
      action: "hold",
      reason: "migration shop-legacy/test waits for approval",
    });

    // Batch 1 approved, batch 2 approved too early: batch 2 waits while batch 1 syncs and observes.
    const m = migration(BATCHES([true, true, false]));
    const syncing = step(
      m,
      unapproved.status,
      T0 + MINUTE,
      {},
      { health: "Progressing", syncedCommit: SOURCE },
    );
    expect(states(syncing.status)).toEqual(["test:Syncing", "staging:Pending", "prod:Pending"]);
    expect(syncing.status.batches[0]?.approvedIn).toBe(SOURCE);
    expect(syncing.gates.get("catalog/test-1")).toEqual({ action: "sync", adopt: true });
    expect(syncing.gates.get("checkout/staging-1")?.action).toBe("hold");

    const observing = step(m, syncing.status, T0 + 2 * MINUTE);
    expect(states(observing.status)).toEqual(["test:Observing", "staging:Pending", "prod:Pending"]);
    const still = step(m, observing.status, T0 + 11 * MINUTE);
    expect(states(still.status)).toEqual(["test:Observing", "staging:Pending", "prod:Pending"]);

    // Ten minutes Healthy: Succeeded, and the approved batch 2 starts; batch 3 waits for approval behind it.
    const done = step(m, still.status, T0 + 12 * MINUTE);
    expect(states(done.status)).toEqual(["test:Succeeded", "staging:Syncing", "prod:Pending"]);
    expect(done.changes).toEqual([
      "shop-legacy/test: Observing → Succeeded",
      "shop-legacy/staging: Pending → Syncing (adopting)",
    ]);
  });

  it("succeeds without observing when no observation window is set", () => {
    const m = migration(BATCHES([true, false, false]), { observe: "0s" });
    const syncing = step(m, undefined, T0);
    expect(states(step(m, syncing.status, T0 + MINUTE).status)[0]).toBe("test:Succeeded");
  });

  it("observes for 10 minutes when neither the batch nor the Migration sets a window", () => {
    const { observe: _, ...spec } = migration(BATCHES([true, false, false])).spec;
    const m = { ...migration(BATCHES([true, false, false])), spec };
    const observing = step(m, step(m, undefined, T0).status, T0 + MINUTE);
    expect(states(step(m, observing.status, T0 + 10 * MINUTE).status)[0]).toBe("test:Observing");
    expect(states(step(m, observing.status, T0 + 11 * MINUTE).status)[0]).toBe("test:Succeeded");
  });

  it("starts the window again when an app is not Healthy during it, without failing the batch", () => {
    const m = migration(BATCHES([true, false, false]));
    const observing = step(m, step(m, undefined, T0).status, T0 + MINUTE);
    const wobbly = step(m, observing.status, T0 + 9 * MINUTE, {
      "checkout/test-1": { health: "Progressing", syncedCommit: SOURCE },
    });
    expect(states(wobbly.status)[0]).toBe("test:Observing");
    expect(wobbly.status.batches[0]?.observingSince).toBeUndefined();
    expect(wobbly.status.batches[0]?.reason).toBe(
      "checkout in test-1 Progressing: the window starts again once it is Healthy",
    );
    const again = step(m, wobbly.status, T0 + 10 * MINUTE);
    expect(again.status.batches[0]?.observingSince).toBe(new Date(T0 + 10 * MINUTE).toISOString());
    // Ten minutes after the first start is not enough any more; ten after the restart is.
    expect(states(step(m, again.status, T0 + 12 * MINUTE).status)[0]).toBe("test:Observing");
    expect(states(step(m, again.status, T0 + 20 * MINUTE).status)[0]).toBe("test:Succeeded");
  });

  it.each([
    ["Adopt", true],
    ["Abort", false],
  ] as const)(
    "conflictResolution %s: the sync adopts = %s; an object it may not take fails the batch",
    (resolution, adopt) => {
      const m = migration(BATCHES([true, false, false]), { conflictResolution: resolution });
      const syncing = step(m, undefined, T0, {}, { health: "Unknown" });
      expect(syncing.gates.get("checkout/test-1")).toEqual({ action: "sync", adopt });
      const conflict =
        "apps/v1/Deployment shop/checkout: exists in the cluster and gitfleet did not create it";
      const failed = step(m, syncing.status, T0 + MINUTE, {
        "checkout/test-1": { health: "Unknown", syncedCommit: SOURCE, conflict },
      });
      expect(states(failed.status)[0]).toBe("test:Failed");
      expect(failed.status.batches[0]?.reason).toBe(`checkout in test-1: ${conflict}; onFailure: Halt`);
    },
  );

  it("detaches a pair again that was detached, managed again by a batch, and removed once more", () => {
    const one = [{ name: "test", apps: ["checkout"], clusters: ["test-1"], approved: true }];
    const both = [{ name: "test", apps: ["checkout", "catalog"], clusters: ["test-1"], approved: true }];
    const started = step(migration(both), undefined, T0);
    const removed = step(migration(one), started.status, T0 + MINUTE);
    expect(removed.status.detached).toEqual(["catalog/test-1"]);
    const back = step(migration(both), removed.status, T0 + 2 * MINUTE);
    expect(back.gates.get("catalog/test-1")).toEqual({ action: "sync", adopt: true });
    expect(back.status.detached).toEqual([]);
    const again = step(migration(one), back.status, T0 + 3 * MINUTE);
    expect(again.gates.get("catalog/test-1")?.action).toBe("detach");
  });

  it("waits while a pair has not synced the rendered commit, even if it is Healthy", () => {
    const m = migration(BATCHES([true, false, false]));
    const first = step(m, undefined, T0);
    const stale = step(m, first.status, T0 + MINUTE, {}, { health: "Healthy", syncedCommit: "b".repeat(40) });
    expect(states(stale.status)[0]).toBe("test:Syncing");
  });

  it.each([
    ["Halt", "Failed", { action: "sync", adopt: true }],
    ["Rollback", "RolledBack", { action: "detach", reason: "migration shop-legacy/test rolled back" }],
  ] as const)("onFailure %s: a Degraded app in observation → %s", (onFailure, state, gate) => {
    const m = migration(BATCHES([true, true, true]), { onFailure });
    const syncing = step(m, undefined, T0);
    const observing = step(m, syncing.status, T0 + MINUTE);
    const failed = step(m, observing.status, T0 + 2 * MINUTE, {
      "catalog/test-1": { health: "Degraded", syncedCommit: SOURCE },
    });
    expect(states(failed.status)).toEqual([`test:${state}`, "staging:Pending", "prod:Pending"]);
    expect(failed.status.batches[0]?.reason).toContain("catalog in test-1 Degraded");
    expect(failed.gates.get("catalog/test-1")).toEqual(gate);
    // Later batches stay put though approved, also after the app recovers.
    const later = step(m, failed.status, T0 + 60 * MINUTE);
    expect(states(later.status)).toEqual([`test:${state}`, "staging:Pending", "prod:Pending"]);
    if (state === "RolledBack") expect(later.status.detached).toEqual(["catalog/test-1", "checkout/test-1"]);
  });

  it("rolls a started batch back on purpose, and detaches an app removed from a batch", () => {
    const m = migration(BATCHES([true, false, false]));
    const syncing = step(m, undefined, T0);
    const withoutCatalog = migration([
      { name: "test", apps: ["checkout"], clusters: ["test-1"], approved: true },
      ...BATCHES([true, false, false]).slice(1),
    ]);
    const removed = step(withoutCatalog, syncing.status, T0 + MINUTE);
    expect(removed.gates.get("catalog/test-1")).toEqual({
      action: "detach",
      reason: "migration shop-legacy: removed from the migration",
    });
    expect(removed.status.detached).toEqual(["catalog/test-1"]);
    // Once detached, it is left alone.
    const after = step(withoutCatalog, removed.status, T0 + 2 * MINUTE);
    expect(after.gates.get("catalog/test-1")).toEqual({
      action: "hold",
      reason: "migration shop-legacy: detached",
    });

    const rolledBack = migration([
      { name: "test", apps: ["checkout"], clusters: ["test-1"], approved: true, rollback: true },
      ...BATCHES([true, false, false]).slice(1),
    ]);
    const back = step(rolledBack, after.status, T0 + 3 * MINUTE);
    expect(states(back.status)[0]).toBe("test:RolledBack");
    expect(back.status.batches[0]?.reason).toBe("rollback: true in the source");
    expect(back.gates.get("checkout/test-1")?.action).toBe("detach");
    expect(back.status.detached).toEqual(["catalog/test-1", "checkout/test-1"]);
  });

  it("covers the clusters the batch names among those the app is placed on, or all of them", () => {
    const m = migration([{ name: "all", apps: ["checkout"], approved: false }]);
    const outcome = step(m, undefined, T0);
    expect(Object.keys(outcome.status.batches[0]?.apps.checkout ?? {})).toEqual([...EVERYWHERE].sort());
  });

  it("gives a pull-mode agent the gates its cluster gets, from the recorded status alone", () => {
    const m = migration(BATCHES([true, true, false]));
    const gates = (recorded: MigrationStatus | undefined, cluster: string, model = m) =>
      Object.fromEntries(
        [...gatesForCluster(cluster, [model], () => recorded)].map(([app, g]) => [app, g.action]),
      );
    // Nothing recorded yet: every app a batch covers here is held.
    expect(gates(undefined, "test-1")).toEqual({ checkout: "hold", catalog: "hold" });
    const started = step(m, undefined, T0).status;
    expect(gates(started, "test-1")).toEqual({ checkout: "sync", catalog: "sync" });
    expect(gates(started, "staging-1")).toEqual({ checkout: "hold" });
    expect(gates(started, "elsewhere")).toEqual({});
    const rolledBack = step(
      migration([{ ...BATCHES([true, false, false])[0], rollback: true } as MigrationBatch]),
      started,
      T0 + MINUTE,
    ).status;
    expect(gates(rolledBack, "test-1")).toEqual({ checkout: "detach", catalog: "detach" });
    // A pair detached because it left the migration is detached (again) too.
    const withoutCatalog = migration([
      { name: "test", apps: ["checkout"], clusters: ["test-1"], approved: true },
    ]);
    const removed = step(withoutCatalog, started, T0 + MINUTE).status;
    expect(removed.detached).toEqual(["catalog/test-1"]);
    expect(gates(removed, "test-1", withoutCatalog)).toEqual({ checkout: "sync", catalog: "detach" });
  });
});
