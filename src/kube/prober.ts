import type { Logger } from "pino";
import {
  afterProbe,
  type ClusterHealth,
  clusterHealthSettings,
  healthTaints,
  initialHealth,
} from "../failover/cluster-health.js";
import { HEARTBEAT_STALE_MS, type Heartbeat } from "../model/heartbeat.js";
import type { FleetModel, Taint } from "../model/types.js";
import type { MemberConnection } from "./connections.js";
import type { MemberClient } from "./member-client.js";
import { MemberClientPool } from "./member-clients.js";

/** How soon the prober looks again when the first reconcile has not given it a fleet yet. */
const NO_MODEL_RETRY_MS = 250;

export interface ProberOptions {
  /** Where its member clients come from (shared with the syncer and the autoscaler); default its own. */
  readonly clients?: MemberClientPool;
  /** How to reach each cluster of a fleet. */
  readonly connect: (model: FleetModel) => Promise<readonly MemberConnection[]>;
  /** The fleet as the status branch last rendered it (its clusters, its clusterHealth settings). */
  readonly model: () => FleetModel | undefined;
  readonly logger: Logger;
  /** A cluster's condition as the status branch last recorded it: a restarted controller continues from it. */
  readonly restore?: (cluster: string) => ClusterHealth | undefined;
  /** Pull-mode agents' heartbeats: a cluster the controller cannot probe is judged by them. */
  readonly heartbeats?: (model: FleetModel) => Promise<ReadonlyMap<string, Heartbeat>>;
  /** Called when a cluster's condition or taints change. */
  readonly onChange?: () => void;
  /** Milliseconds since the epoch; injectable for tests. */
  readonly now?: () => number;
}

/** A cluster's condition and the taints it adds, as of now. */
export interface ClusterCondition {
  readonly health: ClusterHealth;
  readonly taints: readonly Taint[];
}

/**
 * Probes every member's /readyz on fleet.yaml's probeInterval, each with probeTimeout, and keeps each
 * cluster's condition (cluster-health.ts): NotReady after failureThreshold failures, Ready after
 * successThreshold successes, NoExecute after noExecuteAfter. Members the controller cannot reach by
 * configuration (pull mode without credentials, or none) are not probed.
 */
export class ClusterProber {
  private readonly health = new Map<string, ClusterHealth>();
  private timer: NodeJS.Timeout | undefined;
  private reported = "";

  private readonly clients: MemberClientPool;
  /** Per pull-mode cluster, the heartbeat last seen and when it was first seen. */
  private readonly beats = new Map<string, { tip: string; at: number }>();

  constructor(private readonly options: ProberOptions) {
    this.clients = options.clients ?? new MemberClientPool();
  }

  /** Probes now and then on the interval until stopped. */
  start(): void {
    const tick = async () => {
      await this.probeOnce().catch((error: unknown) =>
        this.options.logger.warn({ err: error }, "probing failed"),
      );
      // Before the first reconcile there is no fleet to probe: look again soon, not a whole default interval later.
      const model = this.options.model();
      this.timer = setTimeout(
        tick,
        model ? clusterHealthSettings(model.fleet?.spec).probeIntervalMs : NO_MODEL_RETRY_MS,
      );
      this.timer.unref();
    };
    void tick();
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
  }

  /** One probe of every reachable member; tells onChange when a condition or its taints changed. */
  async probeOnce(): Promise<void> {
    const model = this.options.model();
    if (!model) return;
    const settings = clusterHealthSettings(model.fleet?.spec);
    const connections = (await this.options.connect(model)).filter(
      (c) => "config" in c && c.config !== undefined,
    );
    await Promise.all(
      connections.map(async (connection) => {
        const client = this.client(connection, settings.probeTimeoutMs);
        if (!client) return;
        const answer = await client.probe();
        // The controller could not ask (out of file descriptors): that says nothing about the member.
        if (answer.outcome === "skipped") return;
        this.record(connection.cluster, { ...answer, outcome: answer.outcome }, settings);
      }),
    );
    await this.judgeHeartbeats(model, new Set(connections.map((c) => c.cluster)), settings);
    const now = JSON.stringify([...this.conditions()].map(([c, v]) => [c, v.health.ready, v.taints]));
    if (now !== this.reported) {
      this.reported = now;
      this.options.onChange?.();
    }
  }

  // A probe's outcome applied to the cluster's condition, with the thresholds of cluster-health.ts.
  private record(
    cluster: string,
    probe: { outcome: "ready" | "unready" | "unreachable"; error?: string },
    settings: ReturnType<typeof clusterHealthSettings>,
  ): void {
    const at = this.now();
    const before = this.health.get(cluster) ?? this.options.restore?.(cluster) ?? initialHealth(at);
    const after = afterProbe(before, { at, ...probe }, settings);
    if (before.ready !== after.ready)
      this.options.logger.warn(
        { cluster, ready: after.ready, reason: after.reason, error: after.lastError },
        after.ready ? "cluster Ready again" : "cluster NotReady",
      );
    this.health.set(cluster, after);
  }

  // Pull-mode clusters the controller cannot probe: a heartbeat seen within two heartbeat intervals
  // is a successful probe, silence a failed one — the same thresholds then make it NotReady. When a
  // beat was first seen is the controller's own time; after a restart, the beat's claimed time (never
  // later than now), so a silence that began before the restart is not forgotten.
  private async judgeHeartbeats(
    model: FleetModel,
    probed: ReadonlySet<string>,
    settings: ReturnType<typeof clusterHealthSettings>,
  ): Promise<void> {
    if (!this.options.heartbeats) return;
    const beats = await this.options.heartbeats(model).catch(() => undefined);
    if (!beats) return;
    const now = this.now();
    for (const cluster of model.clusters) {
      const name = cluster.metadata.name;
      if (cluster.spec.connection?.mode !== "pull" || probed.has(name)) continue;
      const last = this.lastBeat(name, beats.get(name), now);
      if (!last) continue;
      const silent = now - last.at;
      this.record(
        name,
        silent <= HEARTBEAT_STALE_MS
          ? { outcome: "ready" }
          : {
              outcome: "unreachable",
              error: `no heartbeat from the agent for ${Math.round(silent / 1000)}s`,
            },
        settings,
      );
    }
  }

  // When the cluster's current heartbeat was first seen; undefined before any.
  private lastBeat(cluster: string, beat: Heartbeat | undefined, now: number) {
    const seen = this.beats.get(cluster);
    if (beat && seen?.tip !== beat.tip)
      this.beats.set(cluster, { tip: beat.tip, at: seen ? now : Math.min(now, beat.claimedAt) });
    return this.beats.get(cluster);
  }

  /**
   * Every probed cluster's condition and taints, as of now. A cluster not probed yet since a start
   * has the condition the status branch recorded: the first status commit of a restarted controller
   * must not drop a NotReady condition it has not probed again.
   */
  conditions(): Map<string, ClusterCondition> {
    const model = this.options.model();
    const settings = clusterHealthSettings(model?.fleet?.spec);
    const now = this.now();
    const health = new Map(this.health);
    // Read afresh, not kept: a member this prober starts probing later (a shard taken over) continues
    // from what the status branch says then, so its failover clock does not restart.
    for (const cluster of model?.clusters ?? []) {
      const name = cluster.metadata.name;
      if (health.has(name)) continue;
      const recorded = this.options.restore?.(name);
      if (recorded) health.set(name, recorded);
    }
    return new Map(
      [...health].map(([cluster, condition]) => [
        cluster,
        { health: condition, taints: healthTaints(condition, now, settings) },
      ]),
    );
  }

  private client(connection: MemberConnection, timeoutMs: number): MemberClient | undefined {
    if (!("config" in connection) || !connection.config) return undefined;
    return this.clients.client(connection.cluster, connection.config, { timeoutMs, retries: 0 });
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }
}
