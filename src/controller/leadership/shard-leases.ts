import { type LeaseTimings, monotonicMs } from "../../kube/leader-election.js";
import { spreadHash32 } from "../../model/hash.js";
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
  /** It gave the shard up to a replica holding fewer (it stopped writing to its members first). */
  readonly released?: (shard: number) => void;
}

/** The reason a replica short of its share asks a holder of more for one of its shards. */
const REBALANCE = "rebalance";

/**
 * The shards' Leases as one process campaigns for them: each shard is a Lease of its own (elected
 * in its own thread, fenced as the leader Lease is), so a shard whose holder dies is taken over once
 * its Lease expires. Who takes which shard balances without a coordinator:
 * - a process first tries only the shard it prefers (by rendezvous hashing of its identity), and a
 *   further free shard only after (held + 1) lease durations since it last gained one — so at a start
 *   every process gets a shard before any gets a second (unless one starts more than a lease later:
 *   the asking below evens that out), while a dead holder's shard is taken by a survivor as soon as
 *   its Lease expires;
 * - a process short of its share (⌊shards ÷ replicas seen⌋) when no shard is free asks the holder of
 *   the most, at most once a lease duration, through an annotation on one of its Leases; that holder,
 *   above its share (⌈shards ÷ replicas seen⌉, the asker counted), stops writing to the shard's members
 *   and releases it, and leaves it alone for two lease durations. So a replica back from a restart,
 *   or a rolling update's new pods, get shards again.
 */
export class ShardLeases {
  private readonly leases: LeaderLease[];
  private readonly held = new Set<number>();
  /** Who holds each shard as its Lease was last read ("" for nobody). */
  private readonly holders: string[];
  private readonly preferred: number;
  private readonly startedMs = monotonicMs();
  private lastGainMs = this.startedMs;
  private lastAskMs = Number.NEGATIVE_INFINITY;
  /** Shards given up, and until when this process does not try them again. */
  private readonly resting = new Map<number, number>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly input: ShardLeasesInput,
    private readonly events: ShardEvents,
  ) {
    this.preferred = preferredShard(input.identity, input.shards);
    this.holders = Array.from({ length: input.shards }, () => "");
    this.leases = Array.from({ length: input.shards }, (_, shard) => this.campaign(shard));
    this.balance();
    this.timer = setInterval(() => this.balance(), Math.max(100, input.timings.retryPeriodMs / 2));
    this.timer.unref();
  }

  /** How many shards there are. */
  get count(): number {
    return this.input.shards;
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

  // One shard's Lease, campaigned for while `balance` lets it.
  private campaign(shard: number): LeaderLease {
    return new LeaderLease(
      { ...this.input, name: shardLeaseName(this.input.lease, shard), gated: true },
      {
        started: () => {
          this.held.add(shard);
          this.holders[shard] = this.input.identity;
          this.lastGainMs = monotonicMs();
          this.balance();
          this.events.gained(shard);
        },
        stopped: (why) => {
          this.held.delete(shard);
          this.events.lost(shard, why);
        },
        relayed: (reason) => {
          const [kind, asker] = reason.split(" ");
          if (kind === REBALANCE && asker) void this.giveUp(shard, asker);
        },
        observed: (holder) => {
          this.holders[shard] = holder;
        },
      },
    );
  }

  // Which free shards this process tries for now, and whether it asks for its share.
  private balance(): void {
    const now = monotonicMs();
    const patient = now - this.lastGainMs >= (this.held.size + 1) * this.input.timings.leaseDurationMs;
    this.leases.forEach((lease, shard) => {
      const resting = (this.resting.get(shard) ?? 0) > now;
      lease.mayAcquire = !this.held.has(shard) && !resting && (shard === this.preferred || patient);
    });
    this.askForShare(now);
  }

  // Short of its share with no shard free (after a lease duration up, so free ones go first): asks
  // the holder of the most for one of its shards, if it holds more than its share.
  private askForShare(now: number): void {
    const { shards, identity, timings } = this.input;
    const lease = timings.leaseDurationMs;
    if (now - this.startedMs < lease || now - this.lastAskMs < lease) return;
    if (this.holders.some((holder) => holder === "")) return;
    const replicas = new Set([...this.holders, identity]);
    if (this.held.size >= Math.floor(shards / replicas.size)) return;
    const most = this.mostHeldByAnother();
    if (most.length <= Math.ceil(shards / replicas.size)) return;
    const shard = most.includes(this.preferred) ? this.preferred : (most[most.length - 1] as number);
    this.lastAskMs = now;
    this.leases[shard]?.relay(`${REBALANCE} ${identity}`);
  }

  // The shards of the other replica that holds the most of them, by the Leases as last read.
  private mostHeldByAnother(): number[] {
    const byHolder = new Map<string, number[]>();
    for (const [shard, holder] of this.holders.entries()) {
      if (holder === this.input.identity) continue;
      byHolder.set(holder, [...(byHolder.get(holder) ?? []), shard]);
    }
    return [...byHolder.values()].sort((a, b) => b.length - a.length)[0] ?? [];
  }

  // Asked for a shard: given up when this process holds more than its share, the asker counted — it
  // stops writing to the shard's members (the fence closes at once), then releases the Lease, and
  // campaigns for the shard again only after resting.
  private async giveUp(shard: number, asker: string): Promise<void> {
    const replicas = new Set([...this.holders, this.input.identity, asker]);
    if (!this.held.has(shard) || this.held.size <= Math.ceil(this.input.shards / replicas.size)) return;
    this.held.delete(shard);
    this.resting.set(shard, monotonicMs() + 2 * this.input.timings.leaseDurationMs);
    const given = this.leases[shard] as LeaderLease;
    this.leases[shard] = this.campaign(shard);
    await given.release();
    this.events.released?.(shard);
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
