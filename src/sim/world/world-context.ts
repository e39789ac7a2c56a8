import type { JsonMap } from "../../apimachinery/json.js";
import type { ApiResource } from "../api-resources.js";
import type { MemberApi } from "../member-api.js";
import type { PodFault } from "../pod-faults.js";
import type { EventRecorder } from "./events.js";

/** One kind of node in a member, and how many of it. */
export interface NodePool {
  readonly count: number;
  /** e.g. { cpu: "4", memory: "16Gi", pods: "110", "nvidia.com/gpu": "1" } */
  readonly allocatable: Readonly<Record<string, string>>;
  readonly labels?: Readonly<Record<string, string>>;
  readonly taints?: readonly { readonly key: string; readonly value?: string; readonly effect: string }[];
}

/** The controllers' pace: one pass over the world at most this often while things change. */
export const PASS_MS = 10;

/** What runs inside a simulated member. */
export interface WorldOptions {
  readonly nodePools?: readonly NodePool[];
  /** Custom workload kinds (an OpenKruise CloneSet, say) whose pods the world runs. */
  readonly workloads?: readonly CustomWorkload[];
  /** How long a bound pod takes to become Running and Ready. Default 200 ms. */
  readonly readyDelayMs?: number;
  /** Run HorizontalPodAutoscalers, evaluating each this often (ms); off when unset. */
  readonly hpaPeriodMs?: number;
  /** How often the kubelet probes under pod faults (failing probes recorded again, crash loops crash). Default 2 s. */
  readonly probePeriodMs?: number;
  /** How long events are kept after they were last seen. Default an hour (kube-apiserver's --event-ttl). */
  readonly eventTtlMs?: number;
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

/** A custom workload kind the member serves, and where its objects are. */
export interface ServedWorkload {
  readonly workload: CustomWorkload;
  readonly prefix: string;
  readonly collection: string;
  readonly hasStatus: boolean;
}

/**
 * What the world's controllers share: the member's API (through lists cached until the next write),
 * the world's options, and the kubelet's and the Deployment controller's timers. Each controller is a
 * module of functions over it (sim/world/), as kube-controller-manager runs one loop per resource.
 */
export interface WorldContext {
  readonly api: MemberApi;
  readonly options: WorldOptions;
  /** Pods the kubelet has started making Ready. */
  readonly ready: Set<string>;
  readonly timers: Set<NodeJS.Timeout>;
  /** Images no node can pull. */
  readonly unpullable: ReadonlySet<string>;
  readonly stopped: boolean;
  /** Per Deployment uid: the pass that checks its progress deadline. */
  readonly deadlines: Map<string, { at: number; timer: NodeJS.Timeout }>;
  /** Records the controllers', scheduler's and kubelet's events. */
  readonly events: EventRecorder;
  /** What goes wrong inside pods on purpose (failing probes, crash loops). */
  readonly podFaults: readonly PodFault[];
  /** The containers of a running pod that are not ready: failing readiness probes, crash loops. */
  unreadyContainers(pod: JsonMap): string[];
  /** A new pod IP in a node's pod range. */
  nextPodIp(node: string): string;
  /** A node's InternalIP. */
  nodeIp(node: string): string;
  list(path: string): JsonMap[];
  ownedBy(path: string, owner: JsonMap): JsonMap[];
  patch(object: JsonMap, prefix: string, resource: string, body: JsonMap, collection?: string): void;
  patchPod(pod: JsonMap, body: JsonMap): void;
  remove(object: JsonMap, prefix: string, resource: string): void;
  resource(name: string): ApiResource;
  request(method: string, path: string, body?: JsonMap): unknown;
  /** Asks for another pass of every controller: over one namespace's workloads, or (no namespace) all. */
  schedule(namespace?: string): void;
  customWorkloads(): ServedWorkload[];
}
