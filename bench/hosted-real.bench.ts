import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { asList, asMap } from "../src/apimachinery/json.js";
import type { MemberClient } from "../src/kube/member-client.js";
import { buildReleases, freeRange, hostedClient, startHost } from "../test/e2e/cluster/hosted-host.js";
import { benchController } from "./bench-controller.js";
import { git } from "./fleet-repo.js";

/**
 * Benchmark: N hosted control planes on one real host with the real binaries (BENCH_HOSTED_REAL,
 * default 1,4,8) — the second tier's harness: a real kube-apiserver, controller-manager and scheduler
 * for the host, whose one node runs pods as processes (test/e2e/cluster/process-runtime.ts), each
 * hosted cluster a single-member etcd, one API server, one controller-manager and one scheduler.
 * For each N, on a fresh host: t, the commit that adds the N clusters → each hosted API server
 * answers /readyz with the admin kubeconfig gitfleet wrote; u, the approving commit of one batch
 * upgrading all N (the minor release before the tier's → the tier's) → each cluster's components all run the
 * new version, Ready; the resident memory of the control planes' processes (per control plane); and
 * the host's objects per control plane. Prints figures; asserts nothing.
 */
const sizes = (process.env.BENCH_HOSTED_REAL ?? "1,4,8").split(",").map(Number);
const releases = buildReleases();
const { version, previous, etcd } = releases;
const COMPONENTS = ["kube-apiserver", "kube-controller-manager", "kube-scheduler"];

process.stdout.write(
  `\nhosted control planes on one real host (the real binaries; ${previous} → ${version}; etcd ${etcd})\n` +
    "     N   t: commit → API server Ready (min / median / max)   u: approving commit → all upgraded (min / median / max)   RSS per control plane   host objects per control plane\n",
);
for (const n of sizes) await run(n);

async function run(n: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "gitfleet-bench-hosted-real-"));
  const meta = await startHost(releases, { runDir: join(dir, "run") });
  const { client: host, runtime, planes } = meta;
  const names = Array.from({ length: n }, (_, i) => `pc-${i + 1}`);
  const ports = new Map<string, number>();
  for (const name of names) ports.set(name, await freeRange(new Set(ports.values())));
  const fleet = join(dir, "fleet");
  try {
    write(fleet, files(names, ports, undefined));
    git(fleet, "init", "-q", "-b", "main");
    git(fleet, "add", "-A");
    git(fleet, "commit", "-q", "-m", `${n} hosted clusters`);
    const committed = performance.now();
    const { controller, syncer } = await benchController(fleet, planes.kubeconfig, {
      statusIntervalMs: 0,
      resyncIntervalMs: 3_600_000,
      client: { retries: 1, backoffMs: 10, timeoutMs: 3000 },
    });
    const round = async () => {
      controller.resyncSoon();
      await controller.reconcile();
      await syncer.idle();
      await controller.flush();
    };
    const t = await untilEach(
      names,
      round,
      async (name) => (await hostedClient(host, name))?.probe(),
      committed,
    );
    // Every process the runtime runs is a control plane's: their memory, and the host's objects.
    const rss = runtime.pids().reduce((sum, pid) => sum + rssMiB(pid), 0);
    const objects = syncer.latest().get("meta-1")?.objects.length ?? 0;
    const secrets = asList(asMap(await host.raw("GET", "/api/v1/secrets")).items).filter((s) =>
      String(asMap(asMap(s).metadata).namespace).startsWith("gitfleet-cp-"),
    ).length;
    // One approved batch upgrading all of them.
    write(fleet, files(names, ports, names));
    git(fleet, "add", "-A");
    git(fleet, "commit", "-q", "-m", `upgrade ${n} clusters to ${version}`);
    const approved = performance.now();
    const u = await untilEach(names, round, async (name) => upgraded(host, name), approved);
    process.stdout.write(
      `  ${String(n).padStart(4)}   ${spread(t).padEnd(50)}   ${spread(u).padEnd(56)}   ${(rss / n).toFixed(0).padStart(7)} MiB   ${(objects / n).toFixed(0)} (${(secrets / n).toFixed(0)} of them credential Secrets)\n`,
    );
  } finally {
    await meta.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

// Rounds of the controller until `done` holds for every name; when each first held, after `from`.
async function untilEach(
  names: readonly string[],
  round: () => Promise<void>,
  done: (name: string) => Promise<unknown>,
  from: number,
): Promise<number[]> {
  const at = new Map<string, number>();
  const deadline = Date.now() + 20 * 60_000;
  while (at.size < names.length) {
    if (Date.now() > deadline) throw new Error(`not done in 20 minutes: ${names.filter((n) => !at.has(n))}`);
    await round();
    for (const name of names) {
      if (at.has(name)) continue;
      const answer = await done(name).catch(() => undefined);
      if (answer === true || asMap(answer).outcome === "ready") at.set(name, performance.now() - from);
    }
  }
  return names.map((name) => at.get(name) as number);
}

// Every component Deployment of the cluster at the new version, rolled out and Ready.
async function upgraded(host: MemberClient, cluster: string): Promise<boolean> {
  for (const component of COMPONENTS) {
    const deployment = await host.get({
      apiVersion: "apps/v1",
      kind: "Deployment",
      namespace: `gitfleet-cp-${cluster}`,
      name: component,
    });
    const spec = asMap(deployment?.spec);
    const status = asMap(deployment?.status);
    const image = String(asMap(asList(asMap(asMap(spec.template).spec).containers)[0]).image);
    const replicas = Number(spec.replicas ?? 1);
    if (!image.endsWith(`:${version}`)) return false;
    if (Number(status.updatedReplicas ?? 0) !== replicas || Number(status.readyReplicas ?? 0) !== replicas)
      return false;
    if (Number(status.replicas ?? 0) !== replicas) return false;
  }
  return true;
}

function files(
  names: readonly string[],
  ports: ReadonlyMap<string, number>,
  upgrade: readonly string[] | undefined,
): Record<string, string> {
  return {
    "fleet.yaml":
      'apiVersion: gitfleet.io/v1alpha1\nkind: Fleet\nmetadata: { name: bench }\nspec: { kubernetesVersion: "1.36" }\n',
    "clusters/meta-1.yaml":
      "apiVersion: gitfleet.io/v1alpha1\nkind: Cluster\nmetadata: { name: meta-1 }\nspec: {}\n",
    ...Object.fromEntries(
      names.map((name) => [
        `clusters/${name}.yaml`,
        `apiVersion: gitfleet.io/v1alpha1
kind: Cluster
metadata: { name: ${name} }
spec:
  controlPlane:
    host: meta-1
    class: standard
    expose: { type: HostPort, port: ${ports.get(name)}, address: 127.0.0.1, nodeSelector: { gitfleet.io/runtime: process } }
`,
      ]),
    ),
    "controlplanes/standard.yaml": `apiVersion: gitfleet.io/v1alpha1
kind: ControlPlaneClass
metadata: { name: standard }
spec:
  version: ${previous}
  apiServer: { replicas: 1, extraArgs: { endpoint-reconciler-type: none, enable-priority-and-fairness: "false" } }
  controllerManager: { replicas: 1 }
  scheduler: { replicas: 1 }
  etcd: { version: ${etcd}-0, replicas: 1, storage: 1Gi, backup: { schedule: "0 0 1 1 *", storage: 1Gi, suspend: true } }
`,
    ...(upgrade
      ? {
          "controlplanes/bench-upgrade.yaml": `apiVersion: gitfleet.io/v1alpha1
kind: ControlPlaneUpgrade
metadata: { name: bench-upgrade }
spec:
  version: ${version}
  observe: 0s
  batches:
    - { name: all, clusters: [${upgrade.join(", ")}], approved: true }
`,
        }
      : {}),
  };
}

function write(dir: string, tree: Record<string, string>): void {
  for (const [path, text] of Object.entries(tree)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
}

function rssMiB(pid: number): number {
  try {
    const line = readFileSync(`/proc/${pid}/status`, "utf8")
      .split("\n")
      .find((l) => l.startsWith("VmRSS:"));
    return Number(/(\d+)/.exec(line ?? "")?.[1] ?? 0) / 1024;
  } catch {
    return 0;
  }
}

// "4.6 / 5.1 / 6.0 s"
function spread(ms: readonly number[]): string {
  const sorted = [...ms].sort((a, b) => a - b);
  const s = (v: number | undefined) => ((v ?? 0) / 1000).toFixed(1);
  return `${s(sorted[0])} / ${s(sorted[Math.floor(sorted.length / 2)])} / ${s(sorted.at(-1))} s`;
}
