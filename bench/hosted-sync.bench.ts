import "reflect-metadata";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ClusterSyncResult } from "../src/sync/sync-result.js";
import { benchController } from "./bench-controller.js";
import { commitFleet, git } from "./fleet-repo.js";
import { hostedFleet } from "./hosted-fleet.js";
import { childCpuSeconds, childPeakRssMiB, ownCpuSeconds, peakRssMiB } from "./measure.js";
import { startSimulator, stopSimulators } from "./simulators.js";

/**
 * Benchmark: the controller running one meta cluster that hosts N control planes (BENCH_HOSTED_SYNC,
 * default 100 and 1000), the host a simulated member in a `gitfleet simulate` process of its own —
 * the first reconcile (render and status commit), the host's sync (every control plane's objects and
 * the credentials pass that writes their Secrets), the status commit after it and the status branch's
 * size, the time until every control-plane object in the host is Healthy, and a resync with nothing
 * to change; each also per hosted cluster. The hosted clusters' own API servers are not simulated:
 * each is at 127.0.0.1 on a port where nothing listens, so reaching one (its addons) is refused at
 * once, and they have no node pools (whose join tokens live in them): the figures are the host's
 * side. Prints figures; asserts nothing.
 */
const sizes = (process.env.BENCH_HOSTED_SYNC ?? "100,1000").split(",").map(Number);

// Enough simulated nodes for seven pods per control plane (three etcd members, two API servers, the
// controller-manager and the scheduler) at N = 1,000.
const PROFILE = `readyDelayMs: 200
default:
  nodePools:
    - count: 40
      allocatable: { cpu: "256", memory: 1024Gi, pods: "400" }
`;

const HOST = "meta-1";

for (const n of sizes) await run(n);

async function run(n: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "gitfleet-bench-hosted-sync-"));
  const fleet = join(dir, "fleet");
  commitFleet(fleet, hostedFleet(n, "NodePort"));
  writeFileSync(join(dir, "profile.yaml"), PROFILE);
  const simulator = await startSimulator({
    fleet,
    members: [HOST],
    out: join(dir, "kubeconfig"),
    profile: join(dir, "profile.yaml"),
  });
  // When the host's last sync ended: the hosted clusters' own syncs (refused, retried) end later.
  let hostSynced = 0;
  const { syncer, controller } = await benchController(fleet, simulator.kubeconfig, {
    onSyncResult: (result) => {
      if (result.cluster === HOST) hostSynced = performance.now();
    },
    // Every flush commits what changed: the status commits are measured, not the interval between them.
    statusIntervalMs: 0,
    resyncIntervalMs: 3_600_000,
    // No retries: a hosted cluster's refused connection fails at once instead of after backoff, so
    // the round measured is the host's (the local simulator gives no transient failures to retry).
    client: { timeoutMs: 60_000, retries: 0 },
  });
  const cpu = () => ({ controller: ownCpuSeconds(), members: childCpuSeconds(simulator.child.pid) });
  const per = (ms: number) => `${(ms / n).toFixed(2)} ms per hosted cluster`;
  const line = (label: string, ms: number, more = "") =>
    process.stdout.write(`  ${label.padEnd(52)} ${ms.toFixed(0).padStart(7)} ms  ${per(ms)}${more}\n`);
  try {
    process.stdout.write(
      `\nhosted clusters: ${n} on one simulated host, the controller and the host in processes of their own\n`,
    );
    const before = cpu();
    let start = performance.now();
    const report = await controller.reconcile();
    line("reconcile (render, status commit)", performance.now() - start, `; ${report.filesChanged} files`);
    start = performance.now();
    await syncer.idle();
    const host = syncer.latest().get(HOST);
    const applied = host?.objects.filter((o) => ["created", "configured"].includes(o.action)).length ?? 0;
    line(
      "sync of the host (objects, then credentials)",
      hostSynced - start,
      `; ${applied} objects applied, ${secretsWritten(host)} credentials written`,
    );
    start = performance.now();
    const flushed = await controller.flush();
    line("status commit after the sync", performance.now() - start, `; ${flushed}`);
    const statusBranch = treeSize(fleet, "gitfleet/status");
    process.stdout.write(
      `  status branch: ${statusBranch.files} files, ${(statusBranch.bytes / 1024).toFixed(0)} KiB; ` +
        `${(statusBranch.bytes / n / 1024).toFixed(1)} KiB per hosted cluster\n`,
    );
    start = performance.now();
    let rounds = 1;
    while (!hostHealthy(syncer.latest()) && rounds < 600) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      controller.resyncSoon();
      await controller.reconcile();
      await syncer.idle();
      rounds++;
    }
    await controller.flush();
    line(
      "then until every object in the host is Healthy",
      performance.now() - start,
      `; ${rounds} sync rounds${hostHealthy(syncer.latest()) ? "" : " — NOT healthy"}`,
    );
    controller.resyncSoon();
    start = performance.now();
    await controller.reconcile();
    await syncer.idle();
    line("a resync of the host with nothing to change", hostSynced - start);
    const after = cpu();
    process.stdout.write(
      `  CPU: controller ${(after.controller - before.controller).toFixed(1)} s, host ${(after.members - before.members).toFixed(1)} s; ` +
        `peak RSS: controller ${peakRssMiB().toFixed(0)} MiB, host ${childPeakRssMiB(simulator.child.pid).toFixed(0)} MiB\n`,
    );
  } finally {
    stopSimulators([simulator]);
    rmSync(dir, { recursive: true, force: true });
  }
}

function hostHealthy(results: ReadonlyMap<string, ClusterSyncResult>): boolean {
  const host = results.get(HOST);
  return host?.reachable === true && host.objects.every((o) => o.health.status === "Healthy");
}

// Credentials the host's last pass created, renewed or re-issued.
function secretsWritten(host: ClusterSyncResult | undefined): number {
  let written = 0;
  for (const entry of Object.values(host?.credentials ?? {}))
    if ("records" in entry) written += entry.records.filter((r) => r.action !== "kept").length;
  return written;
}

// Files and bytes in a branch's tree.
function treeSize(repo: string, branch: string): { files: number; bytes: number } {
  const rows = git(repo, "ls-tree", "-r", "-l", branch).split("\n").filter(Boolean);
  const bytes = rows.reduce((sum, row) => sum + (Number(row.split(/\s+/)[3]) || 0), 0);
  return { files: rows.length, bytes };
}
