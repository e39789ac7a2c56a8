import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import { describeIdentity } from "../model/identity.js";
import { EVENT_KINDS, type EventKind } from "../model/trailers.js";
import type { Recomputed } from "../reconcile/recomputed.js";
import type { ServiceView } from "../render/service-discovery/service-views.js";
import type { ClusterSyncResult } from "../sync/sync-result.js";
import { registerAppMetrics } from "./app-metrics.js";

/** What the gauges read at scrape time: the controller's current state. */
export interface MetricsSnapshot {
  /** True once the first reconcile finished. */
  readonly ready: boolean;
  /** Whether this replica leads (always, without leader election). */
  readonly leading: boolean;
  /** Sharded: how many shards there are, and which this replica holds. */
  readonly shards?: { readonly count: number; readonly held: ReadonlySet<number> };
  /** Each probed cluster's condition. */
  readonly clusters: ReadonlyMap<string, { readonly ready: boolean }>;
  /** The last sync result per cluster. */
  readonly synced: ReadonlyMap<string, ClusterSyncResult>;
  /** Outbound deliveries (commit statuses, notification sinks) by sink: waiting, dropped, failed. */
  readonly deliveries?: ReadonlyMap<string, DeliveryStats>;
  /** Each workload's decided replicas per cluster. */
  readonly decisions: readonly {
    readonly app: string;
    readonly identity: string;
    readonly clusters: Readonly<Record<string, number>>;
    /** Replicas the scheduler could place nowhere. */
    readonly unplaced?: number;
  }[];
  /** Each exported service as the current render gives it. */
  readonly services?: readonly ServiceView[];
}

/** One outbound sink's queue: what waits, what was dropped past its bound, what failed after retries. */
export interface DeliveryStats {
  readonly backlog: number;
  readonly dropped: number;
  readonly failed: number;
}

/** What a finished reconcile tells the metrics (the loop's report, or its error). */
export interface ReconcileResult {
  readonly report?: {
    readonly result: string;
    readonly sourceCommit: string;
    readonly valid: boolean;
    readonly attempts: number;
    readonly durationsMs: Readonly<Record<string, number>>;
    readonly recomputed?: Recomputed;
  };
  readonly error?: unknown;
}

/**
 * The controller's Prometheus metrics (docs/observing.md, "Metrics"): counters fed by the loop, the writer, Git
 * and the syncer as things happen; gauges read from the controller's state at every scrape.
 */
export class FleetMetrics {
  readonly registry = new Registry();
  private readonly reconcileSeconds: Histogram<"stage">;
  private readonly reconciles: Counter<"result">;
  private readonly recomputed: Histogram<"unit">;
  private readonly sourceCommits: Counter;
  private readonly statusCommits: Counter<"kind">;
  private readonly failovers: Counter;
  private readonly scaleEvents: Counter;
  private readonly syncOperations: Counter<"cluster" | "result">;
  private readonly gitOperations: Counter<"operation" | "result">;
  private readonly publishRetries: Counter;
  private lastSource: string | undefined;

  constructor(snapshot: () => MetricsSnapshot) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.reconcileSeconds = new Histogram({
      name: "gitfleet_reconcile_duration_seconds",
      help: "Time a reconcile spends per stage (fetch, restore, read, reconcile, write, publish) and in all (total).",
      labelNames: ["stage"],
      buckets: [0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers,
    });
    this.recomputed = new Histogram({
      name: "gitfleet_reconcile_recomputed",
      help: "What a reconcile that rendered computed again, by unit: fleet repo files parsed anew, apps rendered again, (app, cluster) pairs rendered again.",
      labelNames: ["unit"],
      buckets: [0, 1, 10, 100, 1000, 10_000, 100_000, 1_000_000],
      registers,
    });
    this.reconciles = new Counter({
      name: "gitfleet_reconciles_total",
      help: "Reconciles by result: committed, unchanged, up-to-date or error.",
      labelNames: ["result"],
      registers,
    });
    this.sourceCommits = new Counter({
      name: "gitfleet_source_commits_total",
      help: "Source commits reconciled (each new tip of the source branch once).",
      registers,
    });
    this.statusCommits = new Counter({
      name: "gitfleet_status_commits_total",
      help: `Status commits published, by kind: ${EVENT_KINDS.join(", ")}.`,
      labelNames: ["kind"],
      registers,
    });
    this.failovers = new Counter({
      name: "gitfleet_failovers_total",
      help: "Failover commits: replicas moved off a cluster that is not Ready or cannot run them.",
      registers,
    });
    this.scaleEvents = new Counter({
      name: "gitfleet_scale_events_total",
      help: "Autoscale commits: a FederatedHPA, CronScale or ScaleDownRequest changed a total or a division.",
      registers,
    });
    this.syncOperations = new Counter({
      name: "gitfleet_sync_operations_total",
      help: "Objects handled by syncs, by cluster and result (created, configured, unchanged, drifted, held, conflict, failed, pruned, prune-failed).",
      labelNames: ["cluster", "result"],
      registers,
    });
    this.gitOperations = new Counter({
      name: "gitfleet_git_operations_total",
      help: "Fetches and pushes of the fleet repo by result: ok, error, or rejected (the status branch moved; retried).",
      labelNames: ["operation", "result"],
      registers,
    });
    this.publishRetries = new Counter({
      name: "gitfleet_status_publish_retries_total",
      help: "Reconcile attempts regenerated because another writer moved the status branch.",
      registers,
    });
    this.gauges(snapshot, registers);
    registerAppMetrics(registers, () => snapshot().synced);
  }

  /** A finished reconcile. */
  reconciled({ report, error }: ReconcileResult): void {
    if (!report) {
      this.reconciles.inc({ result: error ? "error" : "unknown" });
      return;
    }
    this.reconciles.inc({ result: report.result });
    let total = 0;
    for (const [stage, ms] of Object.entries(report.durationsMs)) {
      this.reconcileSeconds.observe({ stage }, ms / 1000);
      total += ms;
    }
    this.reconcileSeconds.observe({ stage: "total" }, total / 1000);
    if (report.recomputed)
      for (const [unit, count] of Object.entries(report.recomputed)) this.recomputed.observe({ unit }, count);
    if (report.attempts > 1) this.publishRetries.inc(report.attempts - 1);
    if (report.sourceCommit !== this.lastSource) {
      this.lastSource = report.sourceCommit;
      this.sourceCommits.inc();
    }
  }

  /** A status commit published, by the kinds of event it records (the first names it). */
  committed(kinds: readonly EventKind[]): void {
    const [kind = "reconcile"] = kinds;
    this.statusCommits.inc({ kind });
    if (kind === "failover") this.failovers.inc();
    if (kinds.includes("scale")) this.scaleEvents.inc();
  }

  /** One cluster's sync. */
  synced(result: ClusterSyncResult): void {
    const { cluster } = result;
    if (!result.reachable) {
      this.syncOperations.inc({ cluster, result: "unreachable" });
      return;
    }
    for (const object of result.objects) this.syncOperations.inc({ cluster, result: object.action });
    for (const pruned of result.pruned)
      this.syncOperations.inc({ cluster, result: pruned.outcome === "failed" ? "prune-failed" : "pruned" });
  }

  /** A fetch or push of the fleet repo. */
  git(operation: "fetch" | "push", result: "ok" | "error" | "rejected"): void {
    this.gitOperations.inc({ operation, result });
  }

  /** The Prometheus text exposition. */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  // Gauges of the current state: recomputed from the snapshot at every scrape.
  private gauges(snapshot: () => MetricsSnapshot, registers: Registry[]): void {
    new Gauge({
      name: "gitfleet_ready",
      help: "1 once the first reconcile finished (what /readyz answers).",
      registers,
      collect() {
        this.set(snapshot().ready ? 1 : 0);
      },
    });
    new Gauge({
      name: "gitfleet_leader",
      help: "1 while this replica holds the leader Lease (always without --leader-elect), 0 standing by.",
      registers,
      collect() {
        this.set(snapshot().leading ? 1 : 0);
      },
    });
    new Gauge({
      name: "gitfleet_shard_held",
      help: "With --shards, per shard: 1 while this replica holds its Lease (probes and syncs its members), 0 otherwise.",
      labelNames: ["shard"],
      registers,
      collect() {
        this.reset();
        const shards = snapshot().shards;
        for (let shard = 0; shard < (shards?.count ?? 0); shard++)
          this.set({ shard: String(shard) }, shards?.held.has(shard) ? 1 : 0);
      },
    });
    new Gauge({
      name: "gitfleet_cluster_ready",
      help: "Per probed cluster: 1 Ready, 0 NotReady (the probes' condition).",
      labelNames: ["cluster"],
      registers,
      collect() {
        this.reset();
        for (const [cluster, { ready }] of snapshot().clusters) this.set({ cluster }, ready ? 1 : 0);
      },
    });
    new Gauge({
      name: "gitfleet_cluster_reachable",
      help: "Per synced cluster: 1 when its last sync reached it, 0 when it did not.",
      labelNames: ["cluster"],
      registers,
      collect() {
        this.reset();
        for (const [cluster, result] of snapshot().synced) this.set({ cluster }, result.reachable ? 1 : 0);
      },
    });
    new Gauge({
      name: "gitfleet_delivery_backlog",
      help: "Per outbound sink (forge commit statuses, notification sinks): deliveries waiting, bounded; a sink that is down grows it, never the loop's time.",
      labelNames: ["sink"],
      registers,
      collect() {
        this.reset();
        for (const [sink, stats] of snapshot().deliveries ?? []) this.set({ sink }, stats.backlog);
      },
    });
    new Counter({
      name: "gitfleet_delivery_dropped_total",
      help: "Per outbound sink: deliveries dropped because its backlog was full.",
      labelNames: ["sink"],
      registers,
      collect() {
        this.reset();
        for (const [sink, stats] of snapshot().deliveries ?? []) this.inc({ sink }, stats.dropped);
      },
    });
    new Counter({
      name: "gitfleet_delivery_failures_total",
      help: "Per outbound sink: deliveries given up after their retries.",
      labelNames: ["sink"],
      registers,
      collect() {
        this.reset();
        for (const [sink, stats] of snapshot().deliveries ?? []) this.inc({ sink }, stats.failed);
      },
    });
    new Gauge({
      name: "gitfleet_app_desired_replicas",
      help: "Replicas gitfleet decided for a workload in a cluster.",
      labelNames: ["app", "workload", "cluster"],
      registers,
      collect() {
        this.reset();
        for (const decision of snapshot().decisions)
          for (const [cluster, replicas] of Object.entries(decision.clusters))
            this.set({ app: decision.app, workload: describeIdentity(decision.identity), cluster }, replicas);
      },
    });
    new Gauge({
      name: "gitfleet_app_unplaced_replicas",
      help: "Replicas of a workload the scheduler could place in no cluster (capacity, limits or quota leave no room).",
      labelNames: ["app", "workload"],
      registers,
      collect() {
        this.reset();
        for (const decision of snapshot().decisions)
          this.set(
            { app: decision.app, workload: describeIdentity(decision.identity) },
            decision.unplaced ?? 0,
          );
      },
    });
    new Gauge({
      name: "gitfleet_service_endpoints",
      help: "Per exported service and producing cluster: 1 while consumers' endpoints or DNS records send traffic there, 0 while withdrawn.",
      labelNames: ["service", "cluster"],
      registers,
      collect() {
        this.reset();
        for (const view of snapshot().services ?? []) {
          const serving = new Set(view.record?.clusters ?? view.endpoints ?? view.exportedFrom);
          for (const cluster of view.exportedFrom)
            this.set({ service: view.service, cluster }, serving.has(cluster) ? 1 : 0);
        }
      },
    });
    new Gauge({
      name: "gitfleet_app_ready_replicas",
      help: "Ready replicas of a workload in a cluster, as its last sync read them.",
      labelNames: ["app", "workload", "cluster"],
      registers,
      collect() {
        this.reset();
        for (const [cluster, result] of snapshot().synced)
          for (const object of result.objects)
            if (object.desiredReplicas !== undefined)
              this.set(
                { app: object.app, workload: describeIdentity(object.identity), cluster },
                object.readyReplicas ?? 0,
              );
      },
    });
  }
}
