import { asList, asMap, type Json, type JsonMap } from "../apimachinery/json.js";
import { versionBody } from "./discovery.js";
import { HpaController } from "./hpa-controller.js";
import type { MemberApi } from "./member-api.js";
import { faultsOf, type PodFault } from "./pod-faults.js";
import { updateDeploymentStatus } from "./world/deployment-status.js";
import { syncEndpoints } from "./world/endpoints.js";
import { EventRecorder } from "./world/events.js";
import { collectGarbage } from "./world/garbage-collector.js";
import { runKubelet } from "./world/kubelet.js";
import { assignLoadBalancers } from "./world/load-balancer.js";
import { isReady } from "./world/objects.js";
import { probePeriod, probePods } from "./world/prober.js";
import { syncResourceQuotas } from "./world/resource-quotas.js";
import { schedulePods } from "./world/scheduler.js";
import { bindClaims } from "./world/volume-binder.js";
import { writePodStatus } from "./world/workload-status.js";
import {
  syncCustom,
  syncDeployment,
  syncJob,
  syncReplicaSet,
  syncStatefulSet,
  updateJobStatus,
} from "./world/workloads.js";
import type { NodePool, ServedWorkload, WorldContext, WorldOptions } from "./world/world-context.js";
import { PASS_MS } from "./world/world-context.js";

// A resource's key in `changed`: its group and plural name.
function resourceKey(group: string, plural: string): string {
  return `${group}/${plural}`;
}

// The resource a collection path lists: /api/v1[/namespaces/x]/pods, /apis/apps/v1[/namespaces/x]/deployments.
function resourceOfListPath(path: string): string {
  const segments = path.split("?")[0]?.split("/").filter(Boolean) ?? [];
  return resourceKey(segments[0] === "apis" ? (segments[1] ?? "") : "", segments.at(-1) ?? "");
}

interface CachedList {
  readonly version: string;
  readonly items: JsonMap[];
  byOwner?: Map<string, JsonMap[]>;
}

export type { CustomWorkload, NodePool, WorldOptions } from "./world/world-context.js";

export const DEFAULT_NODE_POOLS: readonly NodePool[] = [
  { count: 3, allocatable: { cpu: "4", memory: "16Gi", pods: "110" } },
];

const CONTROLLER = {
  userAgent: "kube-controller-manager/v1.32.0",
  contentType: "application/merge-patch+json",
};

/**
 * The small world inside a simulated member: nodes with allocatable resources, a Deployment
 * controller that keeps one ReplicaSet per pod template, a ReplicaSet controller that creates and
 * deletes pods, a scheduler that binds pods to nodes by requests, node selectors and taints (and
 * marks those that fit nowhere `PodScheduled=False, Unschedulable`), a kubelet that makes bound pods
 * Running and Ready after a delay, and workload status computed as the real controllers compute it.
 * Everything goes through the member's API, so watchers see every change. Each controller is a module
 * of sim/world/; this class holds their shared state and runs them in one narrated pass.
 */
export class World implements WorldContext {
  private pending = false;
  /** The namespaces changed since the last pass began, or all of them. */
  private dirty: Set<string> | "all" = "all";
  readonly ready = new Set<string>();
  readonly timers = new Set<NodeJS.Timeout>();
  stopped = false;
  private stopWatch: (() => void) | undefined;
  private readonly lists = new Map<string, CachedList>();
  /** Per resource (group/plural), the resourceVersion of its latest change. */
  private readonly changed = new Map<string, number>();
  /** Images no node can pull (setUnpullableImages). */
  unpullable = new Set<string>();
  /** Per Deployment uid: the pass that checks its progress deadline. */
  readonly deadlines = new Map<string, { at: number; timer: NodeJS.Timeout }>();
  private readonly autoscalers: HpaController | undefined;
  readonly events: EventRecorder;
  podFaults: readonly PodFault[] = [];
  private readonly nodeIndex = new Map<string, number>();
  private readonly podIps = new Map<string, number>();
  private readonly podsSeen = new Map<string, JsonMap>();
  private intervals: NodeJS.Timeout[] = [];

  constructor(
    readonly api: MemberApi,
    readonly options: WorldOptions = {},
  ) {
    this.autoscalers = options.hpaPeriodMs ? new HpaController(api, options.hpaPeriodMs) : undefined;
    this.events = new EventRecorder(api, options.eventTtlMs);
  }

  start(): void {
    // Every change marks its resource (so only that resource's cached lists are read again) and asks
    // for a pass. Subscribed before the nodes are made, so no change goes unmarked.
    const subscription = this.api.store.watch(Number(this.api.store.currentVersion()), (event) => {
      this.changed.set(resourceKey(event.resource.group, event.resource.name), event.version);
      // No controller reads Events: recording one never asks for a pass.
      if (event.resource.group === "" && event.resource.name === "events") return;
      const namespace = asMap(event.object.metadata).namespace;
      this.schedule(event.resource.namespaced && typeof namespace === "string" ? namespace : undefined);
    });
    this.stopWatch = subscription?.stop;
    let index = 0;
    for (const pool of this.options.nodePools ?? DEFAULT_NODE_POOLS)
      for (let i = 0; i < pool.count; i++) this.createNode(`${this.api.clusterName}-node-${index++}`, pool);
    this.schedule();
    this.autoscalers?.start();
    const ttl = this.options.eventTtlMs ?? 3_600_000;
    this.intervals = [
      setInterval(() => probePeriod(this), this.options.probePeriodMs ?? 2000),
      setInterval(() => this.events.collect(), Math.max(1000, Math.min(60_000, ttl / 4))),
    ];
  }

  /** Failing readiness probes and crash loops in matching pods (an empty list clears them). */
  setPodFaults(faults: readonly PodFault[]): void {
    this.podFaults = [...faults];
    this.schedule();
  }

  unreadyContainers(pod: JsonMap): string[] {
    const faults = faultsOf(pod, this.podFaults);
    const containers = asList(asMap(pod.spec).containers).map(asMap);
    if (faults.crashLoop) return containers.map((c) => String(c.name));
    if (!faults.failReadiness) return [];
    return containers.filter((c) => c.readinessProbe !== undefined).map((c) => String(c.name));
  }

  nextPodIp(node: string): string {
    const next = (this.podIps.get(node) ?? 1) + 1;
    this.podIps.set(node, next);
    return `10.244.${this.nodeIndex.get(node) ?? 0}.${next}`;
  }

  nodeIp(node: string): string {
    return `172.18.0.${(this.nodeIndex.get(node) ?? 0) + 2}`;
  }

  /**
   * Loses `count` nodes: they turn NotReady with the unreachable NoExecute taint, as the node
   * controller marks them, and their pods are evicted, so controllers create them again elsewhere —
   * or leave them Pending when nothing else fits.
   */
  loseNodes(count: number): string[] {
    const ready = this.list("/api/v1/nodes").filter((node) => isReady(node));
    const lost = ready.slice(Math.max(0, ready.length - count));
    for (const node of lost) {
      const name = String(asMap(node.metadata).name);
      this.request("PATCH", `/api/v1/nodes/${name}`, {
        spec: { taints: [{ key: "node.kubernetes.io/unreachable", effect: "NoExecute" }] },
      });
      this.request("PATCH", `/api/v1/nodes/${name}/status`, {
        status: {
          conditions: [
            {
              type: "Ready",
              status: "Unknown",
              reason: "NodeStatusUnknown",
              message: "Kubelet stopped posting node status.",
            },
          ],
        },
      });
      this.events.record(
        node,
        { component: "node-controller" },
        {
          type: "Normal",
          reason: "NodeNotReady",
          message: `Node ${name} status is now: NodeNotReady`,
        },
      );
      for (const pod of this.list("/api/v1/pods").filter((p) => asMap(p.spec).nodeName === name)) {
        this.events.record(
          pod,
          { component: "node-controller" },
          { type: "Warning", reason: "NodeNotReady", message: "Node is not ready" },
        );
        this.remove(pod, "/api/v1", "pods");
      }
    }
    return lost.map((node) => String(asMap(node.metadata).name));
  }

  /** Brings every lost node back: Ready, untainted. */
  restoreNodes(): void {
    for (const node of this.list("/api/v1/nodes").filter((n) => !isReady(n))) {
      const name = String(asMap(node.metadata).name);
      this.request("PATCH", `/api/v1/nodes/${name}`, { spec: { taints: null } });
      this.request("PATCH", `/api/v1/nodes/${name}/status`, {
        status: {
          conditions: [
            {
              type: "Ready",
              status: "True",
              reason: "KubeletReady",
              message: "kubelet is posting ready status",
            },
          ],
        },
      });
    }
  }

  /**
   * Images no node can pull from now on (a registry that lost them, a tag never pushed): pods using
   * them stay Pending in ImagePullBackOff and never get ready, until the list no longer names them.
   */
  setUnpullableImages(images: readonly string[]): void {
    this.unpullable = new Set(images);
    this.schedule();
  }

  stop(): void {
    this.stopped = true;
    this.autoscalers?.stop();
    this.stopWatch?.();
    for (const timer of this.timers) clearTimeout(timer);
    for (const interval of this.intervals) clearInterval(interval);
  }

  /**
   * Asks for a pass. A change inside one namespace asks for that namespace's workloads only (a
   * workload, its ReplicaSets, pods and Services share one); anything else (a node, a fault, a
   * timer) for every namespace. The cluster-wide controllers (scheduler, kubelet, garbage
   * collector) look at the whole world in every pass.
   */
  schedule(namespace?: string): void {
    if (this.stopped) return;
    if (namespace === undefined) this.dirty = "all";
    else if (this.dirty !== "all") this.dirty.add(namespace);
    if (this.pending) return;
    this.pending = true;
    // Changes arriving together (a burst of applies) are handled by one pass, at most every PASS_MS.
    setTimeout(() => {
      this.pending = false;
      if (!this.stopped) this.sync();
    }, PASS_MS);
  }

  // One pass of every controller; their writes schedule the next pass until nothing changes.
  private sync(): void {
    const dirty = this.dirty;
    this.dirty = new Set();
    const touched = (object: JsonMap) =>
      dirty === "all" || dirty.has(String(asMap(object.metadata).namespace));
    const each = (path: string, run: (object: JsonMap) => void) => {
      for (const object of this.list(path)) if (touched(object)) run(object);
    };
    each("/apis/apps/v1/deployments", (deployment) => syncDeployment(this, deployment));
    each("/apis/apps/v1/replicasets", (replicaSet) => syncReplicaSet(this, replicaSet));
    each("/apis/apps/v1/statefulsets", (statefulSet) => syncStatefulSet(this, statefulSet));
    each("/apis/batch/v1/jobs", (job) => syncJob(this, job));
    for (const { workload, prefix, collection } of this.customWorkloads())
      each(`${prefix}/${collection}`, (object) => syncCustom(this, object, workload));
    collectGarbage(this);
    schedulePods(this);
    runKubelet(this);
    probePods(this);
    this.podsGone();
    each("/apis/apps/v1/replicasets", (replicaSet) =>
      writePodStatus(this, replicaSet, "/apis/apps/v1", "replicasets", ["fullyLabeledReplicas"]),
    );
    each("/apis/apps/v1/deployments", (deployment) => updateDeploymentStatus(this, deployment));
    each("/apis/apps/v1/statefulsets", (statefulSet) =>
      writePodStatus(this, statefulSet, "/apis/apps/v1", "statefulsets", [
        "currentReplicas",
        "updatedReplicas",
      ]),
    );
    each("/apis/batch/v1/jobs", (job) => updateJobStatus(this, job));
    for (const { prefix, collection, hasStatus } of this.customWorkloads())
      each(`${prefix}/${collection}`, (object) =>
        writePodStatus(this, object, prefix, collection, ["updatedReplicas"], hasStatus, [
          "updatedReadyReplicas",
        ]),
      );
    bindClaims(this);
    assignLoadBalancers(this);
    syncEndpoints(this, touched);
    syncResourceQuotas(this, touched);
  }

  // Each declared custom workload whose CRD is served, and where its objects are.
  customWorkloads(): ServedWorkload[] {
    return (this.options.workloads ?? []).flatMap((workload) => {
      const resource = this.api
        .resources()
        .find((r) => r.group === workload.group && r.kind === workload.kind);
      if (!resource) return [];
      const prefix = `/apis/${resource.group}/${resource.version}`;
      return [
        {
          workload,
          prefix,
          collection: resource.name,
          hasStatus: resource.subresources?.includes("status") === true,
        },
      ];
    });
  }

  // Pods gone since the last pass: their containers are stopped (Killing) and their logs' followers end.
  private podsGone(): void {
    const now = new Map(this.list("/api/v1/pods").map((pod) => [String(asMap(pod.metadata).uid), pod]));
    for (const [uid, pod] of this.podsSeen) {
      if (now.has(uid)) continue;
      const containers = asList(asMap(pod.spec).containers).map((c) => String(asMap(c).name));
      const node = asMap(pod.spec).nodeName;
      if (typeof node === "string" && asMap(pod.status).phase === "Running")
        for (const container of containers)
          this.events.record(
            pod,
            { component: "kubelet", host: node },
            {
              type: "Normal",
              reason: "Killing",
              message: `Stopping container ${container}`,
              fieldPath: `spec.containers{${container}}`,
            },
          );
      this.api.logs.forget(uid, containers);
    }
    this.podsSeen.clear();
    for (const [uid, pod] of now) this.podsSeen.set(uid, pod);
  }

  private createNode(name: string, pool: NodePool): void {
    const index = this.nodeIndex.size;
    this.nodeIndex.set(name, index);
    this.request("POST", "/api/v1/nodes", {
      apiVersion: "v1",
      kind: "Node",
      metadata: {
        name,
        labels: {
          "kubernetes.io/hostname": name,
          "kubernetes.io/os": "linux",
          "kubernetes.io/arch": "amd64",
          ...pool.labels,
        },
      },
      spec: {
        podCIDR: `10.244.${index}.0/24`,
        podCIDRs: [`10.244.${index}.0/24`],
        ...(pool.taints ? { taints: pool.taints as unknown as Json } : {}),
      },
      status: {
        capacity: pool.allocatable,
        allocatable: pool.allocatable,
        addresses: [
          { type: "InternalIP", address: this.nodeIp(name) },
          { type: "Hostname", address: name },
        ],
        nodeInfo: {
          kubeletVersion: String(versionBody().gitVersion),
          kubeProxyVersion: "",
          osImage: "gitfleet simulated node",
          kernelVersion: "6.1.0-gitfleet",
          containerRuntimeVersion: "containerd://2.0.0-gitfleet",
          operatingSystem: "linux",
          architecture: "amd64",
          machineID: "",
          systemUUID: "",
          bootID: "",
        },
        conditions: [
          {
            type: "Ready",
            status: "True",
            reason: "KubeletReady",
            message: "kubelet is posting ready status",
          },
        ],
      },
    });
  }

  // Lists are kept until their resource changes, with an index by owner: a pass over thousands of
  // pods then costs one list, not one per owner, and an event or an Endpoints written in between
  // does not make the pods be read again.
  list(path: string): JsonMap[] {
    return this.listed(path).items;
  }

  listed(path: string): CachedList {
    const version = String(this.changed.get(resourceOfListPath(path)) ?? 0);
    const cached = this.lists.get(path);
    if (cached?.version === version) return cached;
    const response = this.request("GET", path);
    const fresh: CachedList = { version, items: asList(asMap(response).items).map((item) => asMap(item)) };
    this.lists.set(path, fresh);
    return fresh;
  }

  ownedBy(path: string, owner: JsonMap): JsonMap[] {
    // An owner and what it owns share a namespace: one index over the whole resource serves every
    // namespace, so a pass reads each resource once however many owners it looks at.
    const cached = this.listed(path.replace(/\/namespaces\/[^/]+\//, "/"));
    if (!cached.byOwner) {
      const byOwner = new Map<string, JsonMap[]>();
      for (const object of cached.items)
        for (const reference of asList(asMap(object.metadata).ownerReferences)) {
          const uid = String(asMap(reference).uid);
          const owned = byOwner.get(uid);
          if (owned) owned.push(object);
          else byOwner.set(uid, [object]);
        }
      cached.byOwner = byOwner;
    }
    const namespace = owner.namespace;
    return (cached.byOwner.get(String(owner.uid)) ?? []).filter(
      (object) => typeof namespace !== "string" || asMap(object.metadata).namespace === namespace,
    );
  }

  patch(object: JsonMap, prefix: string, resource: string, body: JsonMap, collection = resource): void {
    const metadata = asMap(object.metadata);
    const [, sub] = resource.split("/");
    this.request(
      "PATCH",
      `${prefix}/namespaces/${String(metadata.namespace)}/${collection}/${String(metadata.name)}${sub ? `/${sub}` : ""}`,
      body,
    );
  }

  patchPod(pod: JsonMap, body: JsonMap): void {
    const metadata = asMap(pod.metadata);
    const spec = asMap(body.spec);
    if (Object.keys(spec).length > 0)
      this.request(
        "PATCH",
        `/api/v1/namespaces/${String(metadata.namespace)}/pods/${String(metadata.name)}`,
        { spec },
      );
    if (body.status)
      this.request(
        "PATCH",
        `/api/v1/namespaces/${String(metadata.namespace)}/pods/${String(metadata.name)}/status`,
        { status: body.status },
      );
  }

  remove(object: JsonMap, prefix: string, resource: string): void {
    const metadata = asMap(object.metadata);
    this.request(
      "DELETE",
      `${prefix}/namespaces/${String(metadata.namespace)}/${resource}/${String(metadata.name)}`,
    );
  }

  resource(name: string) {
    const found = this.api.resources().find((r) => r.group === "" && r.name === name);
    if (!found) throw new Error(`no resource ${name}`);
    return found;
  }

  request(method: string, path: string, body?: JsonMap): unknown {
    const response = this.api.handle({ method, path, query: new URLSearchParams(), body, ...CONTROLLER });
    return response.body;
  }
}
