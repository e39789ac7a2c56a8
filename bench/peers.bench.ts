import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startControlPlanes } from "../test/e2e/cluster/control-plane.js";
import { FAKE_KUBELETS } from "../test/e2e/peers/fake-kubelets.js";
import { changedConfigMaps, GITFLEET_CLUSTER, peerFleet } from "../test/e2e/peers/peer-fleet.js";
import {
  applyWithFlux,
  applyWithKubectl,
  commitTree,
  GitfleetPeer,
  type StepRun,
  writeRendered,
} from "../test/e2e/peers/peer-tools.js";

/**
 * Benchmark: gitfleet's apply path side by side with what a user would pick instead, on the second
 * tier's real kube-apiserver (with kube-controller-manager, kube-scheduler and fake kubelets in a
 * process of their own), the same objects for each: BENCH_PEER_NAMESPACES namespaces (default 500)
 * of ten objects each — a Namespace, two Deployments, two Services, four ConfigMaps, a custom
 * resource — and two CRDs. Each tool gets its own cluster and runs three steps: the first apply, a
 * re-apply with nothing to change (the drift check), and a change of 1% of the objects. Prints
 * objects per second and the CPU seconds of the applying process; asserts nothing.
 *
 * - gitfleet: its sync (reconciler and push-mode syncer), timed from the end of the reconcile to
 *   every object applied; 8 requests in flight.
 * - kubectl apply --server-side: the rendered files, cluster-scoped first; one request at a time.
 * - Flux's server-side apply manager (github.com/fluxcd/pkg/ssa, test/e2e/peers/flux-ssa): staged
 *   as kustomize-controller applies, drift checked by a dry run per object; 8 at once.
 */
const namespaces = Number(process.env.BENCH_PEER_NAMESPACES ?? 500);
const CONCURRENCY = 8;
const here = fileURLToPath(new URL("../../test/e2e", import.meta.url));
const build = (script: string) =>
  (execFileSync("bash", [join(here, script)], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] })
    .trim()
    .split("\n")
    .pop() ?? "") as string;

const binDir = build("cluster/build.sh");
const flux = build("peers/flux-ssa/build.sh");
const dir = mkdtempSync(join(tmpdir(), "gitfleet-bench-peers-"));
const KUBECTL_CLUSTER = "peer-kubectl";
const FLUX_CLUSTER = "peer-flux";
const planes = await startControlPlanes({ binDir, names: [GITFLEET_CLUSTER, KUBECTL_CLUSTER, FLUX_CLUSTER] });
let kubelets: ChildProcess | undefined;
try {
  kubelets = await startKubelets(planes.kubeconfig, [GITFLEET_CLUSTER, KUBECTL_CLUSTER, FLUX_CLUSTER]);
  const size = { namespaces };
  const repo = join(dir, "fleet");
  const before = join(dir, "rendered-before");
  const after = join(dir, "rendered-after");
  const changed = changedConfigMaps(size, 1);
  commitTree(repo, peerFleet(size), "the comparison's objects");
  const gitfleet = await GitfleetPeer.open(repo, planes.kubeconfig);
  const rows: Record<string, StepRun[]> = { gitfleet: [], kubectl: [], flux: [] };
  rows.gitfleet?.push(await gitfleet.step());
  const objects = gitfleet.rendered().filter((o) => o.cluster === GITFLEET_CLUSTER).length;
  writeRendered(gitfleet.rendered(), before);
  rows.gitfleet?.push(await gitfleet.step());
  commitTree(repo, peerFleet(size, changed), `${changed.length} ConfigMaps changed`);
  rows.gitfleet?.push(await gitfleet.step());
  writeRendered(gitfleet.rendered(), after);
  await gitfleet.close();
  for (const step of [before, before, after])
    rows.kubectl?.push(applyWithKubectl(planes.kubeconfig, KUBECTL_CLUSTER, step));
  for (const step of [before, before, after])
    rows.flux?.push(applyWithFlux(flux, planes.kubeconfig, FLUX_CLUSTER, step, CONCURRENCY));
  process.stdout.write(
    `\npeers: ${objects} objects (${namespaces} namespaces of 10, 2 CRDs) on a real kube-apiserver each, ${changed.length} changed in the 1% step\n` +
      `  ${"".padEnd(28)}${["first apply", "no-op re-apply", "1% change"].map((s) => s.padStart(26)).join("")}\n`,
  );
  for (const [tool, runs] of Object.entries(rows))
    process.stdout.write(
      `  ${label(tool).padEnd(28)}${runs.map((r) => cell(objects, r).padStart(26)).join("")}\n`,
    );
  process.stdout.write("  (objects/s, wall seconds, CPU seconds of the applying process)\n");
  for (const [tool, runs] of Object.entries(rows))
    process.stdout.write(`  ${tool} said: ${runs.map((r) => said(r.actions)).join(" | ")}\n`);
} finally {
  kubelets?.kill("SIGTERM");
  await planes.stop();
  rmSync(dir, { recursive: true, force: true });
}

function label(tool: string): string {
  if (tool === "gitfleet") return `gitfleet sync (${CONCURRENCY} in flight)`;
  if (tool === "kubectl") return "kubectl --server-side (1)";
  return `Flux ssa v0.78.0 (${CONCURRENCY} in flight)`;
}

function cell(objects: number, run: StepRun): string {
  return `${(objects / run.seconds).toFixed(0)}/s ${run.seconds.toFixed(1)} s cpu ${run.cpuSeconds.toFixed(1)}`;
}

function said(actions: Readonly<Record<string, number>>): string {
  const entries = Object.entries(actions).sort(([a], [b]) => (a < b ? -1 : 1));
  return entries.length === 0 ? "-" : entries.map(([action, n]) => `${action} ${n}`).join(", ");
}

// The fake kubelets of every cluster, in a process of their own; resolves once their nodes are schedulable.
async function startKubelets(kubeconfig: string, contexts: readonly string[]): Promise<ChildProcess> {
  const child = spawn(process.execPath, [FAKE_KUBELETS, kubeconfig, ...contexts], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  await new Promise<void>((resolve, reject) => {
    child.on("exit", (code) => reject(new Error(`the fake kubelets exited with ${String(code)}`)));
    child.stdout?.on("data", (chunk: Buffer) => {
      if (chunk.toString().includes("ready")) resolve();
    });
  });
  child.removeAllListeners("exit");
  return child;
}
