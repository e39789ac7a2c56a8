import type { Logger } from "pino";
import { type ClusterHealth, clusterHealthSettings, healthTaints } from "../../failover/cluster-health.js";
import type { CommitAuthor } from "../../git/status-writer.js";
import type { ClusterCondition } from "../../kube/prober.js";
import type { FleetModel } from "../../model/types.js";
import type { ReconcileState } from "../../reconcile/reconcile-step.js";
import { shardReportText } from "../../status/shard-report.js";
import type { ClusterSyncResult } from "../../sync/sync-result.js";
import type { Sharding } from "./sharding.js";

/**
 * The shards' reports as one replica of a sharded controller sees them: what the other shards'
 * holders report of their members on their branches (read every round), merged with this replica's
 * own sync and probes for the members it syncs; and the reports of the shards it holds, published on
 * their branches so that the leader — and a next holder — finds them.
 */
export class ShardReports {
  private remote: {
    readonly results: ReadonlyMap<string, ClusterSyncResult>;
    readonly conditions: ReadonlyMap<string, ClusterHealth>;
  } = { results: new Map(), conditions: new Map() };
  /** The report text last published per shard this replica holds. */
  private readonly texts = new Map<number, string>();

  constructor(
    readonly sharding: Sharding,
    private readonly logger: Logger,
  ) {}

  /** Every shard's last report: the others' members' results and conditions — and for a shard just taken over, what its last holder saw. */
  async read(model: FleetModel): Promise<void> {
    const { sharding } = this;
    const reports = await sharding.options.branches.reports(sharding.all(), (shard) =>
      sharding.clustersOf(model, shard),
    );
    const results = new Map<string, ClusterSyncResult>();
    const conditions = new Map<string, ClusterHealth>();
    for (const report of reports.values()) {
      for (const [cluster, result] of report.results) results.set(cluster, result);
      for (const [cluster, health] of report.conditions) conditions.set(cluster, health);
    }
    this.remote = { results, conditions };
  }

  /** The members' results the other shards report (the sync's view of members it does not sync). */
  get elsewhere(): ReadonlyMap<string, ClusterSyncResult> {
    return this.remote.results;
  }

  /** Every member's last sync: this replica's own for the members it syncs, the shards' reports for the rest. */
  results(
    local: ReadonlyMap<string, ClusterSyncResult>,
    model: FleetModel | undefined,
  ): ReadonlyMap<string, ClusterSyncResult> {
    const merged = new Map(this.remote.results);
    for (const [cluster, result] of local)
      if (this.sharding.inScope(model, cluster)) merged.set(cluster, result);
    return merged;
  }

  /** Every member's condition: this replica's probes for its own members, the shards' reports for the rest. */
  conditions(
    probed: Map<string, ClusterCondition>,
    model: FleetModel | undefined,
    now: number,
  ): Map<string, ClusterCondition> {
    const settings = clusterHealthSettings(model?.fleet?.spec);
    for (const [cluster, health] of this.remote.conditions)
      if (!this.sharding.inScope(model, cluster))
        probed.set(cluster, { health, taints: healthTaints(health, now, settings) });
    return probed;
  }

  /**
   * Each held shard's members as this replica sees them, committed to the shard's branch when it
   * changed (fenced on the shard's Lease); the leader is asked for a round when one landed.
   */
  async publish(
    state: ReconcileState,
    local: ReadonlyMap<string, ClusterSyncResult>,
    probed: ReadonlyMap<string, ClusterCondition>,
    author: CommitAuthor,
  ): Promise<void> {
    const { model, renderedCommit } = state;
    if (!model || !renderedCommit) return;
    const { options } = this.sharding;
    for (const shard of options.holding()) {
      const clusters = this.sharding.clustersOf(model, shard);
      const pick = <T>(map: ReadonlyMap<string, T>) => new Map([...map].filter(([c]) => clusters.has(c)));
      const text = shardReportText({
        shard,
        holder: options.identity,
        results: pick(local),
        conditions: new Map([...pick(probed)].map(([c, condition]) => [c, condition.health])),
      });
      if (this.texts.get(shard) === text) continue;
      const outcome = await options.branches
        .publish({
          shard,
          text,
          sourceCommit: renderedCommit,
          holder: options.identity,
          author,
          message: `shard ${shard}: ${[...clusters].sort().join(", ") || "no members"}`,
          fence: () => options.fence(shard),
        })
        .catch((error: unknown) => {
          this.logger.warn({ shard, error: String(error) }, "shard report not published");
          return "moved" as const;
        });
      if (outcome === "moved") continue;
      this.texts.set(shard, text);
      if (outcome === "committed" && !options.leading()) options.relay(`shard ${shard}`);
    }
  }
}
