import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { dirname, join } from "node:path";
import { asList, asMap, type JsonMap } from "../../../src/apimachinery/json.js";
import type { MemberClient } from "../../../src/kube/member-client.js";
import { type NetworkPod, type NetworkService, PodNetwork } from "./pod-network.js";

/**
 * A test-only container runtime for a real host cluster: for pods bound to its nodes, it maps the
 * image `registry.k8s.io/<component>:<tag>` (and `etcd:<version>-<n>`) to the binary built for that
 * tag — a tag not built is ErrImagePull — writes the pod's Secret volumes (plain and projected) to a
 * directory of the pod's, gives each PersistentVolumeClaim a directory that outlives the pod, and runs
 * the pod's command and args unchanged (with `$(VAR)` expanded from its env) in a private mount
 * namespace where those directories are bind-mounted at their mount paths — on the host network, or
 * (with `podNetwork`) a pod that is not hostNetwork in a network namespace of its own with its own
 * address (pod-network.ts, which also stands in for cluster DNS and LoadBalancers) — dying with this
 * process; a running pod's Secret files follow their Secrets, as the kubelet's do. It reports readiness from the pod's readiness probe, restarts a container
 * that exits (counting restarts, backing off), and stops the process when the pod is deleted. It
 * also provisions a hostPath PersistentVolume for each pending claim, as a storage provisioner would.
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

/** A Secret volume written for a pod: where, and from which Secrets (or which of their keys). */
interface SecretVolume {
  readonly namespace: string;
  readonly sources: readonly JsonMap[];
  readonly target: string;
}

export class ProcessRuntime {
  private readonly pods = new Map<string, Running>();
  private timers: NodeJS.Timeout[] = [];
  private passing = false;
  private stopped = false;
  private network: PodNetwork | undefined;
  private readonly assigned = new Set<string>();

  constructor(private readonly options: ProcessRuntimeOptions) {}

  start(): void {
    mkdirSync(this.options.dir, { recursive: true });
    if (this.options.podNetwork) this.network = PodNetwork.create(join(this.options.dir, "hosts"));
    this.timers.push(setInterval(() => void this.pass(), 300));
    this.timers.push(setInterval(() => void this.probeAll(), 1000));
    this.timers.push(setInterval(() => void this.refreshSecrets(), 2000));
  }

  // As the kubelet does (within its sync period), a running pod's Secret volumes follow their
  // Secrets: a changed key is rewritten in place — a new file renamed over the old — so a process
  // that reads its certificate files again sees the renewed ones without a restart.
  private async refreshSecrets(): Promise<void> {
    if (this.stopped) return;
    for (const running of this.pods.values()) {
      if (!running.child || running.deleting) continue;
      for (const volume of running.secretVolumes)
        await this.writeSecretFiles(volume.namespace, volume.sources, volume.target, true).catch(() => false);
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
      await this.provisionVolumes();
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
    const members: NetworkPod[] = [];
    for (const [uid, running] of this.pods) {
      const pod = byUid.get(uid);
      if (!pod || !running.network || running.deleting) continue;
      const spec = asMap(pod.spec);
      const ports = asList(asMap(asList(spec.containers)[0]).ports).map((p) => asMap(p));
      members.push({
        namespace: running.namespace,
        ip: running.network.ip,
        ready: running.ready && running.child !== undefined,
        labels: asMap(asMap(pod.metadata).labels) as Record<string, string>,
        hostname: typeof spec.hostname === "string" ? spec.hostname : undefined,
        subdomain: typeof spec.subdomain === "string" ? spec.subdomain : undefined,
        ports: Object.fromEntries(
          ports
            .filter((p) => typeof p.name === "string")
            .map((p) => [String(p.name), Number(p.containerPort)]),
        ),
      });
    }
    const services = asList(asMap(await this.options.client.raw("GET", "/api/v1/services")).items).map(
      (item): NetworkService => {
        const service = asMap(item);
        const spec = asMap(service.spec);
        return {
          namespace: String(asMap(service.metadata).namespace),
          name: String(asMap(service.metadata).name),
          selector: asMap(spec.selector) as Record<string, string>,
          publishNotReady: spec.publishNotReadyAddresses === true,
          loadBalancerIP:
            spec.type === "LoadBalancer" && typeof spec.loadBalancerIP === "string"
              ? spec.loadBalancerIP
              : undefined,
          ports: asList(spec.ports).map((p) => ({
            port: Number(asMap(p).port),
            targetPort: (asMap(p).targetPort ?? asMap(p).port) as string | number,
          })),
        };
      },
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

  // A provisioner: each pending claim gets a hostPath volume bound to it.
  private async provisionVolumes(): Promise<void> {
    const claims = asList(
      asMap(await this.options.client.raw("GET", "/api/v1/persistentvolumeclaims")).items,
    ).map((c) => asMap(c));
    for (const claim of claims) {
      const metadata = asMap(claim.metadata);
      if (asMap(claim.status).phase !== "Pending" || asMap(claim.spec).volumeName) continue;
      // Named by the claim's uid too: a claim deleted and made again under its name gets a new volume.
      const name = `pv-${String(metadata.namespace)}-${String(metadata.name)}`
        .slice(0, 240)
        .concat(`-${String(metadata.uid).slice(0, 8)}`);
      const path = join(this.options.dir, "volumes", name);
      mkdirSync(path, { recursive: true });
      await this.options.client
        .raw("POST", "/api/v1/persistentvolumes", {
          apiVersion: "v1",
          kind: "PersistentVolume",
          metadata: { name },
          spec: {
            capacity: {
              storage: String(asMap(asMap(asMap(claim.spec).resources).requests).storage ?? "1Gi"),
            },
            accessModes: asList(asMap(claim.spec).accessModes),
            persistentVolumeReclaimPolicy: "Retain",
            storageClassName: String(asMap(claim.spec).storageClassName ?? ""),
            hostPath: { path },
            claimRef: { namespace: metadata.namespace, name: metadata.name, uid: metadata.uid },
          },
        })
        .catch(() => undefined);
    }
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
    const container = asMap(asList(asMap(pod.spec).containers)[0]);
    const binary = this.binaryOf(String(container.image ?? ""), asList(container.command)[0]);
    if (!binary) {
      await this.patchStatus(pod, {
        phase: "Pending",
        containerStatuses: [
          {
            name: String(container.name),
            image: String(container.image),
            imageID: "",
            ready: false,
            restartCount: 0,
            state: {
              waiting: { reason: "ErrImagePull", message: `no binary built for ${String(container.image)}` },
            },
          },
        ],
      });
      return;
    }
    const volumes = await this.volumes(pod);
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
      restartPolicy: String(asMap(pod.spec).restartPolicy ?? "Always"),
      secretVolumes,
      ...(own && this.network ? { network: this.network.attach(uid) } : {}),
    };
    this.pods.set(uid, running);
    this.launch(uid, pod, binary, mounts, await this.configMapEnv(pod));
    await this.report(pod, running);
  }

  // The binary an image runs: the one its command names (etcdctl in the etcd image), else the image's own.
  private binaryOf(image: string, command?: unknown): string | undefined {
    const [name = "", tag = ""] = (image.split("/").pop() ?? "").split(":");
    const version = name === "etcd" ? tag.replace(/-\d+$/, "") : tag;
    const named =
      typeof command === "string" ? this.options.binaries.get(`${command}:${version}`) : undefined;
    return named ?? this.options.binaries.get(`${name}:${version}`);
  }

  // The pod's volumes on disk, by mount path, and its Secret volumes; undefined while a Secret is missing.
  private async volumes(
    pod: JsonMap,
  ): Promise<{ mounts: Map<string, string>; secretVolumes: SecretVolume[] } | undefined> {
    const metadata = asMap(pod.metadata);
    const namespace = String(metadata.namespace);
    const root = join(this.options.dir, "pods", String(metadata.uid));
    const byVolume = new Map<string, string>();
    const secretVolumes: SecretVolume[] = [];
    for (const volume of asList(asMap(pod.spec).volumes).map((v) => asMap(v))) {
      const name = String(volume.name);
      if (volume.persistentVolumeClaim) {
        const claim = String(asMap(volume.persistentVolumeClaim).claimName);
        byVolume.set(name, await this.claimPath(namespace, claim));
      } else {
        const target = join(root, name);
        const sources = secretSources(volume);
        if (!(await this.writeSecrets(namespace, sources, target))) return undefined;
        byVolume.set(name, target);
        secretVolumes.push({ namespace, sources, target });
      }
    }
    const container = asMap(asList(asMap(pod.spec).containers)[0]);
    const mounts = new Map<string, string>();
    for (const mount of asList(container.volumeMounts).map((m) => asMap(m))) {
      const source = byVolume.get(String(mount.name));
      if (source) mounts.set(String(mount.mountPath), source);
    }
    return { mounts, secretVolumes };
  }

  // Writes the Secrets' keys (or the listed items) as files under a fresh `target`; false while one is missing.
  private async writeSecrets(
    namespace: string,
    sources: readonly JsonMap[],
    target: string,
  ): Promise<boolean> {
    rmSync(target, { recursive: true, force: true });
    mkdirSync(target, { recursive: true });
    return this.writeSecretFiles(namespace, sources, target, false);
  }

  // The Secrets' files under `target`; `inPlace`: only changed files, each written beside and renamed
  // over the old one (the directory stays the one bound into the pod).
  private async writeSecretFiles(
    namespace: string,
    sources: readonly JsonMap[],
    target: string,
    inPlace: boolean,
  ): Promise<boolean> {
    for (const source of sources) {
      const secret = await this.options.client
        .raw("GET", `/api/v1/namespaces/${namespace}/secrets/${String(source.name)}`)
        .catch(() => undefined);
      const data = asMap(asMap(secret).data);
      const items = asList(source.items).map((i) => asMap(i));
      const files =
        items.length > 0
          ? items.map((i) => [String(i.key), String(i.path)])
          : Object.keys(data).map((k) => [k, k]);
      for (const [key, path] of files) {
        const value = data[key as string];
        if (typeof value !== "string") return false;
        const file = join(target, path as string);
        const content = Buffer.from(value, "base64");
        mkdirSync(dirname(file), { recursive: true });
        if (!inPlace) writeFileSync(file, content, { mode: 0o600 });
        else if (!existsSync(file) || !readFileSync(file).equals(content)) {
          writeFileSync(`${file}.new`, content, { mode: 0o600 });
          renameSync(`${file}.new`, file);
        }
      }
    }
    return true;
  }

  // A claim's directory: its bound hostPath volume's.
  private async claimPath(namespace: string, claim: string): Promise<string> {
    const pvc = asMap(
      await this.options.client.raw("GET", `/api/v1/namespaces/${namespace}/persistentvolumeclaims/${claim}`),
    );
    const volume = String(asMap(pvc.spec).volumeName ?? "");
    const pv = asMap(await this.options.client.raw("GET", `/api/v1/persistentvolumes/${volume}`));
    return String(asMap(asMap(pv.spec).hostPath).path);
  }

  // The container's variables from ConfigMap keys, read when it starts as the kubelet reads them; an
  // optional key that is not there leaves its variable unset.
  private async configMapEnv(pod: JsonMap): Promise<Record<string, string>> {
    const namespace = String(asMap(pod.metadata).namespace);
    const env: Record<string, string> = {};
    for (const entry of asList(asMap(asList(asMap(pod.spec).containers)[0]).env).map((e) => asMap(e))) {
      const ref = asMap(asMap(entry.valueFrom).configMapKeyRef);
      if (typeof ref.name !== "string") continue;
      const configMap = await this.options.client
        .raw("GET", `/api/v1/namespaces/${namespace}/configmaps/${ref.name}`)
        .catch(() => undefined);
      const value = asMap(asMap(configMap).data)[String(ref.key)];
      if (typeof value === "string") env[String(entry.name)] = value;
    }
    return env;
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
    const container = asMap(asList(asMap(pod.spec).containers)[0]);
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
      const container = asMap(asList(asMap(pod.spec).containers)[0]);
      const binary = this.binaryOf(String(container.image ?? ""), asList(container.command)[0]);
      const volumes = await this.volumes(pod);
      if (!binary || !volumes) {
        running.restartAt = Date.now() + 1000;
        continue;
      }
      running.secretVolumes = volumes.secretVolumes;
      this.launch(uid, pod, binary, volumes.mounts, await this.configMapEnv(pod));
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
    const container = asMap(asList(asMap(pod.spec).containers)[0]);
    const at = now();
    if (running.ended) {
      const exitCode = running.lastExit?.code ?? 0;
      await this.patchStatus(pod, {
        phase: running.ended,
        conditions: [{ type: "Ready", status: "False", lastTransitionTime: at }],
        containerStatuses: [
          {
            name: String(container.name),
            image: String(container.image),
            imageID: "",
            ready: false,
            restartCount: running.restarts,
            state: {
              terminated: {
                exitCode,
                reason: exitCode === 0 ? "Completed" : "Error",
                startedAt: running.startedAt,
                finishedAt: running.lastExit?.at ?? at,
              },
            },
          },
        ],
      });
      return;
    }
    const state = running.child
      ? { running: { startedAt: running.startedAt } }
      : {
          waiting: {
            reason: "CrashLoopBackOff",
            message: `back-off restarting failed container ${String(container.name)}`,
          },
        };
    const lastState = running.lastExit
      ? {
          terminated: {
            exitCode: running.lastExit.code ?? 137,
            reason: "Error",
            finishedAt: running.lastExit.at,
          },
        }
      : {};
    const ready = running.ready && running.child !== undefined;
    await this.patchStatus(pod, {
      phase: "Running",
      hostIP: "127.0.0.1",
      podIP: running.network?.ip ?? "127.0.0.1",
      podIPs: [{ ip: running.network?.ip ?? "127.0.0.1" }],
      startTime: running.startedAt,
      conditions: [
        condition(pod, "PodScheduled", "True", at),
        condition(pod, "Initialized", "True", at),
        condition(pod, "ContainersReady", ready ? "True" : "False", at),
        condition(pod, "Ready", ready ? "True" : "False", at),
      ],
      containerStatuses: [
        {
          name: String(container.name),
          image: String(container.image),
          imageID: "",
          ready,
          started: running.child !== undefined,
          restartCount: running.restarts,
          state,
          lastState,
        },
      ],
    });
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

// The Secrets a volume mounts: a projected volume's sources, or a secret volume's one.
function secretSources(volume: JsonMap): JsonMap[] {
  if (volume.projected) return asList(asMap(volume.projected).sources).map((s) => asMap(asMap(s).secret));
  if (volume.secret)
    return [{ name: asMap(volume.secret).secretName ?? null, items: asMap(volume.secret).items ?? null }];
  return [];
}

// A pod condition as the kubelet reports it: its lastTransitionTime moves only when its status does.
function condition(pod: JsonMap, type: string, status: string, at: string): JsonMap {
  const was = asList(asMap(pod.status).conditions)
    .map((c) => asMap(c))
    .find((c) => c.type === type);
  return { type, status, lastTransitionTime: was?.status === status ? (was.lastTransitionTime ?? at) : at };
}

function now(): string {
  return new Date().toISOString().replace(/\.\d+Z$/, "Z");
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

// A readiness probe's GET on the pod's address (127.0.0.1 on the host network); HTTPS without
// verifying, as the kubelet probes.
function httpProbe(host: string, get: JsonMap): Promise<boolean> {
  return new Promise((resolve) => {
    const https = String(get.scheme ?? "HTTP") === "HTTPS";
    const request = (https ? httpsRequest : httpRequest)(
      {
        host,
        port: Number(get.port),
        path: String(get.path ?? "/"),
        method: "GET",
        timeout: 2000,
        ...(https ? { rejectUnauthorized: false } : {}),
      },
      (response) => {
        response.resume();
        resolve((response.statusCode ?? 500) >= 200 && (response.statusCode ?? 500) < 400);
      },
    );
    request.on("error", () => resolve(false));
    request.on("timeout", () => {
      request.destroy();
      resolve(false);
    });
    request.end();
  });
}
