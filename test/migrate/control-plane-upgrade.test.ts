import { describe, expect, it } from "vitest";
import {
  advanceUpgrade,
  type ControlPlaneReport,
  type UpgradeStatus,
  upgradeVersions,
} from "../../src/migrate/control-plane-upgrade.js";
import type { ControlPlaneUpgrade, ControlPlaneUpgradeSpec } from "../../src/model/types.js";
import { readUpgradeStatus, upgradeStatusText } from "../../src/status/upgrade-file.js";

// A ControlPlaneUpgrade's batches through the Migration state machine: a batch starts when approved
// and the one before Succeeded; it observes once every control plane runs the version Healthy; a
// component that cannot run halts (or rolls back) it; the versions follow the states; every step
// survives a round trip through status/upgrades/<name>.yaml.

const SOURCE = "c".repeat(40);
const T0 = Date.parse("2026-12-02T09:00:00Z");
const MINUTE = 60_000;
const TARGET = "v1.36.3";
const HOSTS: Record<string, string> = { "pc-1": "meta-1", "pc-2": "meta-1", "pc-3": "meta-2" };

function upgrade(
  approved: [boolean, boolean],
  spec: Partial<ControlPlaneUpgradeSpec> = {},
): ControlPlaneUpgrade {
  return {
    apiVersion: "gitfleet.io/v1alpha1",
    kind: "ControlPlaneUpgrade",
    metadata: { name: "cve-1" },
    spec: {
      version: TARGET,
      observe: "5m",
      batches: [
        { name: "canary", clusters: ["pc-1"], approved: approved[0] },
        { name: "rest", clusters: ["pc-2", "pc-3"], approved: approved[1] },
      ],
      ...spec,
    },
    origin: { file: "controlplanes/cve-1.yaml" },
  } as unknown as ControlPlaneUpgrade;
}

const UPGRADED: ControlPlaneReport = { health: "Healthy", settled: true, version: TARGET };
const OLD: ControlPlaneReport = { health: "Healthy", settled: true, version: "v1.36.1" };

function step(
  u: ControlPlaneUpgrade,
  previous: UpgradeStatus | undefined,
  now: number,
  reports: Record<string, ControlPlaneReport | undefined> = {},
  fallback: ControlPlaneReport | null = UPGRADED,
) {
  const outcome = advanceUpgrade({
    upgrade: u,
    previous,
    sourceCommit: SOURCE,
    hostOf: (cluster) => HOSTS[cluster],
    report: (cluster) => (cluster in reports ? reports[cluster] : (fallback ?? undefined)),
    now,
  });
  expect(readUpgradeStatus(upgradeStatusText(outcome.status))).toEqual(outcome.status);
  return outcome;
}

const states = (status: UpgradeStatus) => status.batches.map((b) => `${b.name}:${b.state}`);
const versionsOf = (u: ControlPlaneUpgrade, status: UpgradeStatus) =>
  Object.fromEntries(upgradeVersions([u], (name) => (name === status.upgrade ? status : undefined)));

describe("ControlPlaneUpgrade batches", () => {
  it("nothing starts without approval; the clusters keep their class's version", () => {
    const u = upgrade([false, false]);
    const { status, changes } = step(u, undefined, T0);
    expect(states(status)).toEqual(["canary:WaitingApproval", "rest:Pending"]);
    expect(versionsOf(u, status)).toEqual({});
    expect(changes).toEqual([
      "cve-1/canary: new → WaitingApproval (approved: true in a reviewed commit starts it)",
      "cve-1/rest: new → Pending (waits for batch canary)",
    ]);
  });

  it("an approved batch upgrades; it observes once /version reports the target with nothing held, then succeeds after the window", () => {
    const u = upgrade([true, false]);
    const first = step(u, undefined, T0, { "pc-1": OLD });
    expect(states(first.status)).toEqual(["canary:Syncing", "rest:Pending"]);
    expect(first.status.batches[0]?.reason).toBe(`upgrading to ${TARGET}`);
    expect(versionsOf(u, first.status)).toEqual({ "pc-1": TARGET });
    // The API server moved but the followers are still held: not yet upgraded.
    const held = step(u, first.status, T0 + MINUTE, { "pc-1": { ...UPGRADED, settled: false } });
    expect(states(held.status)).toEqual(["canary:Syncing", "rest:Pending"]);
    expect(held.status.batches[0]?.clusters).toEqual({ "pc-1": "Progressing" });
    const observing = step(u, held.status, T0 + 2 * MINUTE);
    expect(states(observing.status)).toEqual(["canary:Observing", "rest:Pending"]);
    const early = step(u, observing.status, T0 + 6 * MINUTE);
    expect(states(early.status)).toEqual(["canary:Observing", "rest:Pending"]);
    const done = step(u, early.status, T0 + 7 * MINUTE);
    expect(states(done.status)).toEqual(["canary:Succeeded", "rest:WaitingApproval"]);
    expect(versionsOf(u, done.status)).toEqual({ "pc-1": TARGET });
  });

  it("the next batch starts only after the one before Succeeded, even when approved together", () => {
    const u = upgrade([true, true]);
    const first = step(u, undefined, T0, {}, OLD);
    expect(states(first.status)).toEqual(["canary:Syncing", "rest:Pending"]);
    expect(versionsOf(u, first.status)).toEqual({ "pc-1": TARGET });
    const observing = step(u, first.status, T0 + MINUTE);
    const done = step(u, observing.status, T0 + 7 * MINUTE);
    expect(states(done.status)).toEqual(["canary:Succeeded", "rest:Syncing"]);
    expect(versionsOf(u, done.status)).toEqual({ "pc-1": TARGET, "pc-2": TARGET, "pc-3": TARGET });
  });

  it.each([
    ["Halt", "Failed", { "pc-1": TARGET }],
    ["Rollback", "RolledBack", {}],
  ] as const)(
    "a control plane that cannot run fails the batch (onFailure %s → %s)",
    (onFailure, state, versions) => {
      const u = upgrade([true, true], { onFailure });
      const first = step(u, undefined, T0, {}, OLD);
      const failing: ControlPlaneReport = {
        health: "Progressing",
        settled: false,
        version: "v1.36.1",
        failure: "Deployment kube-apiserver 1 CrashLoopBackOff",
      };
      const failed = step(u, first.status, T0 + MINUTE, { "pc-1": failing });
      expect(states(failed.status)).toEqual([`canary:${state}`, "rest:Pending"]);
      expect(failed.status.batches[0]?.reason).toBe(
        `pc-1: Deployment kube-apiserver 1 CrashLoopBackOff; onFailure: ${onFailure}`,
      );
      expect(failed.changes[0]).toBe(
        `cve-1/canary: Syncing → ${state} (pc-1: Deployment kube-apiserver 1 CrashLoopBackOff; onFailure: ${onFailure})`,
      );
      expect(versionsOf(u, failed.status)).toEqual(versions);
      // Later batches never start behind a failed one.
      const later = step(u, failed.status, T0 + 60 * MINUTE);
      expect(states(later.status)).toEqual([`canary:${state}`, "rest:Pending"]);
    },
  );

  it("rollback: true returns a started batch to its class's version", () => {
    const started = step(upgrade([true, false]), undefined, T0, {}, OLD);
    const u = upgrade([true, false]);
    const rolled = step(
      {
        ...u,
        spec: {
          ...u.spec,
          batches: [{ ...u.spec.batches[0], rollback: true } as never, u.spec.batches[1] as never],
        },
      },
      started.status,
      T0 + MINUTE,
    );
    expect(states(rolled.status)).toEqual(["canary:RolledBack", "rest:Pending"]);
    expect(rolled.status.batches[0]?.reason).toBe("rollback: true in the source");
    expect(versionsOf(u, rolled.status)).toEqual({});
  });

  it("a control plane that restarts during the window starts the window again", () => {
    const u = upgrade([true, false]);
    const observing = step(u, step(u, undefined, T0).status, T0 + MINUTE);
    expect(states(observing.status)).toEqual(["canary:Observing", "rest:Pending"]);
    const restarted = step(u, observing.status, T0 + 3 * MINUTE, {
      "pc-1": { ...UPGRADED, health: "Progressing" },
    });
    expect(restarted.status.batches[0]?.observingSince).toBeUndefined();
    const again = step(u, restarted.status, T0 + 4 * MINUTE);
    const notYet = step(u, again.status, T0 + 8 * MINUTE);
    expect(states(notYet.status)[0]).toBe("canary:Observing");
    expect(states(step(u, notYet.status, T0 + 9 * MINUTE).status)[0]).toBe("canary:Succeeded");
  });

  it("no report (a restarted controller) is no news: a started batch keeps its version and waits", () => {
    const u = upgrade([true, false]);
    const started = step(u, undefined, T0, {}, OLD);
    const waiting = step(u, started.status, T0 + MINUTE, {}, null);
    expect(states(waiting.status)).toEqual(["canary:Syncing", "rest:Pending"]);
    expect(versionsOf(u, waiting.status)).toEqual({ "pc-1": TARGET });
  });

  it("a status recorded for another version is not continued: the upgrade starts over", () => {
    const u = upgrade([true, false]);
    const done = step(u, step(u, step(u, undefined, T0).status, T0 + MINUTE).status, T0 + 7 * MINUTE);
    expect(states(done.status)[0]).toBe("canary:Succeeded");
    const retargeted = upgrade([true, false], { version: "v1.36.4" });
    const fresh = step(retargeted, done.status, T0 + 8 * MINUTE, {}, OLD);
    expect(fresh.status.version).toBe("v1.36.4");
    expect(states(fresh.status)).toEqual(["canary:Syncing", "rest:Pending"]);
    // The old status's version is not the upgrade's: it gives no version.
    expect(versionsOf(retargeted, done.status)).toEqual({});
  });
});
