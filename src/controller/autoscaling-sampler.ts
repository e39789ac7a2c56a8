import type { Logger } from "pino";
import { asMap, valueAt } from "../apimachinery/json.js";
import { centralized, targetOf, templateOf } from "../autoscale/autoscale-step.js";
import { type HpaSamples, metricKey, type PodSample } from "../autoscale/hpa-algorithm.js";
import type { MemberConnection } from "../kube/connections.js";
import {
  externalMetricValue,
  objectMetricValue,
  podMetricValues,
  withPodMetric,
} from "../kube/custom-metrics.js";
import type { MemberClient, MemberClientOptions, ObjectAddress } from "../kube/member-client.js";
import { MemberClientPool } from "../kube/member-clients.js";
import { podSamples, SAMPLED_RESOURCES } from "../kube/pod-samples.js";
import { indexObjectInterpreters } from "../model/interpreter-index.js";
import type { ObservedReplicas } from "../model/observed-state.js";
import type { FleetModel, MetricSpec, Resource } from "../model/types.js";
import type { Sampled } from "../policy/policy.js";
import type { ReconcileState } from "../reconcile/reconcile-step.js";

/** fleet.yaml autoscaleInterval's default: the Kubernetes HPA controller's sync period. */
export const DEFAULT_AUTOSCALE_INTERVAL_MS = 15_000;

export interface SamplerOptions {
  /** How to reach each cluster (the sync's connections). */
  readonly connect: (model: FleetModel) => Promise<readonly MemberConnection[]>;
  readonly logger: Logger;
  /** Pods are sampled at most this often, and a workload's total changes at most once per this long (fleet.yaml autoscaleInterval). */
  readonly intervalMs: number;
  readonly client?: MemberClientOptions;
  /** Where its member clients come from (shared with the syncer and the prober); default its own. */
  readonly clients?: MemberClientPool;
}

/**
 * The autoscaling policy's edge (policy/autoscaling.ts): samples the pods of every centralized
 * FederatedHPA's target in each member it runs in (metrics.k8s.io and the pods' requests), and reads
 * back the replicas of the workloads distributed FederatedHPAs' member HPAs scale, at most once per
 * interval. The round takes each sample once; what to do with it is the policy's.
 */
export class AutoscalingSampler {
  private samples = new Map<string, HpaSamples>();
  /** Distributed targets' replicas per cluster, as last read from the members. */
  private members = new Map<string, Map<string, ObservedReplicas>>();
  private sampledAt = Number.NEGATIVE_INFINITY;
  private readonly clients: MemberClientPool;

  constructor(private readonly options: SamplerOptions) {
    this.clients = options.clients ?? new MemberClientPool(options.client);
  }

  /** Samples the members when the interval allows: every centralized target, in every cluster it runs in. */
  async sample(state: ReconcileState, now: number): Promise<void> {
    const model = state.model;
    if (!model || model.federatedHPAs.length === 0 || now - this.sampledAt < this.options.intervalMs) return;
    this.sampledAt = now;
    const connections = new Map((await this.options.connect(model)).map((c) => [c.cluster, c]));
    const samples = new Map<string, HpaSamples>();
    const members = new Map<string, Map<string, ObservedReplicas>>();
    await Promise.all(
      model.federatedHPAs.map(async (hpa) => {
        const identity = targetOf(model, hpa);
        const decision = state.render.decisions.find((d) => d.identity === identity);
        if (!decision) return;
        if (!centralized(hpa, decision)) {
          const read = await this.readMembers(model, decision, connections);
          if (read) members.set(identity, read);
          return;
        }
        const found = await this.sampleWorkload(
          model,
          { identity, metrics: hpa.spec.metrics ?? [] },
          Object.keys(decision.decision.clusters),
          connections,
        );
        if (found) samples.set(identity, found);
      }),
    );
    this.samples = samples;
    this.members = members;
  }

  // A distributed FederatedHPA's workload as each member's HPA keeps it: its replicas in every
  // cluster it is placed in (undefined when one cannot be read; the sync's reports stand then).
  private async readMembers(
    model: FleetModel,
    decision: ReconcileState["render"]["decisions"][number],
    connections: ReadonlyMap<string, MemberConnection>,
  ): Promise<Map<string, ObservedReplicas> | undefined> {
    const template = templateOf(model, decision.identity);
    if (!template) return undefined;
    const path = (
      indexObjectInterpreters(model)(template.apiVersion, template.kind)?.replicasPath ?? "spec.replicas"
    ).split(".");
    const read = new Map<string, ObservedReplicas>();
    for (const [cluster, count] of Object.entries(decision.decision.clusters)) {
      if (count === 0) continue;
      const client = this.client(connections.get(cluster));
      const live = client && (await client.get(addressOf(template)).catch(() => undefined));
      const replicas = live ? valueAt(live, path) : undefined;
      if (typeof replicas !== "number") return undefined;
      const ready = asMap(live?.status).readyReplicas;
      read.set(cluster, {
        desired: replicas,
        ready: typeof ready === "number" ? ready : 0,
        unschedulable: 0,
      });
    }
    return read;
  }

  // Every cluster's pods of one workload, or undefined when a cluster it runs in could not be read:
  // a total decided on part of the pods would scale the whole workload on a fraction of its load.
  // Custom and external metrics come with them: per-pod values beside each pod, Object and External
  // values summed over the clusters (none when a cluster has none: that metric does not vote).
  private async sampleWorkload(
    model: FleetModel,
    workload: { readonly identity: string; readonly metrics: readonly MetricSpec[] },
    clusters: readonly string[],
    connections: ReadonlyMap<string, MemberConnection>,
  ): Promise<HpaSamples | undefined> {
    const { identity } = workload;
    const [, , namespace = "", name = ""] = identity.split("/");
    const template = templateOf(model, identity);
    const matchLabels = asMap(asMap(asMap(template?.object.spec).selector).matchLabels) as Record<
      string,
      string
    >;
    if (Object.keys(matchLabels).length === 0) return undefined;
    const merged: Record<string, PodSample[]> = Object.fromEntries(SAMPLED_RESOURCES.map((r) => [r, []]));
    const values = new Map<string, number | undefined>();
    try {
      for (const cluster of clusters) {
        const client = this.client(connections.get(cluster));
        if (!client) return undefined;
        const found = await podSamples(client, namespace, matchLabels);
        for (const [resource, list] of Object.entries(found)) merged[resource]?.push(...list);
        await customMetrics(client, { namespace, matchLabels, metrics: workload.metrics }, found.cpu ?? [], {
          merged,
          values,
        });
      }
    } catch (error) {
      this.options.logger.warn(
        { workload: `${namespace}/${name}`, err: error },
        "pods not sampled; total kept",
      );
      return undefined;
    }
    const known = [...values].filter((pair): pair is [string, number] => pair[1] !== undefined);
    return {
      samples: merged,
      ...(known.length > 0 ? { values: Object.fromEntries(known) } : {}),
      readyPods: (merged.cpu ?? []).filter((p) => p.ready).length,
    };
  }

  private client(connection: MemberConnection | undefined): MemberClient | undefined {
    if (!connection || !("config" in connection) || !connection.config || connection.mode !== "push")
      return undefined;
    return this.clients.client(connection.cluster, connection.config, { retries: 0 });
  }

  /** The latest samples, each taken once, and the members' replicas as last read. */
  take(): Sampled {
    const sampled = { pods: this.samples, replicas: this.members };
    this.samples = new Map();
    return sampled;
  }

  /** The least time between two samples, and between two changes of one workload's total (ms). */
  get intervalMs(): number {
    return this.options.intervalMs;
  }

  /** When the next sample is due (ms), while FederatedHPAs exist: the controller wakes for it. */
  nextSampleAt(model: FleetModel | undefined): number | undefined {
    if (!model || model.federatedHPAs.length === 0 || !Number.isFinite(this.sampledAt)) return undefined;
    return this.sampledAt + Math.max(this.options.intervalMs, 1000);
  }
}

function addressOf(template: Resource): ObjectAddress {
  return {
    apiVersion: template.apiVersion,
    kind: template.kind,
    name: template.name,
    namespace: template.namespace,
  };
}

// One member's custom and external metrics for a workload, added to what the other members gave.
async function customMetrics(
  client: MemberClient,
  target: {
    readonly namespace: string;
    readonly matchLabels: Readonly<Record<string, string>>;
    readonly metrics: readonly MetricSpec[];
  },
  pods: readonly PodSample[],
  into: { merged: Record<string, PodSample[]>; values: Map<string, number | undefined> },
): Promise<void> {
  const selector = Object.entries(target.matchLabels)
    .map(([k, v]) => `${k}=${v}`)
    .join(",");
  const absent = () => undefined;
  for (const metric of target.metrics) {
    const key = metricKey(metric);
    if (metric.type === "Resource") continue;
    if (metric.type === "Pods") {
      const values = await podMetricValues(client, target.namespace, selector, metric.pods.metric).catch(
        () => new Map<string, number>(),
      );
      into.merged[key] = [...(into.merged[key] ?? []), ...withPodMetric(pods, values)];
      continue;
    }
    const value =
      metric.type === "Object"
        ? await objectMetricValue(
            client,
            target.namespace,
            metric.object.describedObject,
            metric.object.metric,
          ).catch(absent)
        : await externalMetricValue(client, target.namespace, metric.external.metric).catch(absent);
    // A cluster without the value leaves the metric without one: a sum over some clusters would under-count.
    const before = into.values.has(key) ? into.values.get(key) : 0;
    into.values.set(key, before === undefined || value === undefined ? undefined : before + value);
  }
}
