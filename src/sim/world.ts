import { createHash } from "node:crypto";
import { asList, asMap, type Json, type JsonMap, valueAt } from "../model/json.js";
import { parseQuantity } from "../model/quantity.js";
import {
  DEFAULT_PROGRESS_DEADLINE_SECONDS,
  progressCondition,
  type RolloutCounts,
} from "./deployment-progress.js";
import { HpaController } from "./hpa-controller.js";
import type { MemberApi } from "./member-api.js";
import { type RolloutSet, rolloutPolicy, rolloutStep } from "./rollout.js";

/** One kind of node in a member, and how many of it. */
export interface NodePool {
  readonly count: number;
  /** e.g. { cpu: "4", memory: "16Gi", pods: "110", "nvidia.com/gpu": "1" } */
  readonly allocatable: Readonly<Record<string, string>>;
  readonly labels?: Readonly<Record<string, string>>;
  readonly taints?: readonly { readonly key: string; readonly value?: string; readonly effect: string }[];
}

/** The controllers' pace: one pass over the world at most this often while things change. */
const PASS_MS = 10;

interface CachedList {
  readonly version: string;
  readonly items: JsonMap[];
  byOwner?: Map<string, JsonMap[]>;
}

/** What runs inside a simulated member. */
export interface WorldOptions {
  readonly nodePools?: readonly NodePool[];
  /** Custom workload kinds (an OpenKruise CloneSet, say) whose pods the world runs. */
  readonly workloads?: readonly CustomWorkload[];
  /** How long a bound pod takes to become Running and Ready. Default 200 ms. */
  readonly readyDelayMs?: number;
  /** Run HorizontalPodAutoscalers, evaluating each this often (ms); off when unset. */
  readonly hpaPeriodMs?: number;
}

/** A custom resource kind that runs pods: where its replica count and pod template are. */
export interface CustomWorkload {
  readonly group: string;
  readonly kind: string;
  /** Dotted, e.g. "spec.replicas". */
  readonly replicasPath: string;
  /** Dotted, e.g. "spec.template". */
  readonly podTemplatePath: string;
  /** Dotted, e.g. "spec.scaleStrategy.podsToDelete": pods named there are deleted first (OpenKruise's CloneSet). */
  readonly podsToDeletePath?: string;
}

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
 * Everything goes through the member's API, so watchers see every change.
 */
export class World {
  private pending = false;
  private readonly ready = new Set<string>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private stopped = false;
  private stopWatch: (() => void) | undefined;
  private readonly lists = new Map<string, CachedList>();
  /** Per Deployment uid: the pass that checks its progress deadline. */
  private unpullable = new Set<string>();
  private readonly deadlines = new Map<string, { at: number; timer: NodeJS.Timeout }>();
  private readonly autoscalers: HpaController | undefined;

  constructor(
    private readonly api: MemberApi,
    private readonly options: WorldOptions = {},
  ) {
    this.autoscalers = options.hpaPeriodMs ? new HpaController(api, options.hpaPeriodMs) : undefined;
  }

  start(): void {
    let index = 0;
    for (const pool of this.options.nodePools ?? DEFAULT_NODE_POOLS)
      for (let i = 0; i < pool.count; i++) this.createNode(`${this.api.clusterName}-node-${index++}`, pool);
    const subscription = this.api.store.watch(Number(this.api.store.currentVersion()), () => this.schedule());
    this.stopWatch = subscription?.stop;
    this.schedule();
    this.autoscalers?.start();
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
      for (const pod of this.list("/api/v1/pods").filter((p) => asMap(p.spec).nodeName === name))
        this.remove(pod, "/api/v1", "pods");
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
  }

  private schedule(): void {
    if (this.pending || this.stopped) return;
    this.pending = true;
    // Changes arriving together (a burst of applies) are handled by one pass, at most every PASS_MS.
    setTimeout(() => {
      this.pending = false;
      if (!this.stopped) this.sync();
    }, PASS_MS);
  }

  // One pass of every controller; their writes schedule the next pass until nothing changes.
  private sync(): void {
    for (const deployment of this.list("/apis/apps/v1/deployments")) this.syncDeployment(deployment);
    for (const replicaSet of this.list("/apis/apps/v1/replicasets")) this.syncReplicaSet(replicaSet);
    for (const statefulSet of this.list("/apis/apps/v1/statefulsets")) this.syncStatefulSet(statefulSet);
    for (const job of this.list("/apis/batch/v1/jobs")) this.syncJob(job);
    for (const { workload, prefix, collection } of this.customWorkloads())
      for (const object of this.list(`${prefix}/${collection}`)) this.syncCustom(object, workload);
    this.collectGarbage();
    this.schedulePods();
    this.runKubelet();
    for (const replicaSet of this.list("/apis/apps/v1/replicasets"))
      this.writePodStatus(replicaSet, "/apis/apps/v1", "replicasets", ["fullyLabeledReplicas"]);
    for (const deployment of this.list("/apis/apps/v1/deployments")) this.updateDeploymentStatus(deployment);
    for (const statefulSet of this.list("/apis/apps/v1/statefulsets"))
      this.writePodStatus(statefulSet, "/apis/apps/v1", "statefulsets", [
        "currentReplicas",
        "updatedReplicas",
      ]);
    for (const job of this.list("/apis/batch/v1/jobs")) this.updateJobStatus(job);
    for (const { prefix, collection, hasStatus } of this.customWorkloads())
      for (const object of this.list(`${prefix}/${collection}`))
        this.writePodStatus(object, prefix, collection, ["updatedReplicas"], hasStatus, [
          "updatedReadyReplicas",
        ]);
    this.bindClaims();
    this.assignLoadBalancers();
  }

  // Each declared custom workload whose CRD is served, and where its objects are.
  private customWorkloads(): {
    workload: CustomWorkload;
    prefix: string;
    collection: string;
    hasStatus: boolean;
  }[] {
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

  private syncCustom(object: JsonMap, workload: CustomWorkload): void {
    const metadata = asMap(object.metadata);
    const replicas = valueAt(object, workload.replicasPath.split("."));
    const template = asMap(valueAt(object, workload.podTemplatePath.split(".")));
    const want = typeof replicas === "number" ? replicas : 1;
    const owner = { ...object, spec: { template } };
    // As OpenKruise does: the pods named in podsToDelete go (replaced if replicas did not drop).
    const named = workload.podsToDeletePath
      ? valueAt(object, workload.podsToDeletePath.split("."))
      : undefined;
    const doomed = new Set(Array.isArray(named) ? named.map(String) : []);
    if (doomed.size > 0) {
      for (const pod of this.ownedBy(`/api/v1/namespaces/${String(metadata.namespace)}/pods`, metadata))
        if (doomed.has(String(asMap(pod.metadata).name)) && !asMap(pod.metadata).deletionTimestamp)
          this.remove(pod, "/api/v1", "pods");
    }
    this.ensurePods(
      owner,
      workload.kind,
      want,
      (i) => {
        const seed = `${String(metadata.uid)}/${this.api.store.currentVersion()}/${i}`;
        return `${String(metadata.name)}-${createHash("sha256").update(seed).digest("hex").slice(0, 5)}`;
      },
      true,
      String(object.apiVersion),
      doomed,
    );
  }

  private updateJobStatus(job: JsonMap): void {
    const metadata = asMap(job.metadata);
    const pods = this.ownedBy(`/api/v1/namespaces/${String(metadata.namespace)}/pods`, metadata);
    const succeeded = pods.filter((p) => asMap(p.status).phase === "Succeeded").length;
    const complete = succeeded >= Number(asMap(job.spec).completions ?? 1);
    const status = {
      active: pods.length - succeeded,
      succeeded,
      ready: pods.filter(isReady).length,
      conditions: complete ? [{ type: "Complete", status: "True" }] : null,
    };
    if (!sameJson(asMap(job.status), status))
      this.patch(job, "/apis/batch/v1", "jobs/status", { status }, "jobs");
  }

  private createNode(name: string, pool: NodePool): void {
    this.request("POST", "/api/v1/nodes", {
      apiVersion: "v1",
      kind: "Node",
      metadata: {
        name,
        labels: { "kubernetes.io/hostname": name, "kubernetes.io/os": "linux", ...pool.labels },
      },
      spec: { ...(pool.taints ? { taints: pool.taints as unknown as Json } : {}) },
      status: {
        capacity: pool.allocatable,
        allocatable: pool.allocatable,
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

  // One rollout step: the ReplicaSet of the current template grows and the others shrink (rollout.ts).
  private syncDeployment(deployment: JsonMap): void {
    const metadata = asMap(deployment.metadata);
    const spec = asMap(deployment.spec);
    const template = asMap(spec.template);
    const hash = createHash("sha256").update(JSON.stringify(template)).digest("hex").slice(0, 10);
    const name = `${String(metadata.name)}-${hash}`;
    const owned = this.ownedBy(
      `/apis/apps/v1/namespaces/${String(metadata.namespace)}/replicasets`,
      metadata,
    );
    const asSet = (rs: JsonMap): RolloutSet => ({
      name: String(asMap(rs.metadata).name),
      replicas: Number(asMap(rs.spec).replicas ?? 0),
      available: Number(asMap(rs.status).availableReplicas ?? 0),
    });
    const current = owned.find((rs) => asMap(rs.metadata).name === name);
    const old = owned.filter((rs) => rs !== current);
    const step = rolloutStep(
      rolloutPolicy(spec),
      current ? asSet(current) : { name, replicas: 0, available: 0 },
      old.map(asSet),
    );
    if (!current) this.createReplicaSet(deployment, name, hash, step.next);
    else if (asMap(current.spec).replicas !== step.next)
      this.patch(current, "/apis/apps/v1", "replicasets", { spec: { replicas: step.next } });
    for (const rs of old) {
      const replicas = step.old.get(String(asMap(rs.metadata).name)) ?? 0;
      // An old ReplicaSet goes once it has no pods left.
      if (replicas === 0 && Number(asMap(rs.status).replicas ?? 0) === 0 && asMap(rs.spec).replicas === 0)
        this.remove(rs, "/apis/apps/v1", "replicasets");
      else if (asMap(rs.spec).replicas !== replicas)
        this.patch(rs, "/apis/apps/v1", "replicasets", { spec: { replicas } });
    }
  }

  private createReplicaSet(deployment: JsonMap, name: string, hash: string, replicas: number): void {
    const metadata = asMap(deployment.metadata);
    const spec = asMap(deployment.spec);
    const template = asMap(spec.template);
    const labels = { ...asMap(asMap(template.metadata).labels), "pod-template-hash": hash };
    this.request("POST", `/apis/apps/v1/namespaces/${String(metadata.namespace)}/replicasets`, {
      apiVersion: "apps/v1",
      kind: "ReplicaSet",
      metadata: {
        name,
        namespace: metadata.namespace ?? "",
        labels,
        ownerReferences: [ownerReference(deployment, "apps/v1", "Deployment")],
      },
      spec: {
        replicas,
        selector: { matchLabels: { ...asMap(asMap(spec.selector).matchLabels), "pod-template-hash": hash } },
        template: { ...template, metadata: { ...asMap(template.metadata), labels } },
      },
    });
  }

  private syncReplicaSet(replicaSet: JsonMap): void {
    const metadata = asMap(replicaSet.metadata);
    const want = Number(asMap(replicaSet.spec).replicas ?? 1);
    this.ensurePods(replicaSet, "ReplicaSet", want, (i) => {
      const seed = `${String(metadata.uid)}/${this.api.store.currentVersion()}/${i}`;
      return `${String(metadata.name)}-${createHash("sha256").update(seed).digest("hex").slice(0, 5)}`;
    });
  }

  // A StatefulSet's pods are <name>-0 … <name>-(n-1); scaling down removes the highest ordinals.
  private syncStatefulSet(statefulSet: JsonMap): void {
    const name = String(asMap(statefulSet.metadata).name);
    const want = Number(asMap(statefulSet.spec).replicas ?? 1);
    this.ensurePods(statefulSet, "StatefulSet", want, (i) => `${name}-${i}`);
  }

  // A Job keeps `parallelism` pods running until `completions` have succeeded.
  private syncJob(job: JsonMap): void {
    const spec = asMap(job.spec);
    const completions = Number(spec.completions ?? 1);
    const parallelism = Number(spec.parallelism ?? 1);
    const pods = this.ownedBy(
      `/api/v1/namespaces/${String(asMap(job.metadata).namespace)}/pods`,
      asMap(job.metadata),
    );
    const succeeded = pods.filter((p) => asMap(p.status).phase === "Succeeded").length;
    const active = pods.length - succeeded;
    const want = succeeded + Math.min(parallelism, Math.max(0, completions - succeeded - active) + active);
    const name = String(asMap(job.metadata).name);
    this.ensurePods(job, "Job", want, (i) => `${name}-${i}`, false);
  }

  // Creates pods from the owner's template up to `want`; removes extras unless `shrink` is false.
  private ensurePods(
    owner: JsonMap,
    kind: string,
    want: number,
    nameOf: (i: number) => string,
    shrink = true,
    apiVersion?: string,
    gone: ReadonlySet<string> = new Set(),
  ): void {
    const metadata = asMap(owner.metadata);
    const namespace = String(metadata.namespace);
    // Pods deleted by name this tick (podsToDelete) no longer count.
    const pods = this.ownedBy(`/api/v1/namespaces/${namespace}/pods`, metadata).filter(
      (p) => !gone.has(String(asMap(p.metadata).name)),
    );
    const template = asMap(asMap(owner.spec).template);
    const taken = new Set(pods.map((p) => asMap(p.metadata).name));
    let index = 0;
    for (let created = pods.length; created < want; created++) {
      while (taken.has(nameOf(index))) index++;
      taken.add(nameOf(index));
      this.request("POST", `/api/v1/namespaces/${namespace}/pods`, {
        apiVersion: "v1",
        kind: "Pod",
        metadata: {
          ...asMap(template.metadata),
          name: nameOf(index),
          namespace,
          ownerReferences: [
            ownerReference(owner, apiVersion ?? (kind === "Job" ? "batch/v1" : "apps/v1"), kind),
          ],
        },
        spec: asMap(template.spec),
        status: { phase: "Pending" },
      });
    }
    if (!shrink || pods.length <= want) return;
    // The last pods (by name; for a StatefulSet the highest ordinals) go first when scaling down.
    const byName = [...pods].sort((a, b) =>
      compareNames(String(asMap(a.metadata).name), String(asMap(b.metadata).name)),
    );
    for (const pod of byName.slice(want)) this.remove(pod, "/api/v1", "pods");
  }

  private schedulePods(): void {
    const nodes = this.list("/api/v1/nodes");
    const pods = this.list("/api/v1/pods");
    const used = new Map<string, Record<string, number>>();
    for (const pod of pods) {
      const node = asMap(pod.spec).nodeName;
      if (typeof node === "string") add(used, node, requestsOf(pod));
    }
    for (const pod of pods) {
      if (typeof asMap(pod.spec).nodeName === "string") continue;
      const fit = nodes.find((node) => fits(pod, node, used.get(String(asMap(node.metadata).name)) ?? {}));
      if (fit) {
        const nodeName = String(asMap(fit.metadata).name);
        add(used, nodeName, requestsOf(pod));
        this.patchPod(pod, {
          spec: { nodeName },
          status: { conditions: [{ type: "PodScheduled", status: "True" }] },
        });
      } else {
        const message = `0/${nodes.length} nodes are available: ${nodes.length} Insufficient resources or unmatched node selector or untolerated taint.`;
        const condition = { type: "PodScheduled", status: "False", reason: "Unschedulable", message };
        if (!sameJson(asList(asMap(pod.status).conditions), [condition]))
          this.patchPod(pod, { status: { phase: "Pending", conditions: [condition] } });
      }
    }
  }

  private runKubelet(): void {
    for (const pod of this.list("/api/v1/pods")) {
      const metadata = asMap(pod.metadata);
      const uid = String(metadata.uid);
      if (
        typeof asMap(pod.spec).nodeName !== "string" ||
        asMap(pod.status).phase === "Running" ||
        asMap(pod.status).phase === "Succeeded" ||
        this.ready.has(uid)
      )
        continue;
      if (this.backOff(pod)) continue;
      this.ready.add(uid);
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        const live = this.api.store
          .list(this.resource("pods"), String(metadata.namespace))
          .find((p) => asMap(p.metadata).uid === uid);
        if (!live || this.stopped) return;
        const conditions = ["PodScheduled", "Initialized", "ContainersReady", "Ready"].map((type) => ({
          type,
          status: "True",
        }));
        const ofJob = asList(asMap(live.metadata).ownerReferences).some((r) => asMap(r).kind === "Job");
        // A Job's pod runs to completion; every other pod keeps running.
        const status = ofJob
          ? { phase: "Succeeded", conditions: [{ type: "Ready", status: "False", reason: "PodCompleted" }] }
          : { phase: "Running", conditions };
        this.patchPod(live, { status });
      }, this.options.readyDelayMs ?? 200);
      this.timers.add(timer);
    }
  }

  // A bound pod with an image no node can pull waits in ImagePullBackOff (written once).
  private backOff(pod: JsonMap): boolean {
    const containers = asList(asMap(pod.spec).containers).map((c) => asMap(c));
    const missing = containers.find((c) => this.unpullable.has(String(c.image)));
    if (!missing) return false;
    const waiting = {
      reason: "ImagePullBackOff",
      message: `Back-off pulling image "${String(missing.image)}"`,
    };
    const status = {
      phase: "Pending",
      conditions: [
        { type: "PodScheduled", status: "True" },
        { type: "Ready", status: "False", reason: "ContainersNotReady" },
      ],
      containerStatuses: containers.map((c) => ({
        name: String(c.name),
        image: String(c.image),
        ready: false,
        state: this.unpullable.has(String(c.image))
          ? { waiting }
          : { waiting: { reason: "PodInitializing" } },
      })),
    };
    if (!sameJson(asMap(pod.status), status)) this.patchPod(pod, { status });
    return true;
  }

  /**
   * Writes a pod-owning workload's status as its controller computes it — its pods, the ready ones
   * (available at once: no minReadySeconds here), and `counted` fields equal to the pod count — when
   * it changed; through the status subresource unless the kind has none.
   */
  private writePodStatus(
    owner: JsonMap,
    prefix: string,
    collection: string,
    counted: readonly string[],
    viaStatus = true,
    readyCounted: readonly string[] = [],
  ): void {
    const metadata = asMap(owner.metadata);
    const pods = this.ownedBy(`/api/v1/namespaces/${String(metadata.namespace)}/pods`, metadata);
    const ready = pods.filter(isReady).length;
    const status: JsonMap = {
      observedGeneration: metadata.generation ?? 1,
      replicas: pods.length,
      readyReplicas: ready,
      availableReplicas: ready,
      ...Object.fromEntries(counted.map((field) => [field, pods.length])),
      ...Object.fromEntries(readyCounted.map((field) => [field, ready])),
    };
    if (!sameJson(asMap(owner.status), status))
      this.patch(owner, prefix, viaStatus ? `${collection}/status` : collection, { status }, collection);
  }

  // A default StorageClass with immediate binding: every claim is Bound to a volume of the size it asks.
  private bindClaims(): void {
    for (const claim of this.list("/api/v1/persistentvolumeclaims")) {
      if (asMap(claim.status).phase === "Bound") continue;
      const spec = asMap(claim.spec);
      this.patch(
        claim,
        "/api/v1",
        "persistentvolumeclaims/status",
        {
          status: {
            phase: "Bound",
            accessModes: asList(spec.accessModes),
            capacity: { storage: asMap(asMap(spec.resources).requests).storage ?? "1Gi" },
          },
        },
        "persistentvolumeclaims",
      );
    }
  }

  // A load-balancer controller (a cloud's, or MetalLB): each LoadBalancer Service gets an address.
  private assignLoadBalancers(): void {
    const services = this.list("/api/v1/services").filter((s) => asMap(s.spec).type === "LoadBalancer");
    for (const [index, service] of services.entries()) {
      if (asList(asMap(asMap(service.status).loadBalancer).ingress).length > 0) continue;
      const uid = String(asMap(service.metadata).uid ?? index);
      const octet = (n: number) =>
        (Number.parseInt(uid.replace(/[^0-9a-f]/g, "").slice(n, n + 2) || "1", 16) % 254) + 1;
      this.patch(
        service,
        "/api/v1",
        "services/status",
        { status: { loadBalancer: { ingress: [{ ip: `198.51.${octet(0)}.${octet(2)}` }] } } },
        "services",
      );
    }
  }

  private updateDeploymentStatus(deployment: JsonMap): void {
    const metadata = asMap(deployment.metadata);
    const sets = this.ownedBy(`/apis/apps/v1/namespaces/${String(metadata.namespace)}/replicasets`, metadata);
    const sum = (field: string) =>
      sets.reduce((total, rs) => total + Number(asMap(rs.status)[field] ?? 0), 0);
    const desired = Number(asMap(deployment.spec).replicas ?? 1);
    const available = sum("availableReplicas");
    const hash = createHash("sha256")
      .update(JSON.stringify(asMap(asMap(deployment.spec).template)))
      .digest("hex")
      .slice(0, 10);
    const updated = sets.find((rs) => asMap(rs.metadata).name === `${String(metadata.name)}-${hash}`);
    const counts = {
      replicas: sum("replicas"),
      updatedReplicas: Number(asMap(updated?.status).replicas ?? 0),
      readyReplicas: sum("readyReplicas"),
      availableReplicas: available,
    };
    const progress = this.progressOf(deployment, counts, desired, `${String(metadata.name)}-${hash}`);
    const status = {
      observedGeneration: metadata.generation ?? 1,
      ...counts,
      unavailableReplicas: desired - available > 0 ? desired - available : null,
      conditions: [
        {
          type: "Available",
          status: available >= desired ? "True" : "False",
          reason: available >= desired ? "MinimumReplicasAvailable" : "MinimumReplicasUnavailable",
        },
        progress,
      ],
    };
    if (!sameJson(asMap(deployment.status), status))
      this.patch(deployment, "/apis/apps/v1", "deployments/status", { status }, "deployments");
  }

  // The Progressing condition, and a pass when its deadline runs out while nothing progresses.
  private progressOf(
    deployment: JsonMap,
    after: RolloutCounts,
    desired: number,
    replicaSetName: string,
  ): JsonMap {
    const metadata = asMap(deployment.metadata);
    const status = asMap(deployment.status);
    const deadlineSeconds = asMap(deployment.spec).progressDeadlineSeconds;
    const outcome = progressCondition({
      current: asList(status.conditions)
        .map((c) => asMap(c))
        .find((c) => c.type === "Progressing"),
      before: {
        replicas: Number(status.replicas ?? 0),
        updatedReplicas: Number(status.updatedReplicas ?? 0),
        readyReplicas: Number(status.readyReplicas ?? 0),
        availableReplicas: Number(status.availableReplicas ?? 0),
      },
      after,
      desired,
      newGeneration: status.observedGeneration !== (metadata.generation ?? 1),
      deadlineSeconds:
        typeof deadlineSeconds === "number" ? deadlineSeconds : DEFAULT_PROGRESS_DEADLINE_SECONDS,
      replicaSetName,
      now: Date.now(),
    });
    const uid = String(metadata.uid);
    if (outcome.deadlineAt !== undefined && this.deadlines.get(uid)?.at !== outcome.deadlineAt) {
      const previous = this.deadlines.get(uid);
      if (previous) {
        clearTimeout(previous.timer);
        this.timers.delete(previous.timer);
      }
      const timer = setTimeout(
        () => {
          this.timers.delete(timer);
          this.deadlines.delete(uid);
          this.schedule();
        },
        Math.max(0, outcome.deadlineAt - Date.now()) + PASS_MS,
      );
      this.timers.add(timer);
      this.deadlines.set(uid, { at: outcome.deadlineAt, timer });
    }
    return outcome.condition;
  }

  // Objects whose controller is gone go too, as the garbage collector removes dependents.
  private collectGarbage(): void {
    const alive = new Set(
      [
        "/apis/apps/v1/deployments",
        "/apis/apps/v1/replicasets",
        "/apis/apps/v1/statefulsets",
        "/apis/batch/v1/jobs",
        ...this.customWorkloads().map(({ prefix, collection }) => `${prefix}/${collection}`),
      ]
        .flatMap((path) => this.list(path))
        .map((object) => asMap(object.metadata).uid),
    );
    for (const [path, prefix, resource] of [
      ["/apis/apps/v1/replicasets", "/apis/apps/v1", "replicasets"],
      ["/api/v1/pods", "/api/v1", "pods"],
    ] as const)
      for (const object of this.list(path)) {
        const owners = asList(asMap(object.metadata).ownerReferences).map((r) => asMap(r).uid);
        if (owners.length > 0 && owners.every((uid) => !alive.has(uid)))
          this.remove(object, prefix, resource);
      }
  }

  // Lists are kept until the next write (every write moves the store's resourceVersion), with an
  // index by owner: a pass over thousands of pods then costs one list, not one per owner.
  private list(path: string): JsonMap[] {
    return this.listed(path).items;
  }

  private listed(path: string): CachedList {
    const version = this.api.store.currentVersion();
    const cached = this.lists.get(path);
    if (cached?.version === version) return cached;
    const response = this.request("GET", path);
    const fresh: CachedList = { version, items: asList(asMap(response).items).map((item) => asMap(item)) };
    this.lists.set(path, fresh);
    return fresh;
  }

  private ownedBy(path: string, owner: JsonMap): JsonMap[] {
    const cached = this.listed(path);
    if (!cached.byOwner) {
      const byOwner = new Map<string, JsonMap[]>();
      for (const object of cached.items)
        for (const reference of asList(asMap(object.metadata).ownerReferences)) {
          const uid = String(asMap(reference).uid);
          byOwner.set(uid, [...(byOwner.get(uid) ?? []), object]);
        }
      cached.byOwner = byOwner;
    }
    return cached.byOwner.get(String(owner.uid)) ?? [];
  }

  private patch(
    object: JsonMap,
    prefix: string,
    resource: string,
    body: JsonMap,
    collection = resource,
  ): void {
    const metadata = asMap(object.metadata);
    const [, sub] = resource.split("/");
    this.request(
      "PATCH",
      `${prefix}/namespaces/${String(metadata.namespace)}/${collection}/${String(metadata.name)}${sub ? `/${sub}` : ""}`,
      body,
    );
  }

  private patchPod(pod: JsonMap, body: JsonMap): void {
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

  private remove(object: JsonMap, prefix: string, resource: string): void {
    const metadata = asMap(object.metadata);
    this.request(
      "DELETE",
      `${prefix}/namespaces/${String(metadata.namespace)}/${resource}/${String(metadata.name)}`,
    );
  }

  private resource(name: string) {
    const found = this.api.resources().find((r) => r.group === "" && r.name === name);
    if (!found) throw new Error(`no resource ${name}`);
    return found;
  }

  private request(method: string, path: string, body?: JsonMap): unknown {
    const response = this.api.handle({ method, path, query: new URLSearchParams(), body, ...CONTROLLER });
    return response.body;
  }
}

// Names in order, numbers by value: web-2 before web-10.
function compareNames(a: string, b: string): number {
  return a.localeCompare(b, "en", { numeric: true });
}

// Equal as JSON values, whatever the order of keys; a null field counts as absent (merge patch deletes it).
function sameJson(a: Json, b: Json): boolean {
  const canonical = (value: Json): Json => {
    if (Array.isArray(value)) return value.map(canonical);
    if (value === null || typeof value !== "object") return value;
    return Object.fromEntries(
      Object.keys(value)
        .filter((key) => value[key] !== null)
        .sort()
        .map((key) => [key, canonical(value[key] ?? null)]),
    );
  };
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}

function ownerReference(owner: JsonMap, apiVersion: string, kind: string): JsonMap {
  const metadata = asMap(owner.metadata);
  return {
    apiVersion,
    kind,
    name: metadata.name ?? "",
    uid: metadata.uid ?? "",
    controller: true,
    blockOwnerDeletion: true,
  };
}

// A pod or a node with the condition Ready=True.
function isReady(pod: JsonMap): boolean {
  return asList(asMap(pod.status).conditions).some(
    (c) => asMap(c).type === "Ready" && asMap(c).status === "True",
  );
}

// A pod's requests in base units (cpu in millicores), plus one pod slot.
function requestsOf(pod: JsonMap): Record<string, number> {
  const total: Record<string, number> = { pods: 1 };
  for (const container of asList(asMap(pod.spec).containers))
    for (const [name, value] of Object.entries(asMap(asMap(asMap(container).resources).requests)))
      total[name] = (total[name] ?? 0) + quantity(name, value);
  return total;
}

function fits(pod: JsonMap, node: JsonMap, used: Readonly<Record<string, number>>): boolean {
  if (!isReady(node)) return false;
  const allocatable = asMap(asMap(node.status).allocatable);
  const labels = asMap(asMap(node.metadata).labels);
  const selector = asMap(asMap(pod.spec).nodeSelector);
  if (Object.entries(selector).some(([k, v]) => labels[k] !== v)) return false;
  const tolerations = asList(asMap(pod.spec).tolerations).map((t) => asMap(t));
  const taints = asList(asMap(node.spec).taints).map((t) => asMap(t));
  const tolerated = (taint: JsonMap) =>
    tolerations.some(
      (t) =>
        (t.operator === "Exists" && (t.key === undefined || t.key === taint.key)) ||
        (t.key === taint.key && t.value === taint.value),
    );
  if (taints.some((taint) => taint.effect !== "PreferNoSchedule" && !tolerated(taint))) return false;
  return Object.entries(requestsOf(pod)).every(
    ([name, amount]) =>
      (used[name] ?? 0) + amount <= quantity(name, allocatable[name] ?? (name === "pods" ? "110" : "0")),
  );
}

function quantity(name: string, value: Json | undefined): number {
  const parsed = parseQuantity(String(value ?? "0"));
  const amount = parsed === undefined ? 0 : Number(parsed);
  return name === "cpu" ? Math.round(amount * 1000) : amount;
}

function add(
  used: Map<string, Record<string, number>>,
  node: string,
  requests: Record<string, number>,
): void {
  const entry = used.get(node) ?? {};
  for (const [name, amount] of Object.entries(requests)) entry[name] = (entry[name] ?? 0) + amount;
  used.set(node, entry);
}
