import { asList, asMap, type JsonMap } from "../../../src/apimachinery/json.js";
import type { MemberClient } from "../../../src/kube/member-client.js";

/**
 * Fake kubelets for a real control plane: registers Nodes with a capacity, keeps their Leases in
 * kube-node-lease fresh (so the node-lifecycle controller lifts the not-ready taint and keeps them
 * Ready), marks pods bound to them Running and Ready (a Job's pods Succeeded), and finishes graceful
 * deletions as a kubelet would — so Deployments reach readyReplicas, rolling updates move on, and
 * the real kube-scheduler reports Unschedulable when capacity runs out.
 */
export interface NodeSimulatorOptions {
  readonly cluster: string;
  readonly client: MemberClient;
  readonly nodes: number;
  /** Per node, e.g. { cpu: "2", memory: "8Gi", pods: "110" }. */
  readonly allocatable: Readonly<Record<string, string>>;
  /** Lease renewal (default 5 s; the lease lasts 40 s). */
  readonly heartbeatMs?: number;
  /** How often pods are looked at (default 200 ms). */
  readonly podPassMs?: number;
  /** Extra labels of the nodes (e.g. gitfleet.io/runtime: process). */
  readonly labels?: Readonly<Record<string, string>>;
  /** False: the nodes' pods are another runtime's to run (test/e2e/cluster/process-runtime.ts). Default true. */
  readonly runsPods?: boolean;
}

const MERGE = "application/merge-patch+json";

export class NodeSimulator {
  private readonly names: string[];
  private readonly ready = new Set<string>();
  private timers: NodeJS.Timeout[] = [];
  private stopped = false;
  private passing = false;

  constructor(private readonly options: NodeSimulatorOptions) {
    this.names = Array.from({ length: options.nodes }, (_, i) => `${options.cluster}-node-${i}`);
  }

  get nodeNames(): readonly string[] {
    return this.names;
  }

  /** Registers the nodes and waits until the scheduler may use them (no taints left). */
  async start(): Promise<void> {
    for (const name of this.names) await this.register(name);
    await this.heartbeat();
    this.timers.push(
      setInterval(() => void this.heartbeat().catch(() => {}), this.options.heartbeatMs ?? 5_000),
    );
    if (this.options.runsPods !== false)
      this.timers.push(setInterval(() => void this.podPass(), this.options.podPassMs ?? 200));
    const deadline = Date.now() + 120_000;
    while (Date.now() < deadline) {
      const nodes = asList(asMap(await this.options.client.raw("GET", "/api/v1/nodes")).items).map((n) =>
        asMap(n),
      );
      const ours = nodes.filter((n) => this.names.includes(String(asMap(n.metadata).name)));
      if (ours.length === this.names.length && ours.every((n) => asList(asMap(n.spec).taints).length === 0))
        return;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    throw new Error(
      `${this.options.cluster}: the nodes kept their not-ready taint (is node-lifecycle-controller running?)`,
    );
  }

  stop(): void {
    this.stopped = true;
    for (const timer of this.timers) clearInterval(timer);
    this.timers = [];
  }

  private async register(name: string): Promise<void> {
    const now = new Date().toISOString().replace(/\.\d+Z$/, "Z");
    const status = {
      capacity: this.options.allocatable,
      allocatable: this.options.allocatable,
      conditions: healthyConditions(now),
      addresses: [
        { type: "InternalIP", address: "127.0.0.1" },
        { type: "Hostname", address: name },
      ],
      nodeInfo: {
        kubeletVersion: "v1.36.3",
        operatingSystem: "linux",
        architecture: "amd64",
        containerRuntimeVersion: "gitfleet-e2e://1",
        kernelVersion: "",
        osImage: "gitfleet e2e node",
        machineID: "",
        systemUUID: "",
        bootID: "",
        kubeProxyVersion: "",
      },
    };
    await this.options.client
      .raw("POST", "/api/v1/nodes", {
        apiVersion: "v1",
        kind: "Node",
        metadata: {
          name,
          labels: {
            "kubernetes.io/hostname": name,
            "kubernetes.io/os": "linux",
            "gitfleet.io/simulated-node": "true",
            ...this.options.labels,
          },
        },
        spec: {},
        status,
      })
      .catch((error: unknown) => {
        if (!/already exists/i.test(String(error))) throw error;
      });
    // A kubelet posts its status after registering; the create may have dropped it.
    await this.options.client.raw("PATCH", `/api/v1/nodes/${name}/status`, { status }, MERGE);
  }

  private async heartbeat(): Promise<void> {
    // Leases carry microseconds (metav1.MicroTime).
    const renewTime = new Date().toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
    for (const name of this.names) {
      await this.reportReady(name);
      const path = `/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/${name}`;
      const lease = await this.options.client.raw("GET", path).catch(() => undefined);
      if (lease) {
        await this.options.client.raw("PATCH", path, { spec: { renewTime } }, MERGE);
        continue;
      }
      const node = asMap(await this.options.client.raw("GET", `/api/v1/nodes/${name}`));
      await this.options.client.raw(
        "POST",
        "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases",
        {
          apiVersion: "coordination.k8s.io/v1",
          kind: "Lease",
          metadata: {
            name,
            namespace: "kube-node-lease",
            ownerReferences: [{ apiVersion: "v1", kind: "Node", name, uid: asMap(node.metadata).uid }],
          },
          spec: { holderIdentity: name, leaseDurationSeconds: 40, renewTime },
        },
      );
    }
  }

  // A kubelet posts its node's status again when what is stored differs from what it sees: after
  // its API server was down longer than the node monitor's grace period, the node controller set
  // Ready to Unknown (and tainted the node); the next status update sets it True again.
  private async reportReady(name: string): Promise<void> {
    const node = asMap(await this.options.client.raw("GET", `/api/v1/nodes/${name}`).catch(() => undefined));
    const ready = asList(asMap(node.status).conditions)
      .map((c) => asMap(c))
      .find((c) => c.type === "Ready");
    if (!node.metadata || ready?.status === "True") return;
    const now = new Date().toISOString().replace(/\.\d+Z$/, "Z");
    await this.options.client.raw(
      "PATCH",
      `/api/v1/nodes/${name}/status`,
      { status: { conditions: healthyConditions(now) } },
      MERGE,
    );
  }

  // One look at every pod bound to these nodes.
  private async podPass(): Promise<void> {
    if (this.passing || this.stopped) return;
    this.passing = true;
    try {
      const pods = asList(asMap(await this.options.client.raw("GET", "/api/v1/pods")).items).map((p) =>
        asMap(p),
      );
      for (const pod of pods) {
        if (this.stopped) return;
        if (!this.names.includes(String(asMap(pod.spec).nodeName ?? ""))) continue;
        await this.handle(pod).catch(() => {});
      }
    } catch {
      // The API server may be down (a failover test stops it): try again on the next pass.
    } finally {
      this.passing = false;
    }
  }

  private async handle(pod: JsonMap): Promise<void> {
    const metadata = asMap(pod.metadata);
    const uid = String(metadata.uid);
    const path = `/api/v1/namespaces/${String(metadata.namespace)}/pods/${String(metadata.name)}`;
    if (metadata.deletionTimestamp) {
      // The kubelet's part of a graceful deletion: the final delete.
      await this.options.client.raw("DELETE", path, {
        apiVersion: "v1",
        kind: "DeleteOptions",
        gracePeriodSeconds: 0,
        preconditions: { uid },
      });
      return;
    }
    const phase = asMap(pod.status).phase;
    if (this.ready.has(uid) || phase === "Running" || phase === "Succeeded" || phase === "Failed") return;
    const now = new Date().toISOString().replace(/\.\d+Z$/, "Z");
    const ofJob = asList(metadata.ownerReferences).some((r) => asMap(r).kind === "Job");
    const containers = asList(asMap(pod.spec).containers).map((c) => asMap(c));
    const ip = podIp(uid);
    const status = ofJob
      ? {
          phase: "Succeeded",
          startTime: now,
          conditions: [
            { type: "PodScheduled", status: "True", lastTransitionTime: now },
            { type: "Initialized", status: "True", lastTransitionTime: now },
            { type: "ContainersReady", status: "False", reason: "PodCompleted", lastTransitionTime: now },
            { type: "Ready", status: "False", reason: "PodCompleted", lastTransitionTime: now },
          ],
          containerStatuses: containers.map((c) => ({
            name: c.name,
            image: c.image,
            imageID: "",
            ready: false,
            started: false,
            restartCount: 0,
            state: { terminated: { exitCode: 0, reason: "Completed", startedAt: now, finishedAt: now } },
          })),
        }
      : {
          phase: "Running",
          startTime: now,
          hostIP: "127.0.0.1",
          hostIPs: [{ ip: "127.0.0.1" }],
          podIP: ip,
          podIPs: [{ ip }],
          conditions: ["PodScheduled", "Initialized", "ContainersReady", "Ready"].map((type) => ({
            type,
            status: "True",
            lastTransitionTime: now,
          })),
          containerStatuses: containers.map((c) => ({
            name: c.name,
            image: c.image,
            imageID: "",
            ready: true,
            started: true,
            restartCount: 0,
            state: { running: { startedAt: now } },
          })),
        };
    await this.options.client.raw("PATCH", `${path}/status`, { status }, MERGE);
    this.ready.add(uid);
  }
}

// An address in a documentation range nothing ever dials (EndpointSlices refuse loopback ones).
function podIp(uid: string): string {
  const hex = uid.replace(/[^0-9a-f]/g, "");
  const octet = (i: number) => Number.parseInt(hex.slice(i, i + 2) || "1", 16);
  return `198.18.${octet(0)}.${(octet(2) % 254) + 1}`;
}

// A healthy node's conditions as its kubelet posts them.
function healthyConditions(now: string): JsonMap[] {
  return [
    ["Ready", "True", "KubeletReady", "kubelet is posting ready status"],
    ["MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"],
    ["DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"],
    ["PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"],
  ].map(([type, status, reason, message]) => ({
    type: type as string,
    status: status as string,
    reason: reason as string,
    message: message as string,
    lastHeartbeatTime: now,
    lastTransitionTime: now,
  }));
}
