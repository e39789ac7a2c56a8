import type { Logger } from "pino";
import { centralized, targetOf, templateOf } from "../autoscale/autoscale-step.js";
import {
  type AutoscalingStatus,
  autoscalingRound,
  type RoundOutcome,
} from "../autoscale/autoscaling-round.js";
import type { PodSample } from "../autoscale/hpa-algorithm.js";
import type { MemberConnection } from "../kube/connections.js";
import type { MemberClient, MemberClientOptions, ObjectAddress } from "../kube/member-client.js";
import { MemberClientPool } from "../kube/member-clients.js";
import { podSamples, SAMPLED_RESOURCES } from "../kube/pod-samples.js";
import { indexObjectInterpreters } from "../model/interpreter-index.js";
import { asMap, valueAt } from "../model/json.js";
import type { ObservedReplicas } from "../model/observed-state.js";
import type { FleetModel, Resource } from "../model/types.js";
import type { ReconcileState } from "../reconcile/reconcile-step.js";
import { autoscalingFiles, readAutoscalingStatus } from "../status/autoscaling-files.js";
import type { Attachment } from "./reconciler.js";

export interface AutoscalerOptions {
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
 * The controller's autoscaling edge: samples the pods of every centralized FederatedHPA's target in
 * each member it runs in (metrics.k8s.io and the pods' requests), runs the pure round over them and
 * keeps its outcome — the totals and distributions the render takes in, and the status/autoscaling/
 * files the next status commit carries. Its state starts from those files, so a restarted controller
 * continues with the same totals, cron history and rate-limit events.
 */
export class Autoscaler {
  private status: AutoscalingStatus | undefined;
  private samples = new Map<string, Record<string, PodSample[]>>();
  /** Distributed targets' replicas per cluster, as last read from the members. */
  private members = new Map<string, Map<string, ObservedReplicas>>();
  private sampledAt = Number.NEGATIVE_INFINITY;
  private last: RoundOutcome | undefined;
  /** Lines of rounds whose files no status commit carried yet. */
  private notes: string[] = [];
  private readonly clients: MemberClientPool;

  constructor(private readonly options: AutoscalerOptions) {
    this.clients = options.clients ?? new MemberClientPool(options.client);
  }

  /** Samples the members when the interval allows: every centralized target, in every cluster it runs in. */
  async sample(state: ReconcileState, now: number): Promise<void> {
    const model = state.model;
    if (!model || model.federatedHPAs.length === 0 || now - this.sampledAt < this.options.intervalMs) return;
    this.sampledAt = now;
    const connections = new Map((await this.options.connect(model)).map((c) => [c.cluster, c]));
    const samples = new Map<string, Record<string, PodSample[]>>();
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
          identity,
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
  private async sampleWorkload(
    model: FleetModel,
    identity: string,
    clusters: readonly string[],
    connections: ReadonlyMap<string, MemberConnection>,
  ): Promise<Record<string, PodSample[]> | undefined> {
    const [, , namespace = "", name = ""] = identity.split("/");
    const template = templateOf(model, identity);
    const matchLabels = asMap(asMap(asMap(template?.object.spec).selector).matchLabels) as Record<
      string,
      string
    >;
    if (Object.keys(matchLabels).length === 0) return undefined;
    const merged: Record<string, PodSample[]> = Object.fromEntries(SAMPLED_RESOURCES.map((r) => [r, []]));
    try {
      for (const cluster of clusters) {
        const client = this.client(connections.get(cluster));
        if (!client) return undefined;
        const found = await podSamples(client, namespace, matchLabels);
        for (const [resource, list] of Object.entries(found)) merged[resource]?.push(...list);
      }
    } catch (error) {
      this.options.logger.warn(
        { workload: `${namespace}/${name}`, err: error },
        "pods not sampled; total kept",
      );
      return undefined;
    }
    return merged;
  }

  private client(connection: MemberConnection | undefined): MemberClient | undefined {
    if (!connection || !("config" in connection) || !connection.config || connection.mode !== "push")
      return undefined;
    return this.clients.client(connection.cluster, connection.config, { retries: 0 });
  }

  /**
   * One round over the latest samples and what the members run; its outcome is kept for the render
   * and the next status commit. The first round after a start reads the status branch's files.
   */
  round(
    state: ReconcileState,
    syncFiles: ReadonlyMap<string, string>,
    members: ReadonlyMap<string, ReadonlyMap<string, ObservedReplicas>>,
    now: number,
  ): RoundOutcome | undefined {
    const model = state.model;
    const autoscalers =
      model && model.federatedHPAs.length + model.cronScales.length + model.scaleDownRequests.length;
    if (!model || !autoscalers) {
      this.last = undefined;
      return undefined;
    }
    this.status ??= readAutoscalingStatus(model, syncFiles, now);
    // What the autoscaler read of distributed workloads is fresher than the last sync's reports.
    const seen = new Map(members);
    for (const [identity, read] of this.members) seen.set(identity, read);
    const outcome = autoscalingRound({
      model,
      decisions: state.render.decisions,
      samples: this.samples,
      members: seen,
      previous: this.status,
      now,
      intervalMs: this.options.intervalMs,
    });
    // Samples are used once: the next change waits for pods sampled after this one.
    this.samples = new Map();
    this.status = outcome.status;
    this.last = outcome;
    this.notes.push(...outcome.notes);
    for (const note of outcome.notes) this.options.logger.info({ autoscaling: note }, "autoscaling");
    return outcome;
  }

  /** What the next status commit carries: the files that changed and the lines saying why. */
  attachment(model: FleetModel | undefined, existing: ReadonlyMap<string, string>): Attachment {
    const files = new Map<string, string | null>();
    for (const [path, text] of this.files(model, existing.keys()))
      if ((existing.get(path) ?? null) !== text) files.set(path, text);
    return { files, notes: [...this.notes], committed: () => (this.notes = []) };
  }

  /** When the next sample is due (ms), while FederatedHPAs exist: the controller wakes for it. */
  nextSampleAt(model: FleetModel | undefined): number | undefined {
    if (!model || model.federatedHPAs.length === 0 || !Number.isFinite(this.sampledAt)) return undefined;
    return this.sampledAt + Math.max(this.options.intervalMs, 1000);
  }

  /** The last round's outcome. */
  latest(): RoundOutcome | undefined {
    return this.last;
  }

  /** The status/autoscaling/ files as of the last round (null removes one whose autoscaler is gone). */
  files(model: FleetModel | undefined, existing: Iterable<string>): Map<string, string | null> {
    if (!model || !this.status) return new Map();
    return autoscalingFiles(model, this.status, existing);
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
