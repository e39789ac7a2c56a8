import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parse } from "yaml";
import { DEFAULT_STATUS_INTERVAL_MS } from "../src/controller/fleet-settings.js";
import type { WorkloadDecision } from "../src/render/render-result.js";
import type { ClusterSyncResult } from "../src/sync/sync-result.js";
import { benchController } from "./bench-controller.js";
import { commitFleet, git } from "./fleet-repo.js";
import { generateFleet } from "./generate-fleet.js";
import { childCpuSeconds, childPeakRssMiB, ownCpuSeconds, peakRssMiB } from "./measure.js";
import { mergedKubeconfig, startSimulator, stopSimulators } from "./simulators.js";

/**
 * Benchmark: push-mode sync of a generated fleet (BENCH_SYNC_APPS apps, default 1,000, each on two of
 * BENCH_SYNC_CLUSTERS clusters, default 5) to simulated members running in a separate `gitfleet
 * simulate` process with nodes, pods and workload controllers — the time from a source commit to every
 * member holding the rendered tree, and to every app Healthy, and applies per second; then the same
 * for a one-app change. Prints figures; asserts nothing.
 */
const apps = Number(process.env.BENCH_SYNC_APPS ?? 1000);
const clusters = Number(process.env.BENCH_SYNC_CLUSTERS ?? 5);

const PROFILE = `readyDelayMs: 200
default:
  nodePools:
    - count: 40
      allocatable: { cpu: "64", memory: 256Gi, pods: "250" }
`;

const dir = mkdtempSync(join(tmpdir(), "gitfleet-bench-sync-"));
const fleet = join(dir, "fleet");
const tree = generateFleet({ apps, clusters, clustersPerApp: 2, failoverTolerationSeconds: 5 });
commitFleet(fleet, tree);
writeFileSync(join(dir, "profile.yaml"), PROFILE);
const kubeconfig = join(dir, "kubeconfig");
// The members run apart from the controller, each in its own `gitfleet simulate` process (or
// BENCH_SIM_PROCESSES processes sharing them out), so each side's CPU time is measured on its own.
const names = [...tree.keys()]
  .filter((path) => /^clusters\/[^/]+\.yaml$/.test(path))
  .map((path) => path.slice("clusters/".length, -".yaml".length))
  .sort();
const processCount = Math.max(
  1,
  Math.min(names.length, Number(process.env.BENCH_SIM_PROCESSES ?? names.length)),
);
const simulators = await Promise.all(
  Array.from({ length: processCount }, (_, i) =>
    startSimulator({
      fleet,
      members: names.filter((_, n) => n % processCount === i),
      out: join(dir, `kubeconfig-${i}`),
      profile: join(dir, "profile.yaml"),
    }),
  ),
);
writeFileSync(kubeconfig, mergedKubeconfig(simulators.map((s) => s.kubeconfig)), { mode: 0o600 });

const { syncer, controller, prober, reconciler } = await benchController(fleet, kubeconfig, {
  // As `gitfleet run` has it: observed status and the members' capacity at most every 30 s.
  statusIntervalMs: DEFAULT_STATUS_INTERVAL_MS,
  resyncIntervalMs: 3_600_000,
  client: { timeoutMs: 60_000 },
});

const healthy = (results: ReadonlyMap<string, ClusterSyncResult>) =>
  [...results.values()].every((r) => r.reachable && r.objects.every((o) => o.health.status === "Healthy"));
const count = (results: ReadonlyMap<string, ClusterSyncResult>, actions: string[]) =>
  [...results.values()].reduce(
    (sum, r) => sum + r.objects.filter((o) => actions.includes(o.action)).length,
    0,
  );

// One commit through to Healthy: the first round (reconcile, apply), then resyncs until every object is Healthy.
async function throughToHealthy(label: string): Promise<void> {
  const cpu = cpuNow();
  const start = performance.now();
  const report = await controller.reconcile();
  const reconciled = performance.now();
  await syncer.idle();
  const applied = performance.now();
  const results = syncer.latest();
  const writes = count(results, ["created", "configured", "corrected"]);
  const objects = [...results.values()].reduce((sum, r) => sum + r.objects.length, 0);
  await controller.flush();
  let rounds = 1;
  while (!healthy(syncer.latest()) && rounds < 600) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    controller.resyncSoon();
    await controller.reconcile();
    await syncer.idle();
    rounds++;
  }
  await controller.flush();
  const done = performance.now();
  process.stdout.write(
    `  ${label}\n` +
      `    reconcile (render, status commit)       ${(reconciled - start).toFixed(0).padStart(7)} ms (${report.filesChanged} files)\n` +
      `    sync: ${writes} of ${objects} objects applied ${(applied - reconciled).toFixed(0).padStart(7)} ms   ${writes > 0 ? ((writes / (applied - reconciled)) * 1000).toFixed(0) : "-"} applies/s\n` +
      `    commit → all members hold it            ${(applied - start).toFixed(0).padStart(7)} ms\n` +
      `    commit → every app Healthy              ${(done - start).toFixed(0).padStart(7)} ms (${rounds} sync rounds)${healthy(syncer.latest()) ? "" : " — NOT healthy"}\n` +
      `    CPU                                     ${cpuSince(cpu)}\n`,
  );
}

// CPU seconds used so far by the controller (this process) and by the members' process.
function cpuNow(): { controller: number; members: number } {
  const members = simulators.reduce((sum, s) => sum + childCpuSeconds(s.child.pid), 0);
  return { controller: ownCpuSeconds(), members };
}

function cpuSince(before: { controller: number; members: number }): string {
  const now = cpuNow();
  return `controller ${(now.controller - before.controller).toFixed(1)} s, members ${(now.members - before.members).toFixed(1)} s`;
}

/**
 * A member stops answering (closed port, through the simulator's fault endpoint): the time until it
 * is NotReady, until the failover commit, and until every replica of the Divided apps it ran is
 * ready in the other clusters; the failover reconcile's duration (a full render of the fleet).
 */
async function failoverPhase(): Promise<void> {
  writeFileSync(join(fleet, "fleet.yaml"), FAILOVER_FLEET_YAML);
  git(fleet, "add", "fleet.yaml");
  git(fleet, "commit", "-q", "-m", "probe every second, NoExecute after 5s");
  await throughToHealthy("fleet.yaml: clusterHealth for the failover run");
  // Every tenth app is Divided, and those run on cluster-0000 (staging) and cluster-0003.
  const victim = "cluster-0003";
  const state = reconciler.snapshot().state;
  const moving = state.render.decisions.filter(
    (d) =>
      (d.decision.clusters[victim] ?? 0) > 0 && Object.keys(d.decision.clusters).length > 1 && d.replicas > 0,
  );
  const divided = moving.filter(
    (d) => Object.values(d.decision.clusters).reduce((a, b) => a + b, 0) === d.replicas,
  );
  const url = memberUrl(victim);
  await fetch(`${url}/_gitfleet/faults`, { method: "POST", body: JSON.stringify({ downForSeconds: 600 }) });
  const cpu = cpuNow();
  const down = performance.now();
  let notReady: number | undefined;
  let moved: number | undefined;
  let failoverReconcileMs = 0;
  let ready: number | undefined;
  // The prober on its own timer, as `gitfleet run` has it, and rounds as run starts them: when a
  // cluster's condition changes, at the time the round asks to be run again, else every 250 ms. No
  // resync is forced: the failover render syncs the apps it changed. Readiness is read from the
  // members themselves.
  prober.start();
  const watch = setInterval(() => {
    if (notReady === undefined && prober.conditions().get(victim)?.health.ready === false)
      notReady = performance.now();
  }, 20);
  let next = 0;
  while (ready === undefined && performance.now() - down < 120_000) {
    if (performance.now() >= next) {
      const report = await controller.reconcile();
      if (moved === undefined && report.result === "committed" && failoverMoved(divided, victim)) {
        moved = performance.now();
        failoverReconcileMs = (report.durationsMs.reconcile ?? 0) + (report.durationsMs.write ?? 0);
      }
      next = performance.now() + Math.min(report.requeue?.afterMs ?? 250, 250);
    }
    if (moved !== undefined && (await replacementsReady(divided, victim))) ready = performance.now();
    else await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await syncer.idle();
  prober.stop();
  clearInterval(watch);
  const at = (t: number | undefined) => (t === undefined ? "never" : `${((t - down) / 1000).toFixed(1)} s`);
  process.stdout.write(
    `  failover: ${victim} down (probe every 1s, failureThreshold 3, noExecuteAfter 5s, tolerationSeconds 5); ${divided.length} Divided workloads to move\n` +
      `    NotReady after                          ${at(notReady)}\n` +
      `    failover commit after                   ${at(moved)} (render and write ${failoverReconcileMs.toFixed(0)} ms)\n` +
      `    all their replicas ready elsewhere after ${at(ready)}\n` +
      `    CPU                                     ${cpuSince(cpu)}\n`,
  );
}

const FAILOVER_FLEET_YAML = `apiVersion: gitfleet.io/v1alpha1
kind: Fleet
metadata:
  name: bench
spec:
  clusterHealth:
    probeInterval: 1s
    probeTimeout: 1s
    failureThreshold: 3
    successThreshold: 3
    noExecuteAfter: 5s
`;

function memberUrl(cluster: string): string {
  const config = parse(readFileSync(kubeconfig, "utf8")) as {
    clusters: { name: string; cluster: { server: string } }[];
  };
  const found = config.clusters.find((c) => c.name === cluster);
  if (!found) throw new Error(`no ${cluster} in the simulator's kubeconfig`);
  return found.cluster.server;
}

// Every workload that ran on the victim has left it in the render.
function failoverMoved(workloads: readonly WorkloadDecision[], victim: string): boolean {
  const now = new Map(reconciler.snapshot().state.render.decisions.map((d) => [d.identity, d]));
  return workloads.every((w) => (now.get(w.identity)?.decision.clusters[victim] ?? 0) === 0);
}

// Every one of those workloads has its whole total ready in the other clusters, as their members
// report their Deployments.
async function replacementsReady(workloads: readonly WorkloadDecision[], victim: string): Promise<boolean> {
  const readyCount = new Map<string, number>();
  for (const cluster of names.filter((n) => n !== victim)) {
    const list = (await (await fetch(`${memberUrl(cluster)}/apis/apps/v1/deployments`)).json()) as {
      items: { metadata: { namespace: string; name: string }; status?: { readyReplicas?: number } }[];
    };
    for (const d of list.items) {
      const identity = `apps/Deployment/${d.metadata.namespace}/${d.metadata.name}`;
      readyCount.set(identity, (readyCount.get(identity) ?? 0) + (d.status?.readyReplicas ?? 0));
    }
  }
  return workloads.every((w) => (readyCount.get(w.identity) ?? 0) >= w.replicas);
}

try {
  process.stdout.write(
    `\nsync: ${apps} apps on ${clusters} simulated members (each app on 2), members in ${processCount} processes of their own\n`,
  );
  await throughToHealthy("first sync of the whole fleet");
  const target = "apps/app-00042/deployment.yaml";
  const original = Buffer.from(tree.get(target) ?? new Uint8Array()).toString("utf8");
  writeFileSync(join(fleet, target), original.replace(/image: (\S+):1\.\d+\.0/, "image: $1:9.9.9"));
  git(fleet, "commit", "-q", "-am", "app-00042: new image");
  await throughToHealthy("a one-app change (new image, rolled out)");
  controller.resyncSoon();
  const cpu = cpuNow();
  const start = performance.now();
  await controller.reconcile();
  await syncer.idle();
  process.stdout.write(
    `  a resync with nothing to change (drift and health check of every object) ${(performance.now() - start).toFixed(0)} ms (CPU ${cpuSince(cpu)})\n`,
  );
  await failoverPhase();
  process.stdout.write(
    `  peak RSS: controller ${peakRssMiB().toFixed(0)} MiB, members' processes ${simulators.map((s) => childPeakRssMiB(s.child.pid).toFixed(0)).join(" + ")} MiB\n`,
  );
} finally {
  stopSimulators(simulators);
  rmSync(dir, { recursive: true, force: true });
}
