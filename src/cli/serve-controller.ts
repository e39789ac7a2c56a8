import type { Logger } from "pino";
import type { Controller } from "../controller/controller.js";
import type { ReconcileLoop } from "../controller/loop.js";
import type { Reconciler } from "../controller/reconciler.js";
import type { ClusterProber } from "../failover/prober.js";
import type { FleetRepo } from "../git/fleet-repo.js";
import { StatusReader } from "../git/status-reader.js";
import { FleetMetrics, type MetricsSnapshot, type ReconcileResult } from "../metrics/fleet-metrics.js";
import { planRevisions } from "../revisions/plan-revisions.js";
import type { FleetApiSources } from "../server/fleet-api.js";
import { type ControllerServer, startControllerServer } from "../server/http-server.js";
import { dashboardDirectory } from "../server/static-files.js";
import type { ClusterSyncResult } from "../sync/cluster-sync.js";
import type { Syncer } from "../sync/syncer.js";

/** The parts of a running controller the endpoints read from (filled in as they are made). */
export interface ServedParts {
  reconciler?: Reconciler;
  syncer?: Syncer;
  controller?: Controller;
  prober?: ClusterProber;
  loop?: ReconcileLoop;
}

export interface ServeOptions {
  readonly listen: string;
  readonly webhookSecret: string | undefined;
  readonly branch: string;
  readonly statusBranch: string;
  readonly logger: Logger;
}

/**
 * What `gitfleet run` and the demo serve, and the hooks that feed it: the metrics (Git operations
 * counted on the repo, gauges read from the parts at every scrape), status commits, sync results and
 * reconciles — after which live dashboards are told to look again.
 */
export class ControllerEndpoints {
  readonly metrics: FleetMetrics;
  private server: ControllerServer | undefined;

  constructor(
    private readonly repo: FleetRepo,
    private readonly parts: ServedParts,
  ) {
    const metrics = new FleetMetrics(() => metricsSnapshot(parts));
    repo.observer = (operation, result) => metrics.git(operation, result);
    this.metrics = metrics;
  }

  /** For the Reconciler's onCommit. */
  readonly onCommit = ({ message }: { readonly message: string }): void => this.metrics.committed(message);

  /** For the syncer's results (SyncingOptions.onSyncResult). */
  readonly onSyncResult = (result: ClusterSyncResult): void => this.metrics.synced(result);

  /** For the loop's onReconcile. */
  readonly onReconcile = (result: ReconcileResult): void => {
    this.metrics.reconciled(result);
    this.server?.notify();
  };

  /** Serves the dashboard, JSON API, metrics, webhook and health on one port (the parts' loop drives it). */
  async serve(options: ServeOptions): Promise<ControllerServer> {
    const { loop } = this.parts;
    if (!loop) throw new Error("the controller's loop must exist before it is served");
    this.server = await startControllerServer({
      listen: options.listen,
      webhookSecret: options.webhookSecret,
      sourceBranch: options.branch,
      trigger: (reason) => loop.trigger(reason),
      ready: () => loop.ready,
      logger: options.logger,
      metrics: this.metrics,
      api: fleetApi(this.repo, options.branch, options.statusBranch),
      ...dashboard(options.logger),
    });
    return this.server;
  }
}

// The JSON API's sources: the status branch as this repository holds it, and plans one at a time
// (a plan renders the fleet twice; a burst of requests must not run many at once).
function fleetApi(repo: FleetRepo, branch: string, statusBranch: string): FleetApiSources {
  let queue: Promise<unknown> = Promise.resolve();
  return {
    status: new StatusReader(repo, { source: branch, status: statusBranch }),
    plan: (base, head) => {
      const next = queue.then(() => planRevisions({ repo: repo.gitdir, base, head, statusBranch }));
      queue = next.catch(() => undefined);
      return next;
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
function metricsSnapshot(parts: ServedParts): MetricsSnapshot {
  const clusters = new Map<string, { ready: boolean }>();
  for (const [cluster, { health }] of parts.prober?.conditions() ?? new Map<string, never>())
    clusters.set(cluster, { ready: health.ready });
  return {
    ready: parts.loop?.ready ?? false,
    clusters,
    synced: parts.syncer?.latest() ?? new Map(),
    decisions: (parts.reconciler?.snapshot().state.render.decisions ?? []).map((d) => ({
      app: d.app,
      identity: d.identity,
      clusters: d.decision.clusters,
    })),
  };
}
