import { readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";

/**
 * A fresh process's first round, for reconcile.bench: starts, resumes from the snapshot in
 * `snapshotDir` (or restores from the status branch without one) and reconciles the source branch's
 * tip. Prints, as JSON, the milliseconds from the process's start to the status commit, what the
 * round recomputed and the process's peak RSS. Modules are imported here so their loading counts.
 */
const [dir, snapshotDir, signingKey] = process.argv.slice(2) as [string, string, string];
const { Reconciler } = await import("../src/controller/reconciler.js");
const { snapshotKeyOf } = await import("../src/controller/snapshot/snapshot-codec.js");
const { SnapshotStore } = await import("../src/controller/snapshot/snapshot-store.js");
const { commitSigner } = await import("../src/git/commit-signer.js");
const { commitVerifier } = await import("../src/git/commit-verifier.js");
const { FleetRepo } = await import("../src/git/fleet-repo.js");
const { createLogger } = await import("../src/log/logger.js");
const verify = await commitVerifier({ signingKey: { format: "ssh", key: signingKey } });
const snapshots =
  snapshotDir === "-"
    ? undefined
    : new SnapshotStore({
        dir: snapshotDir,
        statusBranch: "gitfleet/status",
        key: snapshotKeyOf(readFileSync(signingKey)),
      });
const reconciler = new Reconciler({
  repo: await FleetRepo.open({ location: dir }),
  sign: commitSigner("ssh", signingKey),
  ...(verify ? { verify } : {}),
  ...(snapshots ? { snapshots } : {}),
  branch: "main",
  statusBranch: "gitfleet/status",
  author: { name: "gitfleet", email: "gitfleet@example.com" },
  controllerId: "bench",
  logger: createLogger({ level: "silent" }),
});
const report = await reconciler.reconcile();
process.stdout.write(
  JSON.stringify({
    ms: performance.now(),
    result: report.result,
    recomputed: report.recomputed ?? null,
    peakRssMiB: process.resourceUsage().maxRSS / 1024,
  }),
);
