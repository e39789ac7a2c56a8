import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { Session } from "node:inspector";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Reconciler } from "../src/controller/reconciler.js";
import { snapshotKeyOf } from "../src/controller/snapshot/snapshot-codec.js";
import { SnapshotStore } from "../src/controller/snapshot/snapshot-store.js";
import { commitSigner } from "../src/git/commit-signer.js";
import { type CommitVerifier, commitVerifier } from "../src/git/commit-verifier.js";
import { FleetRepo } from "../src/git/fleet-repo.js";
import { createLogger } from "../src/log/logger.js";
import type { Recomputed } from "../src/reconcile/recomputed.js";
import { statusMessage } from "../src/status/status-message.js";
import { commitFleet, git } from "./fleet-repo.js";
import { generateFleet } from "./generate-fleet.js";
import { type Measurement, peakRssMiB, printMeasurements } from "./measure.js";

/**
 * Benchmark: the Git reconcile loop on a generated fleet repo in a real repository (written with the
 * git CLI) — the first full reconcile to the status commit (no sync), a reconcile after a one-app
 * change, the size of that incremental commit, and restarts: from a tip signed by the controller's
 * key (restored as it is, as the README recommends running it), and from a tip no trusted key signed
 * (the source rendered again, the branch only compared with). Status commits are signed with an SSH
 * key, as in production. Runs at several fleet sizes to show whether the incremental cost depends on
 * the fleet's size. Then the takeover of a standby replica that followed the status branch (leader
 * election): current with the tip, and one leader commit behind.
 * Prints figures; asserts nothing.
 */
const sizes = (process.env.BENCH_RECONCILE_APPS ?? "1000,5000").split(",").map(Number);
const clusters = Number(process.env.BENCH_CLUSTERS ?? 100);
// "2" or "2-3": how many clusters each app is placed on.
const [fewest = 2, most = fewest] = (process.env.BENCH_CLUSTERS_PER_APP ?? "2").split("-").map(Number);
// BENCH_LOOSE=1: the fleet's objects loose (one file each) rather than packed.
const loose = process.env.BENCH_LOOSE === "1";

async function timed<T>(
  label: string,
  step: () => Promise<T>,
): Promise<{ result: T; measurement: Measurement }> {
  globalThis.gc?.();
  const start = process.hrtime.bigint();
  const result = await step();
  const milliseconds = Number(process.hrtime.bigint() - start) / 1e6;
  // As it happens, so that a long run that fails later still shows what it measured.
  process.stderr.write(
    `  ${label}: ${milliseconds.toFixed(0)} ms, peak RSS ${peakRssMiB().toFixed(0)} MiB\n`,
  );
  return {
    result,
    measurement: { label, milliseconds, heapUsedMiB: process.memoryUsage().heapUsed / 2 ** 20 },
  };
}

// BENCH_PROFILE=file.cpuprofile writes a CPU profile of the steady one-app change, BENCH_PROFILE_RESTART
// one of the restart (open them in Chrome's DevTools).
async function profiled<T>(step: () => Promise<T>, file: string | undefined): Promise<T> {
  if (!file) return step();
  const session = new Session();
  session.connect();
  const post = (method: string) =>
    new Promise<unknown>((resolve, reject) =>
      session.post(method, (error, result) => (error ? reject(error) : resolve(result))),
    );
  await post("Profiler.enable");
  await post("Profiler.start");
  const result = await step();
  const { profile } = (await post("Profiler.stop")) as { profile: unknown };
  writeFileSync(file, JSON.stringify(profile));
  session.disconnect();
  return result;
}

// The controller's SSH signing key, made once for the run.
const keyDir = mkdtempSync(join(tmpdir(), "gitfleet-bench-key-"));
const signingKey = join(keyDir, "signing-key");
execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "gitfleet-bench", "-f", signingKey]);
const verify = (await commitVerifier({ signingKey: { format: "ssh", key: signingKey } })) as CommitVerifier;

function controller(
  repo: FleetRepo,
  trust: { verify?: CommitVerifier } = { verify },
  snapshots?: SnapshotStore,
): Reconciler {
  return new Reconciler({
    repo,
    ...(snapshots ? { snapshots } : {}),
    sign: commitSigner("ssh", signingKey),
    ...trust,
    branch: "main",
    statusBranch: "gitfleet/status",
    author: { name: "gitfleet", email: "gitfleet@example.com" },
    controllerId: "bench",
    logger: createLogger({ level: "silent" }),
  });
}

interface ChildRound {
  readonly ms: number;
  readonly result: string;
  readonly recomputed: Recomputed | null;
  readonly peakRssMiB: number;
}

// A fresh process's first round (bench/resume-child.ts), timed from the process's start.
function freshProcess(dir: string, snapshotDir: string): { result: ChildRound; measurement: Measurement } {
  const child = new URL("./resume-child.js", import.meta.url).pathname;
  const output = execFileSync(process.execPath, [child, dir, snapshotDir, signingKey], { encoding: "utf8" });
  const result = JSON.parse(output) as ChildRound;
  const label = "fresh process: resume from the snapshot, commit a one-app change";
  process.stderr.write(
    `  ${label}: ${result.ms.toFixed(0)} ms, peak RSS ${result.peakRssMiB.toFixed(0)} MiB\n`,
  );
  return { result, measurement: { label, milliseconds: result.ms, heapUsedMiB: Number.NaN } };
}

// What a round recomputed, as the bench prints it.
function recomputed(r: { recomputed?: Recomputed | null }): string {
  return r.recomputed
    ? `${r.recomputed.files} files, ${r.recomputed.apps} apps, ${r.recomputed.pairs} (app, cluster) pairs`
    : "nothing rendered";
}

for (const apps of sizes) {
  const dir = mkdtempSync(join(tmpdir(), "gitfleet-bench-"));
  try {
    const tree = generateFleet({ apps, clusters, clustersPerApp: [fewest, most] });
    commitFleet(dir, tree, { loose });
    const repo = await FleetRepo.open({ location: dir });
    // The leader keeps a snapshot (written when it stops, here), as `gitfleet run` does.
    const snapshotDir = join(dir, ".snapshots");
    const snapshots = new SnapshotStore({
      dir: snapshotDir,
      statusBranch: "gitfleet/status",
      key: snapshotKeyOf(readFileSync(signingKey)),
    });
    const loop = controller(repo, { verify }, snapshots);
    const first = await timed("first reconcile (full render, status commit)", () => loop.reconcile());
    const target = "apps/app-00042/deployment.yaml";
    const original = Buffer.from(tree.get(target) ?? new Uint8Array()).toString("utf8");
    writeFileSync(join(dir, target), original.replace(/replicas: \d+/, "replicas: 17"));
    git(dir, "commit", "-q", "-am", "app-00042: 17 replicas");
    // The first change after a start also loads what the first reconcile wrote (the status pack's
    // index); the next one is what every later change costs.
    const incremental = await timed("reconcile after a one-app change (first after start)", () =>
      loop.reconcile(),
    );
    writeFileSync(join(dir, target), original.replace(/replicas: \d+/, "replicas: 18"));
    git(dir, "commit", "-q", "-am", "app-00042: 18 replicas");
    const steady = await timed("reconcile after a one-app change (steady)", () => loop.reconcile());
    if (process.env.BENCH_PROFILE) {
      // Profiled apart from the figures: a profile slows what it records.
      writeFileSync(join(dir, target), original.replace(/replicas: \d+/, "replicas: 16"));
      git(dir, "commit", "-q", "-am", "app-00042: 16 replicas");
      await profiled(() => loop.reconcile(), process.env.BENCH_PROFILE);
    }
    // The leader alone so far: one reconciler, its first reconcile and one-app changes.
    const leaderPeak = peakRssMiB();
    const snapshotBytes = () => execFileSync("du", ["-sb", snapshotDir], { encoding: "utf8" }).split("\t")[0];
    const added = git(dir, "rev-list", "--objects", "gitfleet/status", "^gitfleet/status~1")
      .split("\n")
      .map((line) => line.split(" ")[0] as string);
    const bytes = execFileSync("git", ["cat-file", "--batch-check=%(objectsize)"], {
      cwd: dir,
      input: `${added.join("\n")}\n`,
      encoding: "utf8",
    })
      .trim()
      .split("\n")
      .reduce((sum, n) => sum + Number(n), 0);
    // A leader that stops writes its snapshot; a fresh process (modules loaded, nothing warm)
    // resumes from it and commits a one-app change.
    const written = await timed("snapshot written (the leader stops)", () => loop.close());
    writeFileSync(join(dir, target), original.replace(/replicas: \d+/, "replicas: 15"));
    git(dir, "commit", "-q", "-am", "app-00042: 15 replicas");
    const resumed = freshProcess(dir, snapshotDir);
    const restart = await timed("restart: signed tip, state restored from it", () =>
      profiled(() => controller(repo).reconcile(), process.env.BENCH_PROFILE_RESTART),
    );
    const untrusted = await timed("restart: untrusted tip, source rendered again", () =>
      controller(repo, {}).reconcile(),
    );
    // High availability: a standby replica (same signing key) follows the status branch while the
    // leader writes; a takeover's first round when it followed the latest tip, and when the leader
    // wrote once more after its last follow (its follow runs every 10 s).
    const standby = controller(repo);
    const follow = await timed("standby: follow the status branch (warm state)", () => standby.follow());
    const current = await timed("takeover: first round, standby current", () => standby.reconcile());
    writeFileSync(join(dir, target), original.replace(/replicas: \d+/, "replicas: 19"));
    git(dir, "commit", "-q", "-am", "app-00042: 19 replicas");
    await loop.reconcile();
    const behind = await timed("takeover: first round, one leader commit behind", () => standby.reconcile());
    writeFileSync(join(dir, target), original.replace(/replicas: \d+/, "replicas: 21"));
    git(dir, "commit", "-q", "-am", "app-00042: 21 replicas");
    await loop.reconcile();
    const followed = await timed("standby: follow one leader commit", () => standby.follow());
    // What the members reported (a hundred apps' health, a cluster's inventory) in the leader's
    // observation commit: a follower (standby or shard holder) takes it on without restoring.
    const appPaths = git(dir, "ls-tree", "-r", "--name-only", "gitfleet/status", "status/apps/")
      .split("\n")
      .filter(Boolean)
      .slice(0, 100);
    await loop.publishObserved(
      new Map(appPaths.map((path) => [path, "observed:\n  clusters:\n    cluster-000: {health: Healthy}\n"])),
      new Map([["status/inventory/cluster-000.yaml", "cluster: cluster-000\nobjects: 0\nentries: []\n"]]),
      statusMessage("sync", "sync: cluster-000"),
    );
    const observed = await timed("standby: follow one observation commit (100 apps)", () => standby.follow());
    const files = git(dir, "ls-tree", "-r", "--name-only", "gitfleet/status").split("\n").length;
    const placed = fewest === most ? `${fewest}` : `${fewest}–${most}`;
    printMeasurements(
      `reconcile: ${apps} apps on ${placed} of ${clusters} clusters each, ${loose ? "loose" : "packed"} objects, ${files} files on the status branch`,
      [
        first.measurement,
        incremental.measurement,
        steady.measurement,
        written.measurement,
        resumed.measurement,
        restart.measurement,
        untrusted.measurement,
        follow.measurement,
        current.measurement,
        behind.measurement,
        followed.measurement,
        observed.measurement,
      ],
    );
    process.stdout.write(
      `  peak RSS of the leader (first reconcile and the one-app change, before any other reconciler): ${leaderPeak.toFixed(0)} MiB\n`,
    );
    process.stdout.write(
      `  snapshot: ${(Number(snapshotBytes()) / 2 ** 20).toFixed(0)} MiB; the fresh process that resumed from it: ${resumed.result.result}, recomputed ${recomputed(resumed.result)}, peak RSS ${resumed.result.peakRssMiB.toFixed(0)} MiB\n`,
    );
    process.stdout.write(
      `  the standby's follow of one leader commit: ${followed.result}; of an observation commit: ${observed.result}\n`,
    );
    process.stdout.write(
      `  incremental commit: ${incremental.result.filesChanged} files changed, ${added.length} new objects, ${(bytes / 1024).toFixed(1)} KiB (uncompressed); first: ${first.result.filesChanged} files\n`,
    );
    const stages = (r: { durationsMs: Readonly<Record<string, number>> }) =>
      Object.entries(r.durationsMs)
        .map(([stage, ms]) => `${stage} ${ms.toFixed(0)}`)
        .join(", ");
    process.stdout.write(
      `  stages (ms): first: ${stages(first.result)}\n  incremental: ${stages(incremental.result)}\n  steady: ${stages(steady.result)}\n  restart: ${stages(restart.result)}\n  untrusted restart: ${stages(untrusted.result)}\n`,
    );
    // A restart restores (or renders again) before its reconcile, which then has nothing to recompute.
    process.stdout.write(
      `  recomputed: first: ${recomputed(first.result)}\n  incremental: ${recomputed(incremental.result)}\n  steady: ${recomputed(steady.result)}\n`,
    );
    process.stdout.write(`  peak RSS so far ${peakRssMiB().toFixed(0)} MiB\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
rmSync(keyDir, { recursive: true, force: true });
