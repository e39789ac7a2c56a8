import { type LeaseTimings, monotonicMs } from "../kube/leader-election.js";
import { spreadHash32 } from "../model/hash.js";
import { LeaderLease } from "./leader-lease.js";

/** The Lease of one shard: the leader Lease's name with the shard's number. */
export function shardLeaseName(lease: string, shard: number): string {
  return `${lease}-shard-${shard}`;
}

export interface ShardLeasesInput {
  readonly kubeconfig: string | undefined;
  readonly namespace: string;
  /** The leader Lease's name; shard n's is `<lease>-shard-<n>`. */
  readonly lease: string;
  readonly identity: string;
  readonly timings: LeaseTimings;
  readonly logLevel: string;
  readonly shards: number;
}

export interface ShardEvents {
  /** This process holds the shard now: its members are this process's to probe and sync. */
  readonly gained: (shard: number) => void;
  /** It no longer does (a renewal missed its deadline): it has stopped writing to the shard's members. */
  readonly lost: (shard: number, why: string) => void;
}

/**
 * The shards' Leases as one process campaigns for them: each shard is a Lease of its own (elected
 * in its own thread, fenced as the leader Lease is), so a shard whose holder dies is taken over once
 * its Lease expires. Who takes which shard balances without coordination: a process first tries only
 * the shard it prefers (by rendezvous hashing of its identity); a shard beyond those it holds only
 * after (held + 1) lease durations since it last gained one — so at a start every process gets a shard
 * before any gets a second, while a dead holder's shard is taken by a survivor within its Lease.
 */
export class ShardLeases {
  private readonly leases: LeaderLease[];
  private readonly held = new Set<number>();
  private readonly preferred: number;
  private lastGainMs = monotonicMs();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly input: ShardLeasesInput,
    events: ShardEvents,
  ) {
    this.preferred = preferredShard(input.identity, input.shards);
    this.leases = Array.from(
      { length: input.shards },
      (_, shard) =>
        new LeaderLease(
          { ...input, name: shardLeaseName(input.lease, shard), gated: true },
          {
            started: () => {
              this.held.add(shard);
              this.lastGainMs = monotonicMs();
              this.balance();
              events.gained(shard);
            },
            stopped: (why) => {
              this.held.delete(shard);
              events.lost(shard, why);
            },
            relayed: () => undefined,
          },
        ),
    );
    this.balance();
    this.timer = setInterval(() => this.balance(), Math.max(100, input.timings.retryPeriodMs / 2));
    this.timer.unref();
  }

  /** The shards this process holds now (each within its renew deadline). */
  holding(): Set<number> {
    return new Set([...this.held].filter((shard) => this.leases[shard]?.leading));
  }

  /** Throws a FencedError unless this process holds the shard: called before every write to its members. */
  fence(shard: number): void {
    const lease = this.leases[shard];
    if (!lease) throw new RangeError(`no shard ${shard}`);
    lease.fence();
  }

  /** Gives every shard up (a graceful stop), so survivors take them at once. */
  async release(): Promise<void> {
    clearInterval(this.timer);
    await Promise.all(this.leases.map((lease) => lease.release()));
  }

  // Which free shards this process tries for now (see the class comment).
  private balance(): void {
    const patient =
      monotonicMs() - this.lastGainMs >= (this.held.size + 1) * this.input.timings.leaseDurationMs;
    this.leases.forEach((lease, shard) => {
      lease.mayAcquire = !this.held.has(shard) && (shard === this.preferred || patient);
    });
  }
}

/** The shard a process tries first: the highest of hash(identity, shard) — spread evenly over processes. */
export function preferredShard(identity: string, shards: number): number {
  let best = 0;
  let bestHash = -1;
  for (let shard = 0; shard < shards; shard++) {
    const hash = spreadHash32(`${identity}/${shard}`);
    if (hash > bestHash) {
      best = shard;
      bestHash = hash;
    }
  }
  return best;
}
