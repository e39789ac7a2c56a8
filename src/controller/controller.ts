import type { Logger } from "pino";
import type { AgentBranches } from "../git/agent-branches.js";
import type { ClusterCondition, ClusterProber } from "../kube/prober.js";
import type { Syncer } from "../kube/syncer.js";
import { smallest } from "../model/extremes.js";
import type { ObservedState } from "../model/observed-state.js";
import {
  advancePolicies,
  type ControlPlaneGives,
  controlPlaneGives,
  type PoliciesRound,
  planesMoved,
} from "../policy/registry.js";
import { gatherObservedState } from "../reconcile/gather-observations.js";
import { nextWake } from "../reconcile/observation-scope.js";
import { observedWorkloads } from "../reconcile/observed-workloads.js";
import type { ReconcileState } from "../reconcile/reconcile-step.js";
import { conditionBlocks, observedFiles } from "../status/observed-files.js";
import { type AgentReport, syncCommitMessage } from "../status/observed-status.js";
import { reportedClusters, withRecorded } from "../status/recorded-observations.js";
import { headedBySteps, type StatusEvent, type StatusMessage } from "../status/status-message.js";
import type { ClusterSyncResult } from "../sync/sync-result.js";
import type { AutoscalingSampler } from "./autoscaling-sampler.js";
import { ShardReports } from "./leadership/shard-reports.js";
import type { Sharding } from "./leadership/sharding.js";
import { earliest, type Reconciles, type Requeue } from "./loop.js";
import type { ReconcileReport, Reconciler, RoundInputs } from "./reconciler.js";
import { RenderPolicies } from "./render-policies.js";
import {
  onlyRenderChanged,
  type SyncRequest,
  sameResults,
  stillProgressing,
  syncDue,
  syncRequestKey,
  syncTarget,
  windowOpens,
} from "./sync-target.js";

export interface ControllerOptions {
  readonly logger: Logger;
  /** At most one observed-status commit per this many milliseconds (fleet.yaml statusInterval). */
  readonly statusIntervalMs: number;
  /** Members are synced again after this long even without a new commit: drift and health (fleet.yaml driftInterval). */
  readonly resyncIntervalMs: number;
  /** Probes the members' /readyz: their condition and taints go to status/clusters/. */
  readonly prober?: ClusterProber;
  /** Milliseconds since the epoch; injectable for tests. */
  readonly now?: () => number;
  /** Samples members for FederatedHPAs (the autoscaling policy's edge). */
  readonly autoscaler?: AutoscalingSampler;
  /** Reads what pull-mode agents report on branches of their own. */
  readonly agents?: AgentBranches;
  /** One replica of a sharded controller: it probes and syncs its shards' members; the leader folds the others' reports in. */
  readonly sharding?: Sharding;
}

/** How often a shard's holder that does not lead follows the status branch and reports. */
export const SHARD_ROUND_MS = 2_000;

/**
 * What one round did: the reconcile's report, with sync on whether observed status was committed, and
 * when the next round is due without any new event (the loop schedules it).
 */
export interface ControllerReport extends ReconcileReport {
  readonly observed?: ObservedOutcome;
  readonly requeue?: Requeue;
}

type ObservedOutcome = "committed" | "unchanged" | "moved" | "waiting";

/**
 * One round of the controller: reconcile the source branch into the status branch, hand what the
 * status branch holds to the syncer when it changed (or when a resync is due), and publish what the
 * members reported — at most once per status interval and only when it changed. Sync runs in the
 * background, per cluster; its results ask for another round, which commits them.
 */
export class Controller implements Reconciles {
  /** What the sync was last asked for with (sync-target.ts). */
  private requested: SyncRequest | undefined;
  private lastFlush = Number.NEGATIVE_INFINITY;
  private flushedResults: ReadonlyMap<string, ClusterSyncResult> | undefined;
  private flushedReports: string | undefined;
  /** Apps were still progressing at the last commit: the members are synced again from this time on. */
  private progressAt: number | undefined;
  /** (workload, cluster) → when its pods were first seen Unschedulable. */
  private readonly unschedulableSince = new Map<string, number>();
  /** The observations the reconcile of this round was made with, and the render they were gathered for. */
  private lastObservations: ObservedState | undefined;
  private gatheredFor: unknown;
  /** The render policies (autoscaling), advanced as the observations are gathered. */
  private readonly scaling: RenderPolicies;
  /** The policies as of the last round (migrations, upgrades, restores): their files, steps and what they give. */
  private policies: PoliciesRound | undefined;
  /** Policies' steps not yet named in a commit message. */
  private unrecorded: StatusEvent[] = [];
  /** The agents' reports read from their branches this round. */
  private branchReports: ReadonlyMap<string, AgentReport> = new Map();
  /** Sharded: the shards' reports, read and published each round (leadership/shard-reports.ts). */
  private readonly shards: ShardReports | undefined;

  constructor(
    private readonly reconciler: Reconciler,
    private readonly syncer: Syncer,
    private readonly options: ControllerOptions,
  ) {
    if (options.sharding) this.shards = new ShardReports(options.sharding, options.logger);
    this.scaling = new RenderPolicies(options.autoscaler, options.logger);
  }

  // What the round hands the reconciler: the observations, and the render policies' files and steps.
  private readonly round: RoundInputs = {
    observe: () => this.observations(),
    attach: (syncFiles) => this.scaling.attachment(syncFiles),
  };

  /**
   * What the render takes in besides the fleet repo: each probed cluster's condition and taints, each
   * workload's replicas as the members (and agents) report them, and the autoscalers' totals. Gathered
   * once a round — the autoscaling round consumes its samples — and again only when the state it was
   * gathered from changed (another writer moved the status branch mid-round).
   */
  observations(): ObservedState {
    const { state, syncFiles } = this.reconciler.snapshot();
    if (this.lastObservations && this.gatheredFor === state.render) return this.lastObservations;
    this.gatheredFor = state.render;
    const now = this.now();
    const workloads = observedWorkloads(
      { results: this.results(), reports: this.agentReports(), decisions: state.render.decisions, now },
      this.unschedulableSince,
    );
    // The render policies take this round's samples: what they give feeds this round's render.
    this.scaling.advance(state, syncFiles, workloads, now);
    const reported = reportedClusters(this.results(), this.agentReports());
    const names = state.model?.clusters.map((c) => c.metadata.name) ?? [];
    const clusters = withRecorded(names, reported, (path) => this.reconciler.observedBlock(path), syncFiles);
    this.lastObservations = gatherObservedState({
      now,
      ...(this.options.prober || this.options.sharding ? { probes: this.conditions() } : {}),
      workloads,
      capacity: clusters.capacity,
      served: clusters.served,
      entryPoints: clusters.entryPoints,
      ...(state.model && this.scaling.gives.scaling ? { scaling: this.scaling.gives.scaling } : {}),
      ...this.controlPlanes(state),
    });
    return this.lastObservations;
  }

  /**
   * One round, narrated:
   * 1. sample the members' pods for the autoscalers and read the agents' reports (edge);
   * 2. reconcile the source tip into the status branch — the render takes the observed state,
   *    gathered once for the round (probes, members' replicas, the autoscaling round);
   * 3. advance the migrations once;
   * 4. hand the render to the syncer when it changed, a gate moved or a resync is due;
   * 5. publish what the members reported, when the status interval allows;
   * 6. say when the next round is due without a new event.
   */
  async reconcile(): Promise<ControllerReport> {
    const { sharding } = this.options;
    if (sharding && !sharding.options.leading()) return this.holdShards();
    // 1. Pods are sampled for the render this round makes (the state as of the last one).
    const before = this.reconciler.snapshot().state;
    if (before.model) await this.shards?.read(before.model);
    await this.options.autoscaler?.sample(before, this.now());
    if (before.model && this.options.agents)
      this.branchReports = await this.options.agents.reports(before.model);
    // 2. The observations are gathered afresh for this round.
    this.lastObservations = undefined;
    const report = await this.reconciler.reconcile(this.round);
    const now = this.now();
    const { state, syncFiles, trusted } = this.reconciler.snapshot();
    // 3. Migrations and upgrades advance once a round, with the results the observed-status commit
    // below carries; an upgrade batch that starts or rolls back renders again in the next round.
    this.advancePolicies(state, syncFiles, now);
    const stale = state.model !== undefined && planesMoved(this.controlPlanes(state), this.lastObservations);
    // 4. A new render (not a status commit of the sync's own), a migration gate that moved, members
    // this replica gained (sharded), a due resync, or apps still progressing ask the members again.
    await this.syncWhenDue(state, syncFiles, trusted, now);
    // 5. What the members reported so far (and, sharded, the shards this replica holds report it on
    // their branches too, so a next leader finds it); 6. the next round's time.
    const published = await this.publishObserved();
    await this.publishShards(state);
    const moved: Requeue | undefined = stale ? { afterMs: 0, reason: "upgrade" } : undefined;
    const requeue = earliest([moved, published.requeue, this.deadline(state)]);
    return { ...report, observed: published.outcome, ...(requeue ? { requeue } : {}) };
  }

  // The sync asked for when the render changed, a migration gate moved, a resync is due or apps are
  // still progressing. A commit that does not validate changes nothing in any cluster: the last valid
  // render is what syncs.
  private async syncWhenDue(
    state: ReconcileState,
    syncFiles: ReadonlyMap<string, string>,
    trusted: boolean,
    now: number,
  ): Promise<void> {
    const gates = this.policies?.gives.gates;
    const next = {
      render: state.render,
      key: syncRequestKey(gates, this.options.sharding?.scopeKey()),
      at: now,
    };
    const { resyncIntervalMs } = this.options;
    const times = {
      resyncIntervalMs,
      progressAt: this.progressAt,
      windowOpens: windowOpens(this.syncer.latest()),
    };
    if (!syncDue(this.requested, next, times) || !state.model || !state.renderedCommit) return;
    const changesOnly = onlyRenderChanged(this.requested, next, times);
    this.requested = next;
    this.progressAt = undefined;
    const extras = {
      ...(gates ? { gates } : {}),
      ...(this.shards ? { elsewhere: this.shards.elsewhere } : {}),
      ...(changesOnly ? { changesOnly } : {}),
    };
    await this.syncer.request(syncTarget(state, syncFiles, trusted, extras));
  }

  /**
   * A round of a shard's holder that does not lead, narrated:
   * 1. follow the status branch (the leader's renders and decisions) and read the other shards' reports;
   * 2. advance the migrations as the leader does, for the gates the sync obeys (their files are the leader's);
   * 3. sync this replica's members when due, as the leader would;
   * 4. report what they answered on the shards' own branches, and ask the leader for a round.
   */
  private async holdShards(): Promise<ControllerReport> {
    const started = this.now();
    await this.reconciler.follow(this.round);
    const { state, syncFiles, trusted, statusTip } = this.reconciler.snapshot();
    if (state.model) await this.shards?.read(state.model);
    const now = this.now();
    this.advancePolicies(state, syncFiles, now);
    this.unrecorded = [];
    this.lastObservations = undefined;
    await this.syncWhenDue(state, syncFiles, trusted, now);
    // Members still rolling out are looked at again after the status interval, as the leader does.
    if (this.progressAt === undefined && (this.policies?.active || stillProgressing(this.syncer.latest())))
      this.progressAt = now + Math.max(this.options.statusIntervalMs, 1000);
    await this.publishShards(state);
    return {
      result: "up-to-date",
      sourceCommit: state.sourceCommit ?? "",
      statusCommit: statusTip,
      valid: state.model !== undefined,
      errors: 0,
      attempts: 1,
      filesChanged: 0,
      durationsMs: { shard: this.now() - started },
      requeue: { afterMs: SHARD_ROUND_MS, reason: "shard" },
    };
  }

  // The shards this replica holds report their members on their branches.
  private async publishShards(state: ReconcileState): Promise<void> {
    const probed = this.options.prober?.conditions() ?? new Map<string, ClusterCondition>();
    await this.shards?.publish(state, this.syncer.latest(), probed, this.reconciler.author());
  }

  // Every member's last sync: this replica's own for the members it syncs (once it has synced them),
  // the shards' reports for the rest.
  private results(): ReadonlyMap<string, ClusterSyncResult> {
    const local = this.syncer.latest();
    return this.shards ? this.shards.results(local, this.reconciler.snapshot().state.model) : local;
  }

  // Every member's condition: this replica's probes for its own members (and what the status branch
  // recorded for members nobody reported yet), the shards' reports for the rest.
  private conditions(): Map<string, ClusterCondition> {
    const conditions = this.options.prober?.conditions() ?? new Map<string, ClusterCondition>();
    const model = this.reconciler.snapshot().state.model;
    return this.shards ? this.shards.conditions(conditions, model, this.now()) : conditions;
  }

  /** A standby's warm state, its replays rendered with this round's observations (Reconciler.follow). */
  follow(): Promise<"current" | "replayed" | "restored"> {
    return this.reconciler.follow(this.round);
  }

  /** Advances the migrations and publishes the members' latest results (after a sync outside a round). */
  async flush(): Promise<ObservedOutcome> {
    const { state, syncFiles } = this.reconciler.snapshot();
    this.advancePolicies(state, syncFiles, this.now());
    return (await this.publishObserved()).outcome;
  }

  // Every policy advanced one step (policy/registry.ts); its steps wait for a commit that names them.
  private advancePolicies(state: ReconcileState, syncFiles: ReadonlyMap<string, string>, now: number): void {
    const { model, renderedCommit } = state;
    if (!model || !renderedCommit) {
      this.policies = undefined;
      return;
    }
    this.policies = advancePolicies(
      {
        model,
        render: state.render,
        renderedCommit,
        files: syncFiles,
        trusted: this.reconciler.snapshot().trusted,
        results: this.results(),
        reports: this.agentReports(),
        now,
      },
      this.policies,
    );
    this.unrecorded.push(...this.policies.events);
  }

  // The hosted control planes' versions and restores the policies give (policy/registry.ts).
  private controlPlanes(state: ReconcileState): ControlPlaneGives {
    const { syncFiles: files, trusted } = this.reconciler.snapshot();
    return controlPlaneGives(this.policies, state.model ? { model: state.model, files, trusted } : undefined);
  }

  // Publishes the members' latest results when they changed and the status interval allows; says
  // when to look again (the interval's end, or apps still progressing).
  private async publishObserved(): Promise<{ outcome: ObservedOutcome; requeue?: Requeue }> {
    const results = this.results();
    const { state, syncFiles } = this.reconciler.snapshot();
    const reports = this.agentReports();
    const conditions = conditionBlocks(this.conditions());
    const migrationFiles = this.policies?.files ?? new Map<string, string>();
    const reportsKey = JSON.stringify([[...reports.values()], [...conditions], [...migrationFiles]]);
    if (
      (results.size === 0 && reports.size === 0) ||
      (sameResults(results, this.flushedResults) && reportsKey === this.flushedReports)
    )
      return { outcome: "unchanged" };
    const wait = this.lastFlush + this.options.statusIntervalMs - this.now();
    if (wait > 0) return { outcome: "waiting", requeue: { afterMs: wait, reason: "status interval" } };
    const { blocks, files } = observedFiles(
      state.render.objects,
      results,
      reports,
      conditions,
      (path) => this.reconciler.observedBlock(path),
      this.now(),
    );
    for (const [path, text] of migrationFiles) files.set(path, text);
    const snapshot = new Map(results);
    // A migration's state changes name the commit that records them, not every later one.
    const recorded = [...migrationFiles].every(([path, text]) => syncFiles.get(path) === text);
    if (recorded) this.unrecorded = [];
    const outcome = await this.reconciler.publishObserved(blocks, files, this.observedMessage(snapshot));
    if (outcome === "committed") this.unrecorded = [];
    if (outcome !== "moved") {
      this.flushedResults = snapshot;
      this.flushedReports = reportsKey;
      this.lastFlush = this.now();
    }
    // Apps still rolling out, and migration batches adopting or observing, are looked at again after
    // the status interval; apps a migration holds back wait for a commit, not for time.
    if (this.policies?.active || stillProgressing(snapshot)) {
      const afterMs = Math.max(this.options.statusIntervalMs, 1000);
      this.progressAt = this.now() + afterMs;
      return { outcome, requeue: { afterMs, reason: "progress" } };
    }
    return { outcome };
  }

  // The sync's subject first; the batches' steps after it, each on a line of the body.
  private observedMessage(results: ReadonlyMap<string, ClusterSyncResult>): StatusMessage {
    return headedBySteps(syncCommitMessage([...results.values()]), this.unrecorded);
  }

  // Agents' reports: from their own branches, or (fresher, and the only ones from agents that cannot
  // push) read from their clusters where a Cluster names credentials to read them.
  private agentReports(): Map<string, AgentReport> {
    return new Map([...this.branchReports, ...this.syncer.agentReports()]);
  }

  // A toleration, grace period, cool-down or observation window that runs out, a CronScale rule's
  // time or the autoscalers' next sample changes what is decided with no new observation: the next
  // round is due then.
  private deadline(state: ReconcileState): Requeue | undefined {
    if (!state.model) return undefined;
    const seen = this.lastObservations ?? this.observations();
    const times = [
      nextWake(state.model, state.render, seen),
      this.policies?.wakeAt,
      this.scaling.wakeAt,
      this.options.autoscaler?.nextSampleAt(state.model),
      windowOpens(this.syncer.latest()),
    ];
    const future = times.filter((t): t is number => t !== undefined);
    if (future.length === 0) return undefined;
    return { afterMs: Math.max(0, (smallest(future) ?? 0) - this.now()) + 5, reason: "deadline" };
  }

  /** Resync everything on the next round (progress checks and tests). */
  resyncSoon(): void {
    if (this.requested) this.requested = { ...this.requested, at: Number.NEGATIVE_INFINITY };
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }
}
