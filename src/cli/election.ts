import { KubeConfig } from "@kubernetes/client-node";
import type { Logger } from "pino";
import type { BuiltController } from "../controller/build-controller.js";
import { LeaderLease } from "../controller/leadership/leader-lease.js";
import { ShardLeases } from "../controller/leadership/shard-leases.js";
import { Sharding } from "../controller/leadership/sharding.js";
import type { ShardBranches } from "../git/shard-branches.js";
import { type LeaseTimings, timingsProblem } from "../kube/leader-election.js";
import { parseDuration } from "../model/duration.js";
import { DEFAULT_FOLLOW_INTERVAL } from "./defaults.js";
import { CliError, ExitCode, type ExitCodeValue } from "./exit-codes.js";

/** `gitfleet run --leader-elect` and its settings. */
export interface ElectionFlags {
  readonly leaderElect?: boolean;
  readonly leaderElectNamespace: string;
  readonly leaderElectLease: string;
  readonly leaderElectLeaseDuration: string;
  readonly leaderElectRenewDeadline: string;
  readonly leaderElectRetryPeriod: string;
  /** How often a standby brings its state up to the status branch's tip (default FOLLOW_INTERVAL). */
  readonly standbyFollowInterval?: string;
  readonly managementKubeconfig?: string;
  readonly managementContext?: string;
  readonly controllerId: string;
  readonly logLevel: string;
  /** Shards of the push-mode members (0 or absent: none, the leader syncs every member). */
  readonly shards?: number;
}

/**
 * One replica of a highly available controller: it stands by — following the status branch so its
 * state is warm — until it holds the leader Lease, then runs the controller; once it loses the Lease
 * it has stopped writing already (the fence) and exits so its restart stands by again, as
 * kube-controller-manager does. A round asked of a standby (a webhook) is relayed to the leader.
 */
export class Election {
  readonly lease: LeaderLease;
  /** The shards' Leases, when the members are sharded. */
  readonly shardLeases: ShardLeases | undefined;
  /** This replica's name in every Lease it holds. */
  readonly identity: string;
  /** Resolves with the exit code once this replica lost the Lease. */
  readonly lost: Promise<ExitCodeValue>;
  private built: BuiltController | undefined;
  private follower: NodeJS.Timeout | undefined;
  private following: Promise<void> | undefined;
  private followed = false;
  private leading = false;
  /** The sharded controller's view of this replica, once made (`sharding`). */
  private sharded: Sharding | undefined;
  private readonly followIntervalMs: number;

  constructor(
    flags: ElectionFlags,
    private readonly logger: Logger,
  ) {
    const timings = timingsOf(flags);
    this.followIntervalMs = duration(
      flags.standbyFollowInterval ?? DEFAULT_FOLLOW_INTERVAL,
      "--standby-follow-interval",
    );
    let lose: (code: ExitCodeValue) => void = () => undefined;
    this.lost = new Promise((resolve) => {
      lose = resolve;
    });
    this.identity = `${flags.controllerId}_${Math.random().toString(16).slice(2, 10)}`;
    const kubeconfig = managementKubeconfig(flags);
    this.lease = new LeaderLease(
      {
        kubeconfig,
        namespace: flags.leaderElectNamespace,
        name: flags.leaderElectLease,
        identity: this.identity,
        timings,
        logLevel: flags.logLevel,
      },
      {
        started: () => void this.lead(),
        stopped: (why) => {
          logger.error({ why }, "leader election lost: stopping, a restart stands by again");
          lose(ExitCode.Failed);
        },
        relayed: (reason) => this.built?.loop.trigger(`relayed ${reason}`),
        relayFailed: (error) => logger.warn({ error }, "round not relayed to the leader"),
      },
    );
    this.shardLeases =
      flags.shards && flags.shards > 0
        ? new ShardLeases(
            {
              kubeconfig,
              namespace: flags.leaderElectNamespace,
              lease: flags.leaderElectLease,
              identity: this.identity,
              timings,
              logLevel: flags.logLevel,
              shards: flags.shards,
            },
            {
              gained: (shard) => {
                logger.info({ shard }, `holding shard ${shard}: probing and syncing its members`);
                this.built?.loop.trigger(`shard ${shard}`);
              },
              released: (shard) =>
                logger.info(
                  { shard },
                  `gave shard ${shard} up to a replica holding fewer: no longer syncing its members`,
                ),
              lost: (shard, why) => {
                logger.error({ shard, why }, "shard lease lost: stopping, a restart campaigns again");
                lose(ExitCode.Failed);
              },
            },
          )
        : undefined;
  }

  /**
   * The sharded controller's view of this replica (undefined without shards): whether it leads, the
   * shards it holds, their fences, and the leader to ask for a round.
   */
  sharding(branches: ShardBranches): Sharding | undefined {
    const shards = this.shardLeases;
    if (!shards) return undefined;
    this.sharded = new Sharding({
      shards: shards.count,
      identity: this.identity,
      leading: () => this.leading && this.lease.leading,
      holding: () => shards.holding(),
      fence: (shard) => shards.fence(shard),
      relay: (reason) => this.lease.relay(reason),
      branches,
    });
    return this.sharded;
  }

  /** Checked before every write to a member: the shard's Lease when sharded, else the leader's. */
  fenceMember(cluster: string): void {
    if (this.sharded) this.sharded.fence(this.built?.reconciler.snapshot().state.model, cluster);
    else this.lease.fence();
  }

  /** Checked before every write: throws unless this replica leads. */
  fence(): void {
    this.lease.fence();
  }

  /**
   * Stands by with this controller: follows the status branch until the Lease is this replica's. With
   * shards it runs at once: its rounds hold shards, and lead once the leader Lease is its own.
   */
  standBy(built: BuiltController): void {
    this.built = built;
    if (this.shardLeases) {
      built.start();
      return;
    }
    const follow = () => {
      if (this.following || this.leading) return;
      this.following = built
        .follow()
        .then((result) => {
          this.followed = true;
          if (result === "restored") this.logger.info("standby: state brought up to the status branch");
        })
        .catch((error: unknown) =>
          this.logger.warn({ error: String(error) }, "standby: status branch not followed"),
        )
        .finally(() => {
          this.following = undefined;
        });
    };
    follow();
    this.follower = setInterval(follow, this.followIntervalMs);
    this.follower.unref();
  }

  /** A round asked of this replica: its own when it leads, else the leader's. */
  trigger(reason: string): void {
    if (this.leading) this.built?.loop.trigger(reason);
    else this.lease.relay(reason);
  }

  /** Ready: the leader (and, sharded, every replica) once its loop is; a standby once it follows the status branch. */
  get ready(): boolean {
    return this.leading || this.shardLeases ? (this.built?.loop.ready ?? false) : this.followed;
  }

  /** Why not ready, for /readyz. */
  get notReadyBecause(): string | undefined {
    if (this.leading || this.shardLeases) return this.built?.loop.problem?.message;
    return this.followed ? undefined : "standing by: the status branch is not followed yet";
  }

  /** Sharded: how many shards there are and which this replica holds now (metrics). */
  get shards(): { count: number; held: ReadonlySet<number> } | undefined {
    return this.shardLeases ? { count: this.shardLeases.count, held: this.shardLeases.holding() } : undefined;
  }

  /** Whether this replica leads (for the log and /readyz's answer). */
  get isLeader(): boolean {
    return this.leading;
  }

  /** Gives the Lease up, so another replica takes over without waiting for it to expire. */
  async stop(): Promise<void> {
    if (this.follower) clearInterval(this.follower);
    await Promise.all([this.lease.release(), this.shardLeases?.release()]);
  }

  // Leading: the follower stops (its last round finishes first), and the controller starts.
  private async lead(): Promise<void> {
    if (this.follower) clearInterval(this.follower);
    await this.following;
    this.leading = true;
    this.logger.info("leading: reconciling and syncing");
    // Sharded, the loop runs already: its next round leads.
    if (this.shardLeases) this.built?.loop.trigger("leading");
    else this.built?.start();
  }
}

function timingsOf(flags: ElectionFlags): LeaseTimings {
  const timings = {
    leaseDurationMs: duration(flags.leaderElectLeaseDuration, "--leader-elect-lease-duration"),
    renewDeadlineMs: duration(flags.leaderElectRenewDeadline, "--leader-elect-renew-deadline"),
    retryPeriodMs: duration(flags.leaderElectRetryPeriod, "--leader-elect-retry-period"),
  };
  const problem = timingsProblem(timings);
  if (problem) throw new CliError(`leader election: ${problem}`, ExitCode.Usage);
  return timings;
}

function duration(text: string, flag: string): number {
  const ms = parseDuration(text);
  if (!ms)
    throw new CliError(`${flag} ${text}: expected a duration such as 500ms, 2s or 15s`, ExitCode.Usage);
  return ms;
}

// The management cluster's kubeconfig, exported for the election's thread: a file's context, or
// undefined for the in-cluster service account (the thread loads it itself).
function managementKubeconfig(flags: ElectionFlags): string | undefined {
  if (!flags.managementKubeconfig) {
    if (!process.env.KUBERNETES_SERVICE_HOST)
      throw new CliError(
        "--leader-elect outside a cluster (no KUBERNETES_SERVICE_HOST) needs --management-kubeconfig",
        ExitCode.Usage,
      );
    return undefined;
  }
  const config = new KubeConfig();
  try {
    config.loadFromFile(flags.managementKubeconfig);
  } catch (error) {
    throw new CliError(
      `cannot read --management-kubeconfig ${flags.managementKubeconfig}: ${(error as Error).message}`,
    );
  }
  const context = flags.managementContext ?? config.getCurrentContext();
  if (!context || !config.getContextObject(context))
    throw new CliError(
      `context "${context}" is not in ${flags.managementKubeconfig} (--management-context)`,
      ExitCode.Usage,
    );
  config.setCurrentContext(context);
  return config.exportConfig();
}
