import type { Logger } from "pino";
import type { Controller } from "../controller/controller.js";
import type { ReconcileLoop } from "../controller/loop.js";
import type { Reconciler } from "../controller/reconciler.js";
import type { ClusterProber } from "../failover/prober.js";
import type { FleetRepo } from "../git/fleet-repo.js";
import { StatusReader } from "../git/status-reader.js";
import { FleetMetrics, type MetricsSnapshot } from "../metrics/fleet-metrics.js";
import { planRevisions } from "../revisions/plan-revisions.js";
import type { FleetApiSources } from "../server/fleet-api.js";
import { type ControllerServer, startControllerServer } from "../server/http-server.js";
import { dashboardDirectory } from "../server/static-files.js";
import type { Syncer } from "../sync/syncer.js";

/** The parts of a running controller the endpoints read from (filled in as they are made). */
export interface ServedParts {
  reconciler?: Reconciler;
  syncer?: Syncer;
  controller?: Controller;
  prober?: ClusterProber;
  loop?: ReconcileLoop;
}

/** The controller's metrics, reading the parts' state at every scrape; Git operations counted on the repo. */
export function controllerMetrics(repo: FleetRepo, parts: ServedParts): FleetMetrics {
  const metrics = new FleetMetrics(() => metricsSnapshot(parts));
  repo.observer = (operation, result) => metrics.git(operation, result);
  return metrics;
}

export interface ServeOptions {
  readonly listen: string;
  readonly webhookSecret: string | undefined;
  readonly branch: string;
  readonly statusBranch: string;
  readonly loop: ReconcileLoop;
  readonly metrics: FleetMetrics;
  readonly repo: FleetRepo;
  readonly logger: Logger;
}

/** `gitfleet run`'s (and the demo's) HTTP endpoint: dashboard, JSON API, metrics, webhook, health. */
export function serveController(options: ServeOptions): Promise<ControllerServer> {
  const { loop, logger } = options;
  return startControllerServer({
    listen: options.listen,
    webhookSecret: options.webhookSecret,
    sourceBranch: options.branch,
    trigger: (reason) => loop.trigger(reason),
    ready: () => loop.ready,
    logger,
    metrics: options.metrics,
    api: fleetApi(options.repo, options.branch, options.statusBranch),
    ...dashboard(logger),
  });
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
