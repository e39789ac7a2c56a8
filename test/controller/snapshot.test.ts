import { spawnSync } from "node:child_process";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Reconciler } from "../../src/controller/reconciler.js";
import { SnapshotStore } from "../../src/controller/snapshot/snapshot-store.js";
import { FleetRepo } from "../../src/git/fleet-repo.js";
import { createLogger } from "../../src/log/logger.js";
import { BASE_SPEC, editArbitrary, type FleetSpec, fleetFiles } from "../helpers/fleet-spec.js";
import { commitTree, createRepo, gitIn, tempDir } from "../helpers/git-repo.js";
import { reconcileReference, statusTree } from "../helpers/reference-reconcile.js";

/**
 * A restarted reconciler resumes from its snapshot and ends exactly where one that never stopped
 * ends: for random sequences of source commits, with restarts from a whole snapshot, one written
 * several commits back, a truncated one, one of another build, one of another key and none at all,
 * the status tree after every commit equals that of a reference reconciled from the branch alone.
 */
let root: string;
let cleanup: () => void;

beforeAll(() => {
  ({ dir: root, cleanup } = tempDir("gitfleet-snapshot-"));
});
afterAll(() => cleanup());

type Restart = "none" | "whole" | "stale" | "truncated" | "other-build" | "other-key" | "missing";

/** A reconciler of `dir` with a snapshot store, and the messages it logged. */
async function controller(dir: string, snapshots: string, key: string) {
  const messages: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split("\n").filter(Boolean)) messages.push(JSON.parse(line).msg);
      done();
    },
  });
  const reconciler = new Reconciler({
    repo: await FleetRepo.open({ location: dir }),
    branch: "main",
    statusBranch: "gitfleet/status",
    author: { name: "gitfleet", email: "gitfleet@example.com" },
    controllerId: "snapshot-test",
    logger: createLogger({ destination }),
    snapshots: new SnapshotStore({
      dir: snapshots,
      statusBranch: "gitfleet/status",
      key: new TextEncoder().encode(key),
    }),
    // Written only when the test stops a reconciler.
    snapshotAfterMs: 2 ** 30,
  });
  return { reconciler, messages };
}

// What a restarted reconciler must say about the snapshot it found (nothing about one that is missing).
const SAID: Record<Restart, string | undefined> = {
  none: undefined,
  whole: "resumed from the snapshot",
  stale: "resumed from the snapshot",
  truncated: "snapshot refused: restoring from the status branch",
  "other-build": "snapshot refused: restoring from the status branch",
  "other-key": "snapshot refused: restoring from the status branch",
  missing: undefined,
};

function expectSaid(restart: Restart, messages: readonly string[], step: string): void {
  const said = SAID[restart];
  if (said) expect(messages, step).toContain(said);
  if (restart === "missing")
    expect(
      messages.filter((m) => m.includes("snapshot")),
      step,
    ).toEqual([]);
}

describe("the reconciler's snapshot", () => {
  it("gives the status tree of an uninterrupted run after every commit, whatever snapshot a restart finds", async () => {
    const restarts = fc.constantFrom<Restart>(
      "none",
      "none",
      "whole",
      "stale",
      "truncated",
      "other-build",
      "other-key",
      "missing",
    );
    const steps = fc.sample(fc.tuple(editArbitrary, restarts, fc.nat()), { numRuns: 24, seed: 45 });
    const dir = `${root}/property`;
    const reference = `${root}/property-reference`;
    const snapshots = `${root}/property-snapshots`;
    mkdirSync(dir);
    let spec: FleetSpec = BASE_SPEC;
    createRepo(dir, fleetFiles(spec));
    gitIn(root, "init", "-q", "--bare", reference);
    gitIn(reference, "fetch", "-q", dir, "+main:main");
    await reconcileReference(reference);
    let key = "key-1";
    let running = await controller(dir, snapshots, key);
    await running.reconciler.reconcile();
    await running.reconciler.close();
    const store = new SnapshotStore({ dir: snapshots, statusBranch: "gitfleet/status" });
    const kept = `${root}/kept.snapshot`;
    copyFileSync(store.path, kept);
    const seen = new Set<string>();
    for (const [index, [edit, restart, cut]] of steps.entries()) {
      spec = edit(spec);
      commitTree(dir, fleetFiles(spec), `edit ${index}`);
      gitIn(reference, "fetch", "-q", dir, "+main:main");
      await reconcileReference(reference);
      if (restart !== "none") {
        await running.reconciler.close();
        damage(restart, { path: store.path, kept }, cut);
        // Another key: what the last process wrote is refused, and this one writes with its own.
        if (restart === "other-key") key = key === "key-1" ? "key-2" : "key-1";
        running = await controller(dir, snapshots, key);
      }
      await running.reconciler.reconcile();
      expect(statusTree(dir), `step ${index} (restart: ${restart})`).toBe(statusTree(reference));
      expectSaid(restart, running.messages, `step ${index}`);
      seen.add(restart);
    }
    expect([...seen].sort()).toEqual([
      "missing",
      "none",
      "other-build",
      "other-key",
      "stale",
      "truncated",
      "whole",
    ]);
  });

  it("resumes at the tip without reading the branch, and parses nothing of an unchanged source", async () => {
    const dir = `${root}/resume`;
    const snapshots = `${root}/resume-snapshots`;
    mkdirSync(dir);
    createRepo(dir, fleetFiles(BASE_SPEC));
    const first = await controller(dir, snapshots, "key");
    await first.reconciler.reconcile();
    await first.reconciler.close();
    expect(first.messages).toContain("snapshot written");
    const next = fleetFiles({ ...BASE_SPEC, noise: 3 });
    commitTree(dir, next, "noise");
    const second = await controller(dir, snapshots, "key");
    const report = await second.reconciler.reconcile();
    expect(second.messages).toContain("resumed from the snapshot");
    // Only the changed file was parsed again: the rest came from the snapshot's parse cache.
    expect(report.recomputed?.files).toBe(1);
    await second.reconciler.close();
    expect(second.messages.filter((m) => m === "snapshot written")).toHaveLength(1);
    // A process that resumed at the tip and changed nothing writes nothing when it stops.
    const third = await controller(dir, snapshots, "key");
    expect((await third.reconciler.reconcile()).result).toBe("up-to-date");
    await third.reconciler.close();
    expect(third.messages).toContain("resumed from the snapshot");
    expect(third.messages).not.toContain("snapshot written");
  });

  it("is written readable by its owner only", async () => {
    const dir = `${root}/mode`;
    const snapshots = `${root}/mode-snapshots`;
    mkdirSync(dir);
    createRepo(dir, fleetFiles(BASE_SPEC));
    const { reconciler } = await controller(dir, snapshots, "key");
    await reconciler.reconcile();
    await reconciler.close();
    const path = new SnapshotStore({ dir: snapshots, statusBranch: "gitfleet/status" }).path;
    expect(existsSync(path)).toBe(true);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(snapshots).mode & 0o777).toBe(0o700);
  });
});

// What a restart finds: the snapshot as written, one kept from an earlier restart, one cut short, one
// of another build, none.
function damage(restart: Restart, files: { path: string; kept: string }, cut: number): void {
  const bytes = readFileSync(files.path);
  if (restart === "stale") copyFileSync(files.kept, files.path);
  else copyFileSync(files.path, files.kept);
  if (restart === "truncated") writeFileSync(files.path, bytes.subarray(0, cut % bytes.length));
  if (restart === "other-build") writeFileSync(files.path, otherBuild(bytes));
  if (restart === "missing") rmSync(files.path);
}

// The same bytes with the header's code digest changed (the tag no longer matches either way).
function otherBuild(bytes: Buffer): Buffer {
  const text = bytes.subarray(0, 400).toString("latin1");
  const at = text.indexOf('"code":"') + '"code":"'.length;
  const copy = Buffer.from(bytes);
  copy[at] = copy[at] === 0x30 ? 0x31 : 0x30;
  return copy;
}

describe("a kill while the snapshot is written", () => {
  const HELPER = fileURLToPath(new URL("../helpers/crash-in-snapshot.mjs", import.meta.url));
  const run = (dir: string, snapshots: string, stage: string) =>
    spawnSync(process.execPath, [HELPER, dir, snapshots, stage], { encoding: "utf8" });

  it("leaves the last whole snapshot, or the new one, and a restart that resumes from it", async () => {
    const dir = `${root}/crash`;
    const reference = `${root}/crash-reference`;
    const snapshots = `${root}/crash-snapshots`;
    mkdirSync(dir);
    let spec: FleetSpec = BASE_SPEC;
    createRepo(dir, fleetFiles(spec));
    gitIn(root, "init", "-q", "--bare", reference);
    // The reference reconciles every source commit too: status/apps/ names the commit that last changed each app.
    const referenceAt = async () => {
      gitIn(reference, "fetch", "-q", dir, "+main:main");
      await reconcileReference(reference);
    };
    await referenceAt();
    expect(run(dir, snapshots, "none").status).toBe(0);
    let whole = gitIn(dir, "rev-parse", "gitfleet/status");
    const stages: [stage: string, kept: "old" | "new"][] = [
      ["partial", "old"],
      ["written", "old"],
      ["renamed", "new"],
    ];
    for (const [index, [stage, kept]] of stages.entries()) {
      const before = gitIn(dir, "rev-parse", "gitfleet/status");
      spec = { ...spec, noise: spec.noise + 1 };
      commitTree(dir, fleetFiles(spec), `noise ${index}`);
      await referenceAt();
      const killed = run(dir, snapshots, stage);
      expect(killed.signal, stage).toBe("SIGKILL");
      const after = gitIn(dir, "rev-parse", "gitfleet/status");
      expect(after).not.toBe(before);
      const read = JSON.parse(run(dir, snapshots, "read").stdout);
      if (kept === "new") whole = after;
      expect(read, stage).toEqual({ kind: "read", statusTip: whole });
    }
    // The killed writes' temporary files are gone with the next write, which a restart resumes for.
    spec = { ...spec, noise: spec.noise + 1 };
    commitTree(dir, fleetFiles(spec), "noise last");
    await referenceAt();
    const { messages } = JSON.parse(run(dir, snapshots, "none").stdout);
    expect(messages).toEqual(expect.arrayContaining(["resumed from the snapshot", "snapshot written"]));
    expect(readdirSync(snapshots)).toEqual([
      new SnapshotStore({ dir: snapshots, statusBranch: "gitfleet/status" }).path.split("/").pop(),
    ]);
    expect(statusTree(dir)).toBe(statusTree(reference));
  });
});
