import type { Logger } from "pino";
import { buildSettings } from "../builds/build-settings.js";
import type { ControllerHooks } from "../controller/build-controller.js";
import type { ReconcileLoop } from "../controller/loop.js";
import type { Reconciler } from "../controller/reconciler.js";
import type { FleetRepo } from "../git/fleet-repo.js";
import { StatusReader } from "../git/status-reader.js";
import type { ClusterProber } from "../kube/prober.js";
import type { Syncer } from "../kube/syncer.js";
import {
  type DeliveryStats,
  FleetMetrics,
  type MetricsSnapshot,
  type ReconcileResult,
} from "../metrics/fleet-metrics.js";
import { serviceViews } from "../render/service-discovery/service-views.js";
import { revisionVerdict } from "../revisions/allowed-revision.js";
import { RevisionError } from "../revisions/plan-revisions.js";
import { AccessGate, type AccessGateOptions } from "../server/access-gate.js";
import type { FleetApiSources } from "../server/fleet-api.js";
import { type ControllerServer, startControllerServer } from "../server/http-server.js";
import { PlanQueue, type PlanQueueOptions } from "../server/plan-queue.js";
import { dashboardDirectory } from "../server/static-files.js";

/** The parts of a running controller the endpoints read from. */
export interface ServedParts {
  readonly reconciler: Reconciler;
  readonly syncer?: Syncer;
  readonly prober?: ClusterProber;
  readonly loop: ReconcileLoop;
  /** One replica of several (--leader-elect): rounds, readiness and its reason come from the election. */
  readonly replica?: Replica;
}

/** What a replica of a highly available controller answers in place of its loop. */
export interface Replica {
  trigger(reason: string): void;
  readonly ready: boolean;
  readonly notReadyBecause: string | undefined;
  readonly isLeader: boolean;
  /** Sharded: how many shards there are, and which this replica holds. */
  readonly shards?: { readonly count: number; readonly held: ReadonlySet<number> } | undefined;
}

export interface ServeOptions {
  readonly listen: string;
  readonly webhookSecret: string | undefined;
  readonly branch: string;
  readonly statusBranch: string;
  readonly logger: Logger;
  /** Branch-name patterns /api/plan may render besides the source branch's history (--plan-revisions). */
  readonly planRevisions?: readonly string[];
  /** Bounds on plans over HTTP. */
  readonly planQueue?: PlanQueueOptions;
  /** The secret digest key plans render Secrets' digests with. */
  readonly secretDigestKey?: Uint8Array;
  /** Host names the endpoint answers to (DNS rebinding); default: loopback names when it listens on loopback. */
  readonly allowedHosts?: readonly string[];
  /** Who may read what (--api-tokens-file, --anonymous-read); without it the endpoint is open. */
  readonly access?: Omit<AccessGateOptions, "model">;
}

/**
 * What `gitfleet run` and the demo serve, and the hooks that feed it: the metrics (Git operations
 * counted on the repo, gauges read from the parts at every scrape), status commits, sync results and
 * reconciles — after which live dashboards are told to look again.
 */
export class ControllerEndpoints {
  readonly metrics: FleetMetrics;
  /** Outbound sinks whose queues the metrics report (commit statuses, notifications), each by sink name. */
  readonly deliveries: (() => ReadonlyMap<string, DeliveryStats>)[] = [];
  private server: ControllerServer | undefined;
  /** What the gauges read at a scrape: the controller once it is served. */
  private parts: ServedParts | undefined;

  constructor(private readonly repo: FleetRepo) {
    const metrics = new FleetMetrics(() => ({
      ...metricsSnapshot(this.parts),
      deliveries: new Map(
        this.deliveries.flatMap((source) =>
          [...source()].map(
            ([sink, s]) => [sink, { backlog: s.backlog, dropped: s.dropped, failed: s.failed }] as const,
          ),
        ),
      ),
    }));
    repo.observer = (operation, result) => metrics.git(operation, result);
    this.metrics = metrics;
  }

  /** What the controller tells the endpoints: status commits, sync results, rounds (after which dashboards look again). */
  readonly hooks: ControllerHooks = {
    onCommit: ({ kinds }) => this.metrics.committed(kinds),
    onSyncResult: (result) => this.metrics.synced(result),
    onReconcile: (result: ReconcileResult) => {
      this.metrics.reconciled(result);
      this.server?.notify();
    },
  };

  /** Serves the dashboard, JSON API, metrics, webhook and health on one port for a built controller. */
  async serve(options: ServeOptions, parts: ServedParts): Promise<ControllerServer> {
    const { loop, replica } = parts;
    this.parts = parts;
    this.server = await startControllerServer({
      listen: options.listen,
      webhookSecret: options.webhookSecret,
      sourceBranch: options.branch,
      trigger: (reason) => (replica ? replica.trigger(reason) : loop.trigger(reason)),
      ready: () => replica?.ready ?? loop.ready,
      notReadyBecause: () =>
        replica
          ? replica.notReadyBecause
          : loop.problem?.kind === "terminal"
            ? loop.problem.message
            : undefined,
      logger: options.logger,
      metrics: this.metrics,
      api: fleetApi(this.repo, options),
      ...(options.allowedHosts ? { allowedHosts: options.allowedHosts } : {}),
      ...(options.access
        ? {
            access: new AccessGate({
              ...options.access,
              model: () => parts.reconciler.snapshot().state.model,
            }),
          }
        : {}),
      ...dashboard(options.logger),
    });
    return this.server;
  }
}

// The JSON API's sources: the status branch as this repository holds it, and plans — of revisions
// the operator allows only — one at a time in worker threads behind a bounded queue (a plan renders
// the fleet twice; a burst of requests must neither run many at once nor wait without end).
function fleetApi(repo: FleetRepo, options: ServeOptions): FleetApiSources {
  const queue = new PlanQueue({
    ...options.planQueue,
    onEvent: (event) => options.logger.info(`plan ${event}`),
  });
  const policy = { sourceBranch: options.branch, patterns: options.planRevisions ?? [] };
  return {
    status: new StatusReader(repo, { source: options.branch, status: options.statusBranch }),
    plan: async (base, head, signal) => {
      for (const revision of [base, head]) {
        const verdict = await revisionVerdict(repo.gitdir, revision, policy);
        if (verdict === "unknown")
          throw new RevisionError(`no branch, tag or commit ${JSON.stringify(revision)}`);
        if (verdict === "refused")
          return {
            refused: `the revision ${JSON.stringify(revision)} may not be planned here: plans run for the source branch's history${policy.patterns.length > 0 ? ` and branches matching ${policy.patterns.join(", ")}` : ""} (--plan-revisions)`,
          };
      }
      options.logger.info({ base, head }, "plan requested");
      return queue.plan(
        {
          repo: repo.gitdir,
          base,
          head,
          statusBranch: options.statusBranch,
          ...(options.secretDigestKey ? { secretDigestKey: options.secretDigestKey } : {}),
          build: buildSettings(),
        },
        signal,
      );
    },
  };
}

function dashboard(logger: Logger): { dashboardDir?: string } {
  const dir = dashboardDirectory();
  if (!dir)
    logger.warn("the dashboard was not built (npm run build): / serves nothing, the API still answers");
  return dir ? { dashboardDir: dir } : {};
}

// What the metrics' gauges read at a scrape: the probes, the last syncs, the current decisions.
function metricsSnapshot(parts: ServedParts | undefined): MetricsSnapshot {
  const clusters = new Map<string, { ready: boolean }>();
  for (const [cluster, { health }] of parts?.prober?.conditions() ?? new Map<string, never>())
    clusters.set(cluster, { ready: health.ready });
  return {
    ready: (parts?.replica ? parts.replica.ready : parts?.loop.ready) ?? false,
    leading: parts?.replica ? parts.replica.isLeader : parts !== undefined,
    ...(parts?.replica?.shards ? { shards: parts.replica.shards } : {}),
    clusters,
    synced: parts?.syncer?.latest() ?? new Map(),
    decisions: (parts?.reconciler.snapshot().state.render.decisions ?? []).map((d) => ({
      app: d.app,
      identity: d.identity,
      clusters: d.decision.clusters,
      unplaced: d.decision.unschedulable,
    })),
    services: serviceViews(parts?.reconciler.snapshot().state.render.objects ?? []),
  };
}
