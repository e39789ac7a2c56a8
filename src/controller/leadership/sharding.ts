import type { ShardBranches } from "../../git/shard-branches.js";
import { assignShards, clustersOfShard } from "../../model/shard-assignment.js";
import type { FleetModel } from "../../model/types.js";
import { FencedError } from "./leader-lease.js";

/** How a replica of a sharded controller stands: whether it leads, which shards it holds, its fences. */
export interface ShardingOptions {
  readonly shards: number;
  /** This replica's Lease identity: it signs the shard reports it writes. */
  readonly identity: string;
  /** Whether it holds the leader Lease (renders and writes the status branch). */
  readonly leading: () => boolean;
  /** The shards whose Leases it holds now. */
  readonly holding: () => ReadonlySet<number>;
  /** Throws unless it holds the shard (before every write to the shard's members and its branch). */
  readonly fence: (shard: number) => void;
  /** Asks the leader for a round (a shard report landed). */
  readonly relay: (reason: string) => void;
  readonly branches: ShardBranches;
}

/**
 * Which members are this replica's to probe and sync: push-mode clusters by their shard (consistent
 * hashing over the fleet's push-mode clusters, which every replica computes alike), pull-mode ones —
 * reached through their agents' reports — the leader's.
 */
export class Sharding {
  private assigned: { model: FleetModel; shards: Map<string, number> } | undefined;

  constructor(readonly options: ShardingOptions) {}

  /** The shard of each push-mode cluster of the fleet. */
  assignment(model: FleetModel): ReadonlyMap<string, number> {
    if (this.assigned?.model !== model) {
      const push = model.clusters
        .filter((c) => c.spec.connection?.mode !== "pull")
        .map((c) => c.metadata.name);
      this.assigned = { model, shards: assignShards(push, this.options.shards) };
    }
    return this.assigned.shards;
  }

  /** The clusters of one shard. */
  clustersOf(model: FleetModel, shard: number): Set<string> {
    return new Set(clustersOfShard(this.assignment(model), shard));
  }

  /** Whether this replica probes and syncs the cluster now. */
  inScope(model: FleetModel | undefined, cluster: string): boolean {
    if (!model) return false;
    const shard = this.assignment(model).get(cluster);
    if (shard === undefined) return this.options.leading();
    return this.options.holding().has(shard);
  }

  /** Throws a FencedError unless this replica may write to the cluster now. */
  fence(model: FleetModel | undefined, cluster: string): void {
    const shard = model ? this.assignment(model).get(cluster) : undefined;
    if (shard !== undefined) this.options.fence(shard);
    else if (!this.options.leading())
      throw new FencedError(`${this.options.identity} holds no shard of ${cluster}: it writes nothing there`);
  }

  /** Which members this replica has now, as a key: a change (a shard gained or given up) asks for a sync. */
  scopeKey(): string {
    return `${this.options.leading() ? "leading" : "holding"} ${[...this.options.holding()].sort((a, b) => a - b).join(",")}`;
  }

  /** Every shard's number. */
  all(): number[] {
    return Array.from({ length: this.options.shards }, (_, shard) => shard);
  }
}
