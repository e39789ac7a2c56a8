import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BASE_SPEC, editArbitrary, type FleetSpec, fleetFiles } from "../helpers/fleet-spec.js";
import { commitTree, createRepo, gitIn, tempDir } from "../helpers/git-repo.js";
import { reconcileReference, statusTree } from "../helpers/reference-reconcile.js";

/**
 * Kill the controller at any point and the next start converges to the same status tree: a real
 * `gitfleet reconcile --once` process is SIGKILLed at random moments (and, deterministically, between
 * writing the commit's objects and moving the branch, and right after moving it), then run to the
 * end; a reference repository with the same source history, reconciled without interruption, must
 * end with the identical status tree after every source commit.
 */
const BIN = fileURLToPath(new URL("../../bin/gitfleet.js", import.meta.url));
const CRASH = fileURLToPath(new URL("../helpers/crash-at-stage.mjs", import.meta.url));
let root: string;
let cleanup: () => void;

beforeAll(() => {
  ({ dir: root, cleanup } = tempDir("gitfleet-crash-"));
});
afterAll(() => cleanup());

function runKilledAfter(dir: string, delayMs: number): Promise<string> {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      [BIN, "reconcile", "--repo", dir, "--once", "--no-sync", "--log-level", "error"],
      {
        stdio: "ignore",
      },
    );
    const timer = setTimeout(() => child.kill("SIGKILL"), delayMs);
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      resolve(signal ?? String(code));
    });
  });
}

describe("crash safety", () => {
  it("converges to the reference status tree after SIGKILLs at random points of real processes", async () => {
    const dir = `${root}/random`;
    const reference = `${root}/random-reference`;
    mkdirSync(dir);
    const edits = fc.sample(editArbitrary, { numRuns: 5, seed: 42 });
    const delays = fc.sample(fc.integer({ min: 0, max: 900 }), { numRuns: 10, seed: 7 });
    let spec: FleetSpec = BASE_SPEC;
    createRepo(dir, fleetFiles(spec));
    // The reference holds the very same source commits: a bare repository fetching them.
    gitIn(root, "init", "-q", "--bare", reference);
    gitIn(reference, "fetch", "-q", dir, "+main:main");
    const outcomes: string[] = [];
    for (let step = 0; step <= edits.length; step++) {
      if (step > 0) {
        spec = (edits[step - 1] as (s: FleetSpec) => FleetSpec)(spec);
        commitTree(dir, fleetFiles(spec), `edit ${step}`);
        gitIn(reference, "fetch", "-q", dir, "+main:main");
      }
      outcomes.push(await runKilledAfter(dir, delays[step * 2] ?? 100));
      outcomes.push(await runKilledAfter(dir, delays[step * 2 + 1] ?? 300));
      // The run after the kills goes to the end.
      const finished = spawnSync(
        process.execPath,
        [BIN, "reconcile", "--repo", dir, "--once", "--no-sync", "--log-level", "error"],
        {
          encoding: "utf8",
        },
      );
      expect(finished.stderr).toBe("");
      await reconcileReference(reference);
      expect(statusTree(dir)).toBe(statusTree(reference));
      expect(existsSync(`${dir}/.git/refs/heads/gitfleet/status.lock`)).toBe(false);
    }
    expect(gitIn(dir, "fsck", "--strict", "--no-dangling").includes("error")).toBe(false);
    // Some runs were killed, some were not: the delays straddle the time a reconcile takes.
    expect(outcomes).toContain("SIGKILL");
  });

  it("converges after a kill while holding the status branch's lock", async () => {
    const dir = `${root}/held-lock`;
    mkdirSync(dir);
    createRepo(dir, fleetFiles(BASE_SPEC));
    // What a writer killed between taking the lock and renaming it over the ref leaves behind.
    mkdirSync(`${dir}/.git/refs/heads/gitfleet`, { recursive: true });
    writeFileSync(`${dir}/.git/refs/heads/gitfleet/status.lock`, "");
    const rerun = spawnSync(
      process.execPath,
      [BIN, "reconcile", "--repo", dir, "--once", "--no-sync", "--log-level", "error"],
      { encoding: "utf8" },
    );
    expect(rerun.stderr).toBe("");
    expect(rerun.stdout).toMatch(/: committed/);
    expect(existsSync(`${dir}/.git/refs/heads/gitfleet/status.lock`)).toBe(false);
    expect(gitIn(dir, "rev-list", "--count", "gitfleet/status")).toBe("1");
  }, 60_000);

  it.each([["written"], ["published"]])(
    "converges after a kill at the %s stage of publishing",
    async (stage) => {
      const dir = `${root}/stage-${stage}`;
      const reference = `${root}/stage-${stage}-reference`;
      mkdirSync(dir);
      createRepo(dir, fleetFiles(BASE_SPEC));
      // The reference holds the very same source commit: a bare repository fetching it.
      gitIn(root, "init", "-q", "--bare", reference);
      gitIn(reference, "fetch", "-q", dir, "+main:main");
      const crashed = spawnSync(process.execPath, [CRASH, dir, stage], { encoding: "utf8" });
      expect(crashed.signal).toBe("SIGKILL");
      const published = spawnSync("git", ["rev-parse", "--verify", "-q", "gitfleet/status"], {
        cwd: dir,
        encoding: "utf8",
      });
      // Killed before the branch moved, there is no status branch yet; killed after, there is.
      expect(published.status === 0).toBe(stage === "published");
      const rerun = spawnSync(
        process.execPath,
        [BIN, "reconcile", "--repo", dir, "--once", "--no-sync", "--log-level", "error"],
        {
          encoding: "utf8",
        },
      );
      expect(rerun.status).toBe(0);
      expect(rerun.stdout).toMatch(stage === "published" ? /: up-to-date/ : /: committed/);
      await reconcileReference(reference);
      expect(statusTree(dir)).toBe(statusTree(reference));
      expect(gitIn(dir, "rev-list", "--count", "gitfleet/status")).toBe("1");
    },
  );
});
