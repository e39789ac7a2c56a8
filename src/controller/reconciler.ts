import { buildSettings } from "../builds/build-settings.js";
import {
  type AppBuilders,
  type AppBuildOutputs,
  appBuildsFor,
  defaultBuilders,
  defaultTeamSources,
  loadFleetWithBuilds,
} from "../builds/load-with-builds.js";
import type { FleetRepo } from "../git/fleet-repo.js";
import type { Published } from "../git/status-branch.js";
import type { CommitAuthor } from "../git/status-writer.js";
import { createParseCache, type ParseCache } from "../load/load-fleet.js";
import { parseCacheFrom } from "../load/parse-cache.js";
import type { FileTree } from "../model/file-tree.js";
import type { LoadPolicy } from "../model/load-policy.js";
import { noObservations, type ObservedState } from "../model/observed-state.js";
import { formatProblem } from "../model/problem.js";
import { ALL } from "../reconcile/affected-apps.js";
import { recordedVerdict, withAttachment, withRepair, withSweep } from "../reconcile/commit-additions.js";
import {
  observationStep,
  observationsMoved,
  type ReconcileOutcome,
  type ReconcileState,
  reconcileStep,
} from "../reconcile/reconcile-step.js";
import { eventKindsOf, messageText, type StatusMessage } from "../status/status-message.js";
import { BranchCache, type BranchSnapshot } from "./branch-cache.js";
import { restoreBranch } from "./branch-restore.js";
import { ReconcileError, TerminalError } from "./errors.js";
import { catchUp } from "./leadership/standby-catch-up.js";
import { readSource } from "./read-source.js";
import type { Attachment, ReconcileReport, ReconcilerOptions, RoundInputs } from "./reconciler-options.js";
import { snapshotParts } from "./snapshot/reconciler-snapshot.js";
import { SnapshotKeeper } from "./snapshot/snapshot-keeper.js";
import { publishStatus, refuseOwnCommit, type StatusCommit } from "./status-commits.js";
import { Stopwatch } from "./stopwatch.js";

export { wantedSource } from "./branch-restore.js";
export { ReconcileError, TerminalError } from "./errors.js";
export type {
  Attachment,
  PublishedCommit,
  ReconcileReport,
  ReconcilerOptions,
  RoundInputs,
} from "./reconciler-options.js";

/** A reconcile's outcome and the source tree it rendered (undefined: the state's own). */
type Rendered = { outcome: ReconcileOutcome; headTree: string | undefined };

/**
 * The Git reconcile loop's single step, kept alive between reconciles: fetch, read the source branch's
 * tip straight from Git objects, reconcile it against the state of the last status commit, and publish
 * one status commit with a compare-and-swap. State lives in memory only as a cache of what the status
 * branch says: on start, or when another writer moved the branch, it is rebuilt from the branch, so a
 * crash at any point converges on restart and two controllers never lose each other's work.
 */
export class Reconciler {
  /** The status branch as last known: a cache of what it says (branch-cache.ts). */
  private readonly branch = new BranchCache();
  private parseCache: ParseCache = createParseCache();
  /** The snapshot on disk: read by the first restore, written after the held tip moves. */
  private readonly snapshots: SnapshotKeeper | undefined;

  constructor(private readonly options: ReconcilerOptions) {
    const { snapshots: store, logger, snapshotAfterMs } = options;
    this.snapshots = store
      ? new SnapshotKeeper(store, logger, () => this.takeSnapshot(), snapshotAfterMs)
      : undefined;
  }

  /** The fleet repository this reconciler reads and writes. */
  get repository(): FleetRepo {
    return this.options.repo;
  }

  /** The status branch it writes. */
  get statusBranch(): string {
    return this.options.statusBranch;
  }

  /** The observed block of a status file on the branch (status/clusters/<c>.yaml's holds the probes' condition). */
  observedBlock(path: string): string | undefined {
    return this.branch.observedBlock(path);
  }

  /** What the status branch holds as of the last reconcile: its tip and the state it describes. */
  snapshot(): BranchSnapshot {
    return this.branch.snapshot();
  }

  /**
   * A standby's warm state: fetches, and restores from the status branch's tip when it moved — what a
   * takeover's first round would do, done ahead so that round starts from it. Writes nothing.
   */
  async follow(round: RoundInputs = {}): Promise<"current" | "replayed" | "restored"> {
    const { repo, branch, statusBranch } = this.options;
    await repo.fetch([branch, statusBranch]);
    const head = await repo.branchTip(branch);
    const tip = await repo.branchTip(statusBranch);
    if (!head || this.branch.holds(tip)) return "current";
    this.snapshots?.changed();
    if (tip && (await this.followTo(tip, round))) return "replayed";
    await this.restore(tip, head, round);
    return "restored";
  }

  // The status branch moved on from the held tip by commits of other writers (the leader): each taken
  // on or replayed in turn, oldest first; false when the caller must restore instead (a commit that
  // cannot be followed, a merge, more than MAX_CATCH_UP commits, a held tip not in the history).
  private async followTo(tip: string, round: RoundInputs): Promise<boolean> {
    const from = this.branch.following();
    if (!from) return false;
    const since = await commitsSince(this.options.repo, from.statusTip, tip);
    if (!since || since.length === 0) return false;
    for (const commit of since) if (!(await this.catchUp(commit, round))) return false;
    return true;
  }

  // The status branch moved by one commit of another writer (the leader) on top of this state: taken
  // on or replayed (leadership/standby-catch-up.ts); false when the caller must restore instead.
  private async catchUp(tip: string, round: RoundInputs): Promise<boolean> {
    const from = this.branch.following();
    if (!from) return false;
    const reader = {
      repo: this.options.repo,
      ...(this.options.verify ? { verify: this.options.verify } : {}),
      render: (state: ReconcileState, source: string) =>
        this.step(state, source, new Stopwatch(), this.observationsNow(round)),
      carried: (changes: ReadonlyMap<string, string | null>) => this.branch.carried(changes),
    };
    const caught = await catchUp(reader, from, tip);
    if (caught) this.branch.caughtUp(tip, caught);
    return caught !== undefined;
  }

  /**
   * Reconciles the source branch's tip; retries, with jittered backoff, while other writers move the
   * status branch. The round's inputs are asked for once the state is restored (again on a retry).
   */
  async reconcile(round: RoundInputs = {}): Promise<ReconcileReport> {
    if (this.options.branch === this.options.statusBranch)
      throw new TerminalError(
        `the status branch must differ from the source branch (both are "${this.options.branch}"): gitfleet never writes to people's branch`,
      );
    const maxAttempts = this.options.maxAttempts ?? 6;
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      const report = await this.attempt(attempt, round);
      if (report) return report;
      const delay = Math.round(100 * 2 ** (attempt - 1) * (0.5 + Math.random()));
      this.options.logger.warn(
        { attempt, delayMs: delay },
        "status branch moved underneath; regenerating on the new tip",
      );
      await (this.options.sleep ?? sleep)(delay);
    }
    throw new ReconcileError(
      `the status branch ${this.options.statusBranch} kept moving; gave up after ${maxAttempts} attempts`,
    );
  }

  private async attempt(attempt: number, round: RoundInputs): Promise<ReconcileReport | undefined> {
    const { repo, branch, statusBranch } = this.options;
    const watch = new Stopwatch(undefined, this.options.onProgress);
    await repo.fetch([branch, statusBranch]);
    watch.lap("fetch");
    const head = await repo.branchTip(branch);
    if (!head) throw new TerminalError(`branch ${branch} not found in ${repo.describe()}`);
    this.options.onSource?.(head);
    const tip = await repo.branchTip(statusBranch);
    // Another writer moved the branch (the leader before this one): its commit replayed when this
    // state reproduces it exactly, else the state restored from the branch.
    if (!this.branch.holds(tip))
      if (!(tip && (await this.followTo(tip, round)))) await this.restore(tip, head, round);
    watch.lap("restore");
    const { next, attachment, repair } = await this.nextCommit(head, watch, round);
    const counts = { sourceCommit: head, attempts: attempt };
    if (!next) {
      // Already reconciled — by this process, an earlier one or a controller that won the race: the
      // verdict is the one recorded, so an invalid commit stays invalid however often it is asked.
      const recorded = recordedVerdict(this.branch.snapshot().state, head);
      const laps = watch.laps();
      return {
        ...counts,
        result: "up-to-date",
        statusCommit: tip,
        ...recorded,
        filesChanged: 0,
        durationsMs: laps,
      };
    }
    const { outcome } = next;
    const published = await this.publish({
      parent: tip,
      changes: this.branch.withObserved(outcome.changes),
      message: outcome.message,
      sourceCommit: head,
      onWritten: async (written) => {
        watch.lap("write");
        if (written) await this.options.onStage?.("written");
      },
    });
    const errorProblems = outcome.problems.filter((p) => p.severity === "error");
    const first = errorProblems[0];
    const base = {
      ...counts,
      valid: outcome.valid,
      errors: errorProblems.length,
      ...(first ? { firstError: formatProblem(first) } : {}),
      filesChanged: outcome.changes.size,
      ...(outcome.recomputed ? { recomputed: outcome.recomputed } : {}),
    };
    if (published.status === "moved") return undefined;
    if (published.status === "unchanged") {
      this.landed(next, tip, undefined, repair);
      return { ...base, result: "unchanged", statusCommit: tip, durationsMs: watch.laps() };
    }
    await this.options.onStage?.("published");
    this.told(published.oid, outcome.message);
    watch.lap("publish");
    this.landed(next, published.oid, attachment, repair);
    await this.compacted();
    this.logCommit(head, outcome, published, { durationsMs: watch.laps(), attempt });
    return { ...base, result: "committed", statusCommit: published.oid, durationsMs: watch.laps() };
  }

  // The cache repository started afresh: what the state points into is gone, so the next reconcile rebuilds it.
  private async compacted(): Promise<void> {
    const { repo, logger } = this.options;
    if (!(await repo.compactCache())) return;
    this.branch.forget();
    logger.info({ repo: repo.describe() }, "cache repository started afresh (too many packfiles)");
  }

  private logCommit(
    sourceCommit: string,
    outcome: ReconcileOutcome,
    written: { oid: string; objectsWritten: number },
    timing: { durationsMs: Readonly<Record<string, number>>; attempt: number },
  ): void {
    const errors = outcome.problems.filter((p) => p.severity === "error").length;
    const scope = outcome.scope === ALL ? "all" : outcome.scope.size;
    const clusters = outcome.summary ? Object.fromEntries(outcome.summary.clusters) : {};
    const { oid: statusCommit, objectsWritten } = written;
    const fields = {
      sourceCommit,
      statusCommit,
      valid: outcome.valid,
      errors,
      scope,
      filesChanged: outcome.changes.size,
      ...(outcome.recomputed ? { recomputed: outcome.recomputed } : {}),
    };
    this.options.logger.info({ ...fields, objectsWritten, clusters, ...timing }, outcome.message.head.line);
  }

  // What the next status commit carries: the reconcile's outcome (after a rebuild that could not
  // render, with the branch's stray files swept), the autoscalers' files and a repair of what the
  // branch held that this controller does not render.
  private async nextCommit(head: string, watch: Stopwatch, round: RoundInputs) {
    let found = await this.nextOutcome(head, watch, round);
    if (found?.outcome.valid && this.branch.takeSweep()) found = withSweep(found);
    const { state, syncFiles } = this.branch.snapshot();
    const attachment = round.attach?.(syncFiles);
    const repair = this.branch.pendingRepair();
    const tree = this.branch.renderedTree;
    return {
      next: withRepair(withAttachment(found, attachment, state, tree), repair, state, tree),
      attachment,
      repair,
    };
  }

  // A commit landed (or changed nothing): the state moves on, and what it carried is done.
  private landed(
    next: Rendered,
    statusTip: string | undefined,
    attachment: Attachment | undefined,
    repair: ReadonlyMap<string, string | null> | undefined,
  ): void {
    this.branch.accept(next.outcome, statusTip, next.headTree);
    if (attachment && attachment.files.size > 0) {
      this.branch.wroteFiles(attachment.files);
      attachment.committed();
    }
    if (repair) this.branch.repaired();
    this.snapshots?.changed();
  }

  // The source branch's new tip reconciled, or — with the tip reconciled already — what new
  // observations move (failover); undefined when neither changes anything.
  private async nextOutcome(
    head: string,
    watch: Stopwatch,
    round: RoundInputs,
  ): Promise<Rendered | undefined> {
    const { state } = this.branch.snapshot();
    const observations = this.observationsNow(round);
    if (state.sourceCommit === head) {
      if (!round.observe || !observationsMoved(state, observations)) return undefined;
      const outcome = observationStep(state, observations, this.options.secretDigestKey);
      watch.lap("reconcile");
      return { outcome, headTree: this.branch.renderedTree };
    }
    await refuseOwnCommit(this.options.repo, this.options.branch, head);
    return this.step(state, head, watch, observations);
  }

  // Without a source of observations (no sync), the render still needs the time: failover records carry it.
  private observationsNow(round: RoundInputs): ObservedState {
    return round.observe?.() ?? noObservations((this.options.now ?? Date.now)());
  }

  private async step(
    state: ReconcileState,
    head: string,
    watch: Stopwatch,
    observations: ObservedState,
  ): Promise<{ outcome: ReconcileOutcome; headTree: string }> {
    const read = await readSource(this.options.repo, state, this.branch.renderedTree, head);
    const { charts, kustomize, teamSources } = await this.appBuilds(read.tree);
    // A team's repository that could not be fetched now is tried again, not recorded as invalid.
    if (teamSources && teamSources.unavailable.length > 0)
      throw new ReconcileError(`a team's repository is unavailable: ${teamSources.unavailable.join("; ")}`);
    watch.lap("read");
    const outcome = reconcileStep(state, {
      sourceCommit: head,
      tree: read.tree,
      changedPaths: read.changedPaths,
      cache: this.parseCache,
      ...(charts ? { charts } : {}),
      ...(kustomize ? { kustomize } : {}),
      ...(teamSources ? { teamSources } : {}),
      policy: this.policy(),
      observations,
      ...(this.options.secretDigestKey ? { secretDigestKey: this.options.secretDigestKey } : {}),
    });
    watch.lap("reconcile");
    return { outcome, headTree: read.headTree };
  }

  // Rebuilds the state from the status branch (controller/branch-restore.ts): as it is when its tip
  // is signed by a trusted key, else by rendering the source again — unless the process's first
  // restore resumes from its snapshot.
  private async restore(tip: string | undefined, head: string, round: RoundInputs): Promise<void> {
    if (await this.resume(tip, round)) return;
    const { repo, logger, verify, secretDigestKey } = this.options;
    const reader = {
      repo,
      logger,
      ...(verify ? { verify } : {}),
      now: this.options.now ?? Date.now,
      ...(secretDigestKey ? { secretDigestKey } : {}),
      load: (tree: FileTree) => loadFleetWithBuilds(tree, this.builders(), this.parseCache, this.policy()),
    };
    this.branch.restored(await restoreBranch(reader, tip, head));
  }

  // The snapshot's state, caught up commit by commit to the tip when the branch moved on since it was
  // written; false when there is none to use or the branch cannot be followed from it (then the
  // restore reads the branch, with the snapshot's parse cache sparing it the source's parsing).
  private async resume(tip: string | undefined, round: RoundInputs): Promise<boolean> {
    const resumed = await this.snapshots?.resume();
    if (!resumed) return false;
    this.parseCache = parseCacheFrom(resumed.parse);
    if (!tip) return false;
    this.branch.restored(resumed.branch);
    if (!this.branch.holds(tip) && !(await this.followTo(tip, round))) return false;
    this.options.logger.info(
      { statusCommit: tip, snapshotCommit: resumed.branch.statusTip },
      "resumed from the snapshot",
    );
    if (resumed.branch.statusTip !== tip) this.snapshots?.changed();
    return true;
  }

  // What the snapshot holds now: the branch as held and the parse cache.
  private takeSnapshot() {
    const held = this.branch.held();
    return held?.statusTip
      ? { statusTip: held.statusTip, parts: snapshotParts(held, this.parseCache) }
      : undefined;
  }

  /** Writes the snapshot if the held tip moved since the last one (a graceful stop). */
  async close(): Promise<void> {
    await this.snapshots?.close();
  }

  private policy(): LoadPolicy {
    return this.options.policy ?? buildSettings().policy;
  }

  // The renders of the tree's Helm charts and the builds of its kustomizations, off the event loop
  // (helm runs and kustomizations are built only on a cache miss).
  private appBuilds(tree: FileTree): Promise<AppBuildOutputs> {
    return appBuildsFor(tree, this.builders(), this.parseCache, this.policy());
  }

  private builders(): AppBuilders {
    const defaults = this.options.charts && this.options.kustomize ? {} : defaultBuilders();
    return {
      charts: this.options.charts ?? defaults.charts,
      kustomize: this.options.kustomize ?? defaults.kustomize,
      teamSources: defaults.teamSources ?? defaultTeamSources(),
    };
  }

  /**
   * Publishes what the sync observed: observed blocks appended to status files the reconcile wrote
   * (files that no longer exist are skipped), and whole files the sync owns (status/inventory/). One
   * commit on top of the tip this reconciler knows, and only if something changed; "moved" when
   * another writer moved the branch (the next reconcile catches up, the next sync writes again).
   */
  async publishObserved(
    blocks: ReadonlyMap<string, string>,
    files: ReadonlyMap<string, string>,
    message: StatusMessage,
  ): Promise<"committed" | "unchanged" | "moved"> {
    const { state, statusTip: parent } = this.branch.snapshot();
    if (!state.sourceCommit) return "unchanged";
    const changes = this.branch.observedChanges(blocks, files);
    if (changes.size === 0) return "unchanged";
    const written = await this.publish({ parent, changes, message, sourceCommit: state.sourceCommit });
    if (written.status !== "committed") return written.status;
    this.branch.observedAt(written.oid, changes, blocks, files);
    this.snapshots?.changed();
    this.told(written.oid, message);
    return "committed";
  }

  // One status commit, published with compare-and-swap (status-commits.ts).
  private publish(commit: StatusCommit): Promise<Published> {
    const { repo, statusBranch, controllerId, sign, fence } = this.options;
    const signing = { ...(sign ? { sign } : {}), ...(fence ? { fence } : {}) };
    return publishStatus({ repo, statusBranch, controllerId, author: this.author(), ...signing }, commit);
  }

  private told(oid: string, message: StatusMessage): void {
    this.options.onCommit?.({ oid, message: messageText(message), kinds: eventKindsOf(message) });
  }

  /** The author of the commits this controller writes, stamped now. */
  author(): CommitAuthor {
    const now = (this.options.now ?? Date.now)();
    return { ...this.options.author, timestamp: Math.floor(now / 1000), timezoneOffset: 0 };
  }
}

/** How far back from the tip a snapshot's commit is looked for, one parent at a time. */
const MAX_CATCH_UP = 100;

// The commits from `from` (excluded) to `tip`, oldest first, when each has one parent and `from` is
// at most MAX_CATCH_UP commits back; undefined otherwise.
async function commitsSince(
  repo: FleetRepo,
  from: string | undefined,
  tip: string,
): Promise<string[] | undefined> {
  const since: string[] = [];
  for (let at = tip; at !== from; ) {
    if (since.length === MAX_CATCH_UP) return undefined;
    const parents = await repo.parentsOf(at).catch(() => [] as string[]);
    if (parents.length !== 1) return undefined;
    since.unshift(at);
    at = parents[0] as string;
  }
  return since;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
