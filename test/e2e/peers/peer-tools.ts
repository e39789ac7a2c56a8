import { execFile, execFileSync } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import { KubeConfig } from "@kubernetes/client-node";
import { asMap, type JsonMap } from "../../../src/apimachinery/json.js";
import { Reconciler } from "../../../src/controller/reconciler.js";
import { syncingController } from "../../../src/controller/syncing-controller.js";
import { FleetRepo } from "../../../src/git/fleet-repo.js";
import { addressOf, MemberClient } from "../../../src/kube/member-client.js";
import { createLogger } from "../../../src/log/logger.js";
import type { FileTree } from "../../../src/model/file-tree.js";
import type { RenderedObject } from "../../../src/render/render-result.js";
import { GITFLEET_CLUSTER } from "./peer-fleet.js";

/** One tool's run of one step: how long it took and the CPU time of the process that applied. */
export interface StepRun {
  readonly seconds: number;
  readonly cpuSeconds: number;
  /** What the tool says it did, by action (created, configured, unchanged…), where it says. */
  readonly actions: Readonly<Record<string, number>>;
}

/**
 * kubectl's server-side apply of a directory written by writeRendered: the cluster-scoped objects
 * (Namespaces, CRDs) first, the CRDs waited for until Established, then the namespaced ones — one
 * object at a time, as kubectl applies. CPU time is kubectl's own (the shell's `times`).
 */
export function applyWithKubectl(kubeconfig: string, context: string, dir: string): StepRun {
  const script = `set -e
k() { kubectl --kubeconfig "$1" --context "$2" "\${@:3}"; }
k "$1" "$2" apply --server-side --field-manager=kubectl -R -f "$3/1-cluster" -o name > "$4"
k "$1" "$2" wait --for condition=established --timeout=60s -f "$3/1-cluster/crds" > /dev/null
k "$1" "$2" apply --server-side --field-manager=kubectl -R -f "$3/2-namespaced" -o name >> "$4"
times`;
  const out = join(dir, "..", `${context}.applied.txt`);
  const start = performance.now();
  const times = execFileSync("bash", ["-c", script, "kubectl-apply", kubeconfig, context, dir, out], {
    encoding: "utf8",
    maxBuffer: 2 ** 28,
  });
  const seconds = (performance.now() - start) / 1000;
  // `times` prints the shell's user and system time, then its children's: "0m1.250s 0m0.310s".
  const children = times.trim().split("\n").at(-1) ?? "";
  const cpuSeconds = [...children.matchAll(/(\d+)m([\d.]+)s/g)].reduce(
    (sum, m) => sum + Number(m[1]) * 60 + Number(m[2]),
    0,
  );
  return { seconds, cpuSeconds, actions: {} };
}

/** Flux's server-side apply manager (test/e2e/peers/flux-ssa) over the same directory. */
export function applyWithFlux(
  binary: string,
  kubeconfig: string,
  context: string,
  dir: string,
  concurrency: number,
): StepRun {
  const start = performance.now();
  const printed = execFileSync(binary, fluxArgs(kubeconfig, context, dir, concurrency), {
    encoding: "utf8",
    maxBuffer: 2 ** 24,
  });
  return fluxRun(printed, start);
}

/**
 * The same without blocking this process: for a server this process answers (a simulated member),
 * which a synchronous run would leave unanswered.
 */
export async function applyWithFluxAsync(
  binary: string,
  kubeconfig: string,
  context: string,
  dir: string,
  concurrency: number,
): Promise<StepRun> {
  const start = performance.now();
  const { stdout } = await promisify(execFile)(binary, fluxArgs(kubeconfig, context, dir, concurrency), {
    encoding: "utf8",
    maxBuffer: 2 ** 24,
  });
  return fluxRun(stdout, start);
}

const fluxArgs = (kubeconfig: string, context: string, dir: string, concurrency: number) => [
  "--kubeconfig",
  kubeconfig,
  "--context",
  context,
  "--dir",
  dir,
  "--concurrency",
  String(concurrency),
];

function fluxRun(printed: string, start: number): StepRun {
  const seconds = (performance.now() - start) / 1000;
  const result = JSON.parse(printed) as { actions: Record<string, number>; cpuSeconds: number };
  return { seconds, cpuSeconds: result.cpuSeconds, actions: result.actions };
}

/**
 * Writes gitfleet's rendered objects for its cluster as YAML files, cluster-scoped ones (and CRDs in
 * a folder of their own) apart from namespaced ones, so the peers apply exactly what gitfleet applies.
 */
export function writeRendered(objects: readonly RenderedObject[], dir: string): void {
  rmSync(dir, { recursive: true, force: true });
  for (const object of objects) {
    if (object.cluster !== GITFLEET_CLUSTER) continue;
    const namespaced = typeof asMap(object.object.metadata).namespace === "string";
    const crd = object.object.kind === "CustomResourceDefinition";
    const name = object.path.split("/").slice(2).join("/");
    const path = join(dir, namespaced ? "2-namespaced" : crd ? "1-cluster/crds" : "1-cluster", name);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, object.text);
  }
}

/**
 * gitfleet's controller (reconciler and push-mode syncer, as `gitfleet run` wires them) on a fleet
 * repo in a directory, syncing its one cluster; each step is a reconcile of the repo's tip and the
 * sync it starts, measured from the end of the reconcile (render and status commit) to every object
 * applied — the part that compares with applying rendered files.
 */
export class GitfleetPeer {
  private constructor(
    private readonly reconciler: Reconciler,
    private readonly running: ReturnType<typeof syncingController>,
  ) {}

  /** Requests in flight per member: gitfleet's default, 8. */
  static async open(repo: string, kubeconfig: string): Promise<GitfleetPeer> {
    const logger = createLogger({ level: "silent" });
    const reconciler = new Reconciler({
      repo: await FleetRepo.open({ location: repo }),
      branch: "main",
      statusBranch: "gitfleet/status",
      author: { name: "gitfleet", email: "gitfleet@example.com" },
      controllerId: "peers",
      logger,
    });
    const running = syncingController(reconciler, {
      connections: { kubeconfig, env: {} },
      logger,
      statusIntervalMs: 0,
      resyncIntervalMs: 3_600_000,
      client: { timeoutMs: 60_000 },
      autoscaleIntervalMs: 0,
    });
    return new GitfleetPeer(reconciler, running);
  }

  /** Reconciles the tip (resyncing even when nothing changed) and waits for its sync. */
  async step(): Promise<StepRun & { reconcileSeconds: number }> {
    const { controller, syncer } = this.running;
    controller.resyncSoon();
    const started = performance.now();
    await controller.reconcile();
    const reconciled = performance.now();
    const cpu = process.cpuUsage();
    await syncer.idle();
    const used = process.cpuUsage(cpu);
    const seconds = (performance.now() - reconciled) / 1000;
    await controller.flush();
    const actions: Record<string, number> = {};
    for (const result of syncer.latest().values()) {
      if (!result.reachable)
        throw new Error(`gitfleet did not reach ${result.cluster}: ${result.error ?? ""}`);
      for (const object of result.objects) actions[object.action] = (actions[object.action] ?? 0) + 1;
    }
    return {
      seconds,
      cpuSeconds: (used.user + used.system) / 1e6,
      actions,
      reconcileSeconds: (reconciled - started) / 1000,
    };
  }

  /** The objects the last render made. */
  rendered(): readonly RenderedObject[] {
    return this.reconciler.snapshot().state.render.objects;
  }

  async close(): Promise<void> {
    await this.reconciler.close();
  }
}

/** Writes a fleet tree into a repository directory and commits it on main (the first call creates it). */
export function commitTree(dir: string, tree: FileTree, message: string): void {
  for (const [path, bytes] of tree) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), bytes);
  }
  const git = (...args: string[]) =>
    execFileSync("git", ["-c", "user.name=peers", "-c", "user.email=peers@example.com", ...args], {
      cwd: dir,
      stdio: "ignore",
    });
  try {
    git("rev-parse", "--git-dir");
  } catch {
    git("init", "-q", "-b", "main");
  }
  git("add", "-A");
  git("commit", "-q", "-m", message);
}

/**
 * Each object as a cluster holds it, for a field-by-field comparison: without what the server
 * writes per object (uid, resourceVersion, creation time, managedFields, generation) and status.
 */
export async function liveObjects(
  kubeconfig: string,
  context: string,
  objects: readonly RenderedObject[],
): Promise<Map<string, JsonMap | undefined>> {
  const config = new KubeConfig();
  config.loadFromFile(kubeconfig);
  config.setCurrentContext(context);
  const client = new MemberClient(context, config, { retries: 2, timeoutMs: 30_000 });
  const live = new Map<string, JsonMap | undefined>();
  for (const object of objects) {
    if (object.cluster !== GITFLEET_CLUSTER) continue;
    const found = await client.get(addressOf(object.object));
    live.set(object.identity, found ? comparable(found) : undefined);
  }
  return live;
}

function comparable(object: JsonMap): JsonMap {
  const { status: _, ...rest } = object;
  const {
    uid: _uid,
    resourceVersion: _rv,
    creationTimestamp: _ct,
    managedFields: _mf,
    generation: _g,
    ...metadata
  } = asMap(object.metadata);
  return { ...rest, metadata };
}
