import { execFileSync } from "node:child_process";
import { existsSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { KubeConfig } from "@kubernetes/client-node";
import { asMap } from "../../../src/apimachinery/json.js";
import { MemberClient } from "../../../src/kube/member-client.js";
import { statusFile } from "../../helpers/sync-fleet.js";
import { type ControlPlanes, startControlPlanes } from "./control-plane.js";
import { NodeSimulator } from "./node-simulator.js";
import { ProcessRuntime } from "./process-runtime.js";

/**
 * The second tier's meta cluster, shared by the hosted-clusters scenarios and the real-binary bench:
 * the two releases built (the tier's and the one before it), a real host whose one node
 * (`gitfleet.io/runtime: process`) runs pods as processes of those binaries, and the small helpers
 * both need — free host ports and a client of a hosted cluster from the admin kubeconfig gitfleet
 * wrote into the host.
 */
export interface Releases {
  readonly binDir: string;
  readonly previousDir: string;
  /** The tier's Kubernetes release ("v1.36.3") and the one before it. */
  readonly version: string;
  readonly previous: string;
  /** etcd's release ("3.6.16"); its image tag is `${etcd}-0`. */
  readonly etcd: string;
  /** The etcd release upgrades start from ("3.5.36", the minor before), and where its binaries are. */
  readonly etcdPrevious: string;
  readonly etcdPreviousDir: string;
}

// Beside this module, or — compiled into dist/ for the bench — beside its source.
const HERE = fileURLToPath(new URL("./build.sh", import.meta.url));
const BUILD = existsSync(HERE) ? HERE : HERE.replace(`${sep}dist${sep}test${sep}`, `${sep}test${sep}`);

/** Builds (or takes from ~/.cache/gitfleet-e2e) both releases and reads their versions. */
export function buildReleases(): Releases {
  const build = (env: Record<string, string>) =>
    execFileSync("bash", [BUILD], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "inherit"],
      env: { ...process.env, ...env },
    })
      .trim()
      .split("\n")
      .pop() as string;
  const versionOf = (dir: string) =>
    execFileSync(join(dir, "kube-apiserver"), ["--version"], { encoding: "utf8" })
      .trim()
      .split(" ")
      .pop() as string;
  const etcdOf = (dir: string) =>
    /etcd Version: (\S+)/.exec(
      execFileSync(join(dir, "etcd"), ["--version"], { encoding: "utf8" }),
    )?.[1] as string;
  const binDir = build({ K8S_DIR: "k8s" });
  const previousDir = build({ K8S_DIR: "k8s-previous" });
  const etcdPreviousDir = build({ ETCD_DIR: "etcd-previous", ETCD_ONLY: "1" });
  return {
    binDir,
    previousDir,
    version: versionOf(binDir),
    previous: versionOf(previousDir),
    etcd: etcdOf(binDir),
    etcdPrevious: etcdOf(etcdPreviousDir),
    etcdPreviousDir,
  };
}

export interface Host {
  readonly planes: ControlPlanes;
  readonly client: MemberClient;
  readonly nodes: NodeSimulator;
  readonly runtime: ProcessRuntime;
  stop(): Promise<void>;
}

/**
 * A real host (meta-1 unless `name` says), whose node runs the control-plane images of both releases
 * as processes; with `podNetwork`, pods off the host network get addresses of their own
 * (cluster/pod-network.ts). A second host in the same run needs a `runDir` of its own.
 */
export async function startHost(
  releases: Releases,
  options: { readonly runDir?: string; readonly podNetwork?: boolean; readonly name?: string } = {},
): Promise<Host> {
  const { runDir, podNetwork = false, name = "meta-1" } = options;
  const { binDir, previousDir, version, previous, etcd } = releases;
  const planes = await startControlPlanes({ binDir, names: [name], ...(runDir ? { runDir } : {}) });
  const config = new KubeConfig();
  config.loadFromFile(planes.kubeconfig);
  config.setCurrentContext(name);
  const client = new MemberClient(name, config, { timeoutMs: 10_000 });
  const nodes = new NodeSimulator({
    cluster: name,
    client,
    nodes: 1,
    allocatable: { cpu: "32", memory: "64Gi", pods: "110" },
    labels: { "gitfleet.io/runtime": "process" },
    runsPods: false,
  });
  await nodes.start();
  const components = ["kube-apiserver", "kube-controller-manager", "kube-scheduler"];
  const runtime = new ProcessRuntime({
    client,
    nodes: nodes.nodeNames,
    binaries: new Map([
      ...components.flatMap((c): [string, string][] => [
        [`${c}:${version}`, join(binDir, c)],
        [`${c}:${previous}`, join(previousDir, c)],
      ]),
      ...["etcd", "etcdctl", "etcdutl"].flatMap((b): [string, string][] => [
        [`${b}:${etcd}`, join(binDir, b)],
        [`${b}:${releases.etcdPrevious}`, join(releases.etcdPreviousDir, b)],
      ]),
      [`gitfleet:${GITFLEET_TAG}`, gitfleetCommand(planes.runDir)],
    ]),
    dir: join(planes.runDir, "process-runtime"),
    podNetwork,
  });
  runtime.start();
  return {
    planes,
    client,
    nodes,
    runtime,
    stop: async () => {
      runtime.stop();
      nodes.stop();
      await planes.stop();
    },
  };
}

/** The tag of gitfleet's own image in the second tier: `gitfleet:e2e` runs this checkout's built CLI. */
export const GITFLEET_TAG = "e2e";

// The `gitfleet` the image puts on the PATH: this checkout's bin/gitfleet.js (npm run build made
// dist/) on the Node.js that runs the tests.
function gitfleetCommand(dir: string): string {
  const path = join(dir, "gitfleet");
  const bin = fileURLToPath(new URL("../../../bin/gitfleet.js", import.meta.url));
  writeFileSync(path, `#!/bin/sh\nexec '${process.execPath}' '${bin}' "$@"\n`, { mode: 0o755 });
  return path;
}

/** A base port whose next six are free (the API server's, etcd's three, the components' two), clear of `taken`. */
export async function freeRange(taken: ReadonlySet<number> = new Set()): Promise<number> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const base = 20000 + Math.floor(Math.random() * 900) * 10;
    if ([...taken].some((t) => Math.abs(t - base) < 10)) continue;
    const free = await Promise.all(
      Array.from({ length: 6 }, (_, i) => base + i).map(
        (port) =>
          new Promise<boolean>((resolve) => {
            const server = createServer();
            server.once("error", () => resolve(false));
            server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
          }),
      ),
    );
    if (free.every(Boolean)) return base;
  }
  throw new Error("no free port range");
}

/** A client of a hosted cluster with the admin kubeconfig gitfleet wrote into its host, once it is there. */
export async function hostedClient(host: MemberClient, cluster: string): Promise<MemberClient | undefined> {
  const secret = await host
    .get({ apiVersion: "v1", kind: "Secret", namespace: `gitfleet-cp-${cluster}`, name: "admin-kubeconfig" })
    .catch(() => undefined);
  const data = asMap(secret?.data).kubeconfig;
  if (typeof data !== "string") return undefined;
  const config = new KubeConfig();
  config.loadFromString(Buffer.from(data, "base64").toString("utf8"));
  return new MemberClient(cluster, config, { timeoutMs: 3000, retries: 0 });
}

/**
 * Controller rounds (`until`) until the EtcdRestore `restore` ends (Succeeded or Failed) on the status
 * branch of the fleet repo at `dir`; the phases it went through, in order. A timeout says where it stood.
 */
export async function restorePhases(
  dir: string,
  restore: string,
  until: (what: string, done: () => Promise<boolean>, timeoutMs?: number) => Promise<void>,
): Promise<string[]> {
  const path = `status/restores/${restore}.yaml`;
  const phases: string[] = [];
  await until(
    `the restore ${restore} ended`,
    async () => {
      const phase = String(statusFile(dir, path).phase ?? "");
      if (phase && phases.at(-1) !== phase) {
        phases.push(phase);
        console.log(`e2e restore ${restore}: ${phase} at ${new Date().toISOString()}`);
      }
      return phase === "Succeeded" || phase === "Failed";
    },
    300_000,
  ).catch((error: unknown) => {
    throw new Error(`${String(error)}; status: ${JSON.stringify(statusFile(dir, path))}`);
  });
  return phases;
}
