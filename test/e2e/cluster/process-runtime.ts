import { type ChildProcess, spawn } from "node:child_process";
import { mkdirSync, openSync, writeFileSync } from "node:fs";
import { networkInterfaces } from "node:os";
import { join } from "node:path";
import { asList, asMap, type JsonMap } from "../../../src/apimachinery/json.js";
import type { MemberClient } from "../../../src/kube/member-client.js";
import { type NetworkService, networkPodOf, networkServiceOf, PodNetwork } from "./pod-network.js";
import { imagePullStatus, now, podStatus } from "./pod-status.js";
import { containerAt, PodVolumes, type SecretVolume, stepsOf } from "./pod-volumes.js";
import { httpProbe } from "./readiness-probe.js";

/** This machine's first address that is not loopback (127.0.0.1 when it has none). */
const NODE_ADDRESS =
  Object.values(networkInterfaces())
    .flat()
    .find((a) => a !== undefined && a.family === "IPv4" && !a.internal)?.address ?? "127.0.0.1";

/**
 * A test-only container runtime for a real host cluster: for pods bound to its nodes, it maps the
 * image `registry.k8s.io/<component>:<tag>` (and `etcd:<version>-<n>`) to the binary built for that
 * tag — a tag not built is ErrImagePull — and runs the pod's command and args unchanged (with `$(VAR)`
 * expanded from its env) in a private mount namespace where its volumes are bind-mounted at their
 * mount paths, dying with this process. Pods run on the host network, or (with `podNetwork`) a pod
 * that is not hostNetwork in a network namespace of its own with its own address (pod-network.ts,
 * which also stands in for cluster DNS and LoadBalancers). It restarts a container that exits
 * (counting restarts, backing off) and stops the process when the pod is deleted.
 *
 * - pod-volumes.ts: Secret volumes (plain and projected) written for the pod and kept up to date with
 *   their Secrets, a hostPath PersistentVolume for each pending claim, env from ConfigMap keys;
 * - pod-status.ts: the status the kubelet would report; readiness-probe.ts: the readiness probe.
 *
 * Only the container runtime is simulated: the host's API server, controllers and scheduler are real,
 * and so are the processes. Security contexts (user, read-only root) are not enforced: it runs as root.
 */
export interface ProcessRuntimeOptions {
  readonly client: MemberClient;
  /** The nodes whose pods it runs. */
  readonly nodes: readonly string[];
  /** Binaries by image: "kube-apiserver:v1.36.3" → its path; "etcd:3.6.16" → its path. */
  readonly binaries: ReadonlyMap<string, string>;
  readonly dir: string;
  /** Pods that are not hostNetwork get network namespaces and addresses of their own (pod-network.ts). */
  readonly podNetwork?: boolean;
}

interface Running {
  readonly pod: string;
  readonly namespace: string;
  child: ChildProcess | undefined;
  restarts: number;
  ready: boolean;
  deleting: boolean;
  startedAt: string;
  lastExit?: { code: number | null; at: string };
  restartAt?: number | undefined;
  failed?: string;
  /** Which of its containers runs: its init containers first, each to completion, then its container. */
  step: number;
  readonly steps: number;
  /** The pod's restartPolicy: a Job's pod that exits 0 (or fails under Never) ends. */
  restartPolicy: string;
  /** Its Secret volumes on disk, kept up to date with their Secrets as the kubelet keeps them. */
  secretVolumes: SecretVolume[];
  /** The phase a pod whose container ended for good is in. */
  ended?: "Succeeded" | "Failed";
  /** Its network namespace and address, when it has its own (not hostNetwork, with podNetwork). */
  readonly network?: { readonly netns: string; readonly ip: string };
}

const MERGE = "application/merge-patch+json";

export class ProcessRuntime {
  private readonly pods = new Map<string, Running>();
  private timers: NodeJS.Timeout[] = [];
  private passing = false;
  private stopped = false;
  private network: PodNetwork | undefined;
  private readonly assigned = new Set<string>();
  private readonly disk: PodVolumes;

  constructor(private readonly options: ProcessRuntimeOptions) {
    this.disk = new PodVolumes(options.client, options.dir);
  }

  start(): void {
    mkdirSync(this.options.dir, { recursive: true });
    if (this.options.podNetwork) this.network = PodNetwork.create(join(this.options.dir, "hosts"));
    this.timers.push(setInterval(() => void this.pass(), 300));
    this.timers.push(setInterval(() => void this.probeAll(), 1000));
    this.timers.push(setInterval(() => void this.refreshSecrets(), 2000));
  }

  // A running pod's Secret volumes follow their Secrets, as the kubelet's do.
  private async refreshSecrets(): Promise<void> {
    if (this.stopped) return;
    for (const running of this.pods.values()) {
      if (!running.child || running.deleting) continue;
      for (const volume of running.secretVolumes) await this.disk.refresh(volume).catch(() => undefined);
    }
  }

  /** The process of a running pod (for killing it in a test). */
  processOf(namespace: string, pod: string): ChildProcess | undefined {
    return [...this.pods.values()].find((p) => p.namespace === namespace && p.pod === pod)?.child;
  }

  /** The pod network, when it runs one: its LoadBalancer addresses are for the fleet repo to name. */
  get podNetwork(): PodNetwork | undefined {
    return this.network;
  }

  /** A running pod's own address (undefined on the host network). */
  addressOf(namespace: string, pod: string): string | undefined {
    return [...this.pods.values()].find((p) => p.namespace === namespace && p.pod === pod)?.network?.ip;
  }

  /** Every process it started that still runs. */
  pids(): number[] {
    return [...this.pods.values()].flatMap((p) =>
      p.child?.pid && p.child.exitCode === null ? [p.child.pid] : [],
    );
  }

  stop(): void {
    this.stopped = true;
    for (const timer of this.timers) clearInterval(timer);
    for (const running of this.pods.values()) running.child?.kill("SIGKILL");
    this.network?.close();
  }

  private async pass(): Promise<void> {
    if (this.passing || this.stopped) return;
    this.passing = true;
    try {
      await this.disk.provision();
      const pods = asList(asMap(await this.options.client.raw("GET", "/api/v1/pods")).items).map((p) =>
        asMap(p),
      );
      for (const pod of pods)
        if (this.options.nodes.includes(String(asMap(pod.spec).nodeName ?? "")))
          await this.handle(pod).catch((error: unknown) => this.note(pod, error));
      await this.restartDue();
      if (this.network) await this.updateNetwork(pods);
    } catch {
      // The host's API server may be restarting: look again on the next pass.
    } finally {
      this.passing = false;
    }
  }

  // The pod network's names and LoadBalancers, from the pods it runs and the host's Services.
  private async updateNetwork(pods: readonly JsonMap[]): Promise<void> {
    const network = this.network;
    if (!network) return;
    const byUid = new Map(pods.map((p) => [String(asMap(p.metadata).uid), p]));
    const members = [...this.pods].flatMap(([uid, running]) => {
      const pod = byUid.get(uid);
      if (!pod || !running.network || running.deleting) return [];
      return [
        networkPodOf(pod, { ip: running.network.ip, ready: running.ready && running.child !== undefined }),
      ];
    });
    const services = asList(asMap(await this.options.client.raw("GET", "/api/v1/services")).items).map(
      networkServiceOf,
    );
    network.update(members, services);
    await this.assignLoadBalancers(services);
  }

  // A LoadBalancer Service the pod network serves gets its address in its status, as MetalLB gives it.
  private async assignLoadBalancers(services: readonly NetworkService[]): Promise<void> {
    for (const service of services) {
      if (!service.loadBalancerIP || this.assigned.has(`${service.namespace}/${service.name}`)) continue;
      await this.options.client.raw(
        "PATCH",
        `/api/v1/namespaces/${service.namespace}/services/${service.name}/status`,
        { status: { loadBalancer: { ingress: [{ ip: service.loadBalancerIP }] } } },
        MERGE,
      );
      this.assigned.add(`${service.namespace}/${service.name}`);
    }
  }

  private note(pod: JsonMap, error: unknown): void {
    const file = join(this.options.dir, "runtime.log");
    writeFileSync(
      file,
      `${new Date().toISOString()} ${String(asMap(pod.metadata).name)}: ${String(error)}\n`,
      { flag: "a" },
    );
  }

  private async handle(pod: JsonMap): Promise<void> {
    const metadata = asMap(pod.metadata);
    const uid = String(metadata.uid);
    const known = this.pods.get(uid);
    if (metadata.deletionTimestamp) {
      await this.remove(pod, known);
      return;
    }
    if (known) return;
    const phase = asMap(pod.status).phase;
    if (phase === "Succeeded" || phase === "Failed") return;
    // Every container's image must be there before the first starts (the kubelet pulls them all).
    const steps = stepsOf(pod);
    const binaries = Array.from({ length: steps }, (_, step) => this.binaryAt(pod, step));
    const binary = binaries[0];
    if (!binary || binaries.includes(undefined)) {
      await this.patchStatus(pod, imagePullStatus(pod));
      return;
    }
    const volumes = await this.disk.mountsOf(pod);
    if (!volumes) return; // a Secret it mounts is not there yet: the kubelet waits, so do we
    const { mounts, secretVolumes } = volumes;
    const own = this.network !== undefined && asMap(pod.spec).hostNetwork !== true;
    const running: Running = {
      pod: String(metadata.name),
      namespace: String(metadata.namespace),
      child: undefined,
      restarts: 0,
      ready: false,
      deleting: false,
      startedAt: now(),
      step: 0,
      steps,
      restartPolicy: String(asMap(pod.spec).restartPolicy ?? "Always"),
      secretVolumes,
      ...(own && this.network ? { network: this.network.attach(uid) } : {}),
    };
    this.pods.set(uid, running);
    this.launch(uid, pod, binary, mounts, await this.disk.configMapEnv(pod));
    await this.report(pod, running);
  }

  // The binary of a pod's container at `step`.
  private binaryAt(pod: JsonMap, step: number): string | undefined {
    const container = containerAt(pod, step);
    return this.binaryOf(String(container.image ?? ""), asList(container.command)[0]);
  }

  // The binary an image runs: the one its command names (etcdctl in the etcd image), else the image's own.
  private binaryOf(image: string, command?: unknown): string | undefined {
    const [name = "", tag = ""] = (image.split("/").pop() ?? "").split(":");
    const version = name === "etcd" ? tag.replace(/-\d+$/, "") : tag;
    const named =
      typeof command === "string" ? this.options.binaries.get(`${command}:${version}`) : undefined;
    return named ?? this.options.binaries.get(`${name}:${version}`);
  }

  private launch(
    uid: string,
    pod: JsonMap,
    binary: string,
    mounts: ReadonlyMap<string, string>,
    configEnv: Readonly<Record<string, string>>,
  ): void {
    const running = this.pods.get(uid);
    if (!running || this.stopped) return;
    const container = containerAt(pod, running.step);
    const env = { ...envOf(pod, container, running.network?.ip ?? "127.0.0.1"), ...configEnv };
    const expand = (text: string) =>
      text.replace(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (all, name: string) => env[name] ?? all);
    const args = [...asList(container.command).slice(1), ...asList(container.args)].map((a) =>
      expand(String(a)),
    );
    // In a private mount namespace: a tmpfs under each mount's parent would hide the host's files, so
    // each mount path is made (if missing) and the pod's directory bound onto it.
    const hosts = this.network ? [`mount --bind '${this.network.hostsFile}' /etc/hosts`] : [];
    const script = [
      "set -e",
      ...hosts,
      ...[...mounts].map(([path, source]) => `mkdir -p '${path}' && mount --bind '${source}' '${path}'`),
      'exec setpriv --pdeathsig KILL -- "$@"',
    ].join("\n");
    const log = openSync(join(this.options.dir, `${running.namespace}.${running.pod}.log`), "a");
    const unshare = [
      "unshare",
      "--mount",
      "--propagation",
      "private",
      "--",
      "sh",
      "-c",
      script,
      "sh",
      binary,
    ];
    // In the pod's network namespace when it has one (`ip netns exec` execs, so the pid stays the pod's).
    const command = running.network ? ["ip", "netns", "exec", running.network.netns, ...unshare] : unshare;
    const child = spawn(command[0] as string, [...command.slice(1), ...args], {
      stdio: ["ignore", log, log],
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", GOMEMLIMIT: "400MiB", ...env },
    });
    running.child = child;
    running.startedAt = now();
    running.ready = false;
    child.on("exit", (code) => {
      if (running.child !== child) return;
      running.lastExit = { code, at: now() };
      if (running.deleting || this.stopped) return;
      // An init container that completed: the next container starts (at once, not as a restart).
      if (code === 0 && running.step < running.steps - 1) {
        running.step++;
        running.child = undefined;
        running.restartAt = Date.now();
        return;
      }
      // A Job's pod ends: exit 0 under OnFailure or Never, any exit under Never.
      if (running.restartPolicy !== "Always" && (code === 0 || running.restartPolicy === "Never")) {
        running.ended = code === 0 ? "Succeeded" : "Failed";
        running.child = undefined;
        void this.reportBy(uid);
        return;
      }
      running.restarts++;
      // Back off as the kubelet does (10 s doubling, here 1 s doubling up to 8 s).
      running.restartAt = Date.now() + Math.min(8000, 1000 * 2 ** Math.min(running.restarts - 1, 3));
      running.child = undefined;
      void this.reportBy(uid);
    });
  }

  private async restartDue(): Promise<void> {
    for (const [uid, running] of this.pods) {
      if (
        running.child ||
        running.deleting ||
        running.restartAt === undefined ||
        running.restartAt > Date.now()
      )
        continue;
      running.restartAt = undefined;
      const pod = asMap(
        await this.options.client
          .raw("GET", `/api/v1/namespaces/${running.namespace}/pods/${running.pod}`)
          .catch(() => undefined),
      );
      if (asMap(pod.metadata).uid !== uid) continue;
      const binary = this.binaryAt(pod, running.step);
      const volumes = await this.disk.mountsOf(pod, running.step);
      if (!binary || !volumes) {
        running.restartAt = Date.now() + 1000;
        continue;
      }
      running.secretVolumes = volumes.secretVolumes;
      this.launch(uid, pod, binary, volumes.mounts, await this.disk.configMapEnv(pod, running.step));
      await this.report(pod, running);
    }
  }

  private async remove(pod: JsonMap, running: Running | undefined): Promise<void> {
    const metadata = asMap(pod.metadata);
    if (running && !running.deleting) {
      running.deleting = true;
      const child = running.child;
      if (child && child.exitCode === null) {
        child.kill("SIGTERM");
        await new Promise((resolve) => {
          const timer = setTimeout(() => {
            child.kill("SIGKILL");
            resolve(undefined);
          }, 5000);
          child.once("exit", () => {
            clearTimeout(timer);
            resolve(undefined);
          });
        });
      }
    }
    await this.options.client.raw(
      "DELETE",
      `/api/v1/namespaces/${String(metadata.namespace)}/pods/${String(metadata.name)}`,
      {
        apiVersion: "v1",
        kind: "DeleteOptions",
        gracePeriodSeconds: 0,
        preconditions: { uid: metadata.uid },
      },
    );
    this.pods.delete(String(metadata.uid));
    this.network?.detach(String(metadata.uid));
  }

  private async probeAll(): Promise<void> {
    for (const [uid, running] of this.pods) {
      if (!running.child || running.deleting) continue;
      const pod = asMap(
        await this.options.client
          .raw("GET", `/api/v1/namespaces/${running.namespace}/pods/${running.pod}`)
          .catch(() => undefined),
      );
      if (asMap(pod.metadata).uid !== uid) continue;
      const probe = asMap(asMap(asList(asMap(pod.spec).containers)[0]).readinessProbe);
      const ready = probe.httpGet
        ? await httpProbe(running.network?.ip ?? "127.0.0.1", asMap(probe.httpGet))
        : true;
      if (ready !== running.ready) {
        running.ready = ready;
        await this.report(pod, running).catch(() => {});
      }
    }
  }

  private async reportBy(uid: string): Promise<void> {
    const running = this.pods.get(uid);
    if (!running) return;
    const pod = asMap(
      await this.options.client
        .raw("GET", `/api/v1/namespaces/${running.namespace}/pods/${running.pod}`)
        .catch(() => undefined),
    );
    if (asMap(pod.metadata).uid === uid) await this.report(pod, running).catch(() => {});
  }

  private async report(pod: JsonMap, running: Running): Promise<void> {
    const state = {
      ...{ running: running.child !== undefined, ready: running.ready, restarts: running.restarts },
      ...{ startedAt: running.startedAt, lastExit: running.lastExit, ended: running.ended },
      // A pod on the host network reports the node's address, as a kubelet does: one the host API
      // server's pod proxy takes (it refuses loopback), where the pod's 0.0.0.0 listeners answer.
      ip: running.network?.ip ?? NODE_ADDRESS,
    };
    await this.patchStatus(pod, podStatus(pod, state, now()));
  }

  private async patchStatus(pod: JsonMap, status: JsonMap): Promise<void> {
    const metadata = asMap(pod.metadata);
    await this.options.client.raw(
      "PATCH",
      `/api/v1/namespaces/${String(metadata.namespace)}/pods/${String(metadata.name)}/status`,
      { status },
      MERGE,
    );
  }
}

// The container's environment: values, and the pod's name, namespace and address from the downward API.
function envOf(pod: JsonMap, container: JsonMap, podIP: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const entry of asList(container.env).map((e) => asMap(e))) {
    const field = String(asMap(asMap(entry.valueFrom).fieldRef).fieldPath ?? "");
    if (typeof entry.value === "string") env[String(entry.name)] = entry.value;
    else if (field === "metadata.name") env[String(entry.name)] = String(asMap(pod.metadata).name);
    else if (field === "metadata.namespace") env[String(entry.name)] = String(asMap(pod.metadata).namespace);
    else if (field === "status.podIP") env[String(entry.name)] = podIP;
  }
  return env;
}
