import type { Logger } from "pino";
import { buildSettings } from "../builds/build-settings.js";
import type { KustomizeBuilder } from "../builds/kustomize-builder.js";
import { type AppBuildOutputs, appBuildsFor, defaultBuilders } from "../builds/load-with-builds.js";
import type { CommitVerifier } from "../git/commit-verifier.js";
import type { FleetRepo } from "../git/fleet-repo.js";
import { objectId } from "../git/object-batch.js";
import { readTreeFiles, topLevelNames } from "../git/read-tree.js";
import { type Published, publishStatusCommit } from "../git/status-branch.js";
import type { CommitAuthor } from "../git/status-writer.js";
import { diffTrees } from "../git/tree-diff.js";
import type { ChartRenderer } from "../helm/chart-renderer.js";
import type { FileTree } from "../model/file-tree.js";
import { createParseCache, loadFleet, type ParseCache } from "../model/load-fleet.js";
import type { LoadPolicy } from "../model/load-policy.js";
import { noObservations, type ObservedState } from "../model/observed-state.js";
import { formatProblem } from "../model/problem.js";
import {
  CONTROLLER_TRAILER,
  EVENT_TRAILER,
  type EventKind,
  hasStatusTrailers,
  SOURCE_COMMIT_TRAILER,
  trailerBlock,
} from "../model/trailers.js";
import { ALL } from "../reconcile/affected-apps.js";
import { recordedVerdict, withAttachment, withRepair } from "../reconcile/commit-additions.js";
import { strayFiles } from "../reconcile/rebuild-state.js";
import {
  EMPTY_STATE,
  observationStep,
  observationsMoved,
  type ReconcileOutcome,
  type ReconcileState,
  reconcileStep,
} from "../reconcile/reconcile-step.js";
import { OWNED_DIRECTORIES, statusFileKind } from "../status/layout.js";
import { joinObserved, splitObserved } from "../status/observed-status.js";
import { eventKindOf, eventKindsOf, messageText, type StatusMessage } from "../status/status-message.js";
import { isSyncFile, restoreBranch, wantedSource } from "./branch-restore.js";
import { ReconcileError, TerminalError } from "./errors.js";
import { Stopwatch } from "./stopwatch.js";

/** How the loop reaches Git and signs its work. */
export interface ReconcilerOptions {
  readonly repo: FleetRepo;
  /** The branch people commit intent to. */
  readonly branch: string;
  /** The branch gitfleet writes rendered/ and status/ to. */
  readonly statusBranch: string;
  readonly author: { readonly name: string; readonly email: string };
  /** Names this controller in the `Gitfleet-Controller` trailer of its commits. */
  readonly controllerId: string;
  readonly logger: Logger;
  /** Tries to publish a status commit before giving up when other writers keep moving the branch. Default 6. */
  readonly maxAttempts?: number;
  /** The key of Secrets' value digests in rendered/ (the operator's; see render/secrets.ts). */
  readonly secretDigestKey?: Uint8Array;
  /** Renders Helm apps' charts (default: helm from the environment, see helm/helm-environment.ts). */
  readonly charts?: ChartRenderer;
  /** Builds Kustomize apps off the event loop (default: the process's build worker). */
  readonly kustomize?: KustomizeBuilder;
  /** What the operator bounds and allows in what the fleet repo builds (default: the process's, helm/build-settings.ts). */
  readonly policy?: LoadPolicy;
  /** Signs status commits when given (isomorphic-git's onSign). */
  readonly sign?: (payload: string) => Promise<string>;
  /**
   * Checks a status commit's signature against the trusted keys. With it, a tip that verifies is
   * restored as it is; without it (no signing configured) or for a tip that does not verify, the
   * state is rebuilt by rendering the source again (see reconcile/rebuild-state.ts).
   */
  readonly verify?: CommitVerifier;
  /** Milliseconds since the epoch; injectable for tests. */
  readonly now?: () => number;
  /** Waits between attempts; injectable for tests. */
  readonly sleep?: (ms: number) => Promise<void>;
  /** Told as a reconcile finishes each stage (fetch, restore, read, reconcile, write, publish): progress output. */
  readonly onProgress?: (stage: string) => void;
  /** Told of the source branch's tip at the start of each reconcile, before it is reconciled (commit statuses' pending). */
  readonly onSource?: (sourceCommit: string) => void;
  /** Called after every status commit this reconciler published, with its message and the kinds of event it records. */
  readonly onCommit?: (commit: PublishedCommit) => void;
  /**
   * Checked right before the status branch moves: throws when this process may not write (a standby,
   * or a leader whose Lease ran out — see kube/leader-lease.ts). The branch's compare-and-swap stays
   * the last line of defence.
   */
  readonly fence?: () => void;
  /** Called after a stage of the publish, for crash tests: "written" (objects on disk, branch not moved) or "published". */
  readonly onStage?: (stage: "written" | "published") => void | Promise<void>;
}

// Whether a commit's changes (as Git's diff gives them) are exactly these files, byte for byte.
function sameChanges(
  files: ReadonlyMap<string, string | null>,
  written: readonly { readonly path: string; readonly oid: string | null }[],
): boolean {
  if (files.size !== written.length) return false;
  const encoder = new TextEncoder();
  return written.every(({ path, oid }) => {
    const text = files.get(path);
    if (text === undefined) return false;
    return text === null ? oid === null : oid === objectId("blob", encoder.encode(text));
  });
}

/** A status commit this reconciler published: its id, its message, the kinds of event it records (the trailer's first). */
export interface PublishedCommit {
  readonly oid: string;
  readonly message: string;
  readonly kinds: readonly EventKind[];
}

/** One commit of another writer on top of this state: its id, its parent (this state's tip), the state. */
interface CatchUp {
  readonly tip: string;
  readonly base: string;
  readonly state: ReconcileState;
}

export interface ReconcileReport {
  /** up-to-date: the source commit was reconciled already (and no observation moved anything); committed: a status commit was published. */
  readonly result: "up-to-date" | "committed" | "unchanged";
  readonly sourceCommit: string;
  readonly statusCommit: string | undefined;
  readonly valid: boolean;
  readonly errors: number;
  /** The first error of an invalid source commit, with its file and line (when this reconcile found it). */
  readonly firstError?: string;
  readonly attempts: number;
  /** Files changed on the status branch. */
  readonly filesChanged: number;
  /** Milliseconds per stage: fetch, restore, read, reconcile, write, publish. */
  readonly durationsMs: Readonly<Record<string, number>>;
}

/** Files besides the render that the next status commit carries (status/autoscaling/), and why they changed. */
export interface Attachment {
  /** Only the files that differ from the branch (null deletes). */
  readonly files: ReadonlyMap<string, string | null>;
  /** Lines for the commit message. */
  readonly notes: readonly string[];
  /** Called once a commit carrying them landed. */
  readonly committed: () => void;
}

export { wantedSource } from "./branch-restore.js";
export { ReconcileError, TerminalError } from "./errors.js";

/**
 * The Git reconcile loop's single step, kept alive between reconciles: fetch, read the source branch's
 * tip straight from Git objects, reconcile it against the state of the last status commit, and publish
 * one status commit with a compare-and-swap. State lives in memory only as a cache of what the status
 * branch says: on start, or when another writer moved the branch, it is rebuilt from the branch, so a
 * crash at any point converges on restart and two controllers never lose each other's work.
 */
export class Reconciler {
  private state: ReconcileState | undefined;
  /** The status commit `state` describes. */
  private statusTip: string | undefined;
  /** The source tree `state.tree` was read from, for diffs. */
  private renderedTree: string | undefined;
  private readonly parseCache: ParseCache = createParseCache();
  /** What the sync wrote on the status branch: observed blocks of status files, and whole files it owns (inventories). */
  private observed = new Map<string, string>();
  private syncFiles = new Map<string, string>();
  /** Whether the state comes from commits this process wrote or verified, rather than rebuilt. */
  private trusted = true;
  /** What the status branch holds that this render does not give: written with the next commit. */
  private repair = new Map<string, string | null>();
  /** Remove, with the next render, the files of the branch it does not account for (see strayFiles). */
  private sweep = false;
  private observations: (() => ObservedState) | undefined;
  private attached: ((syncFiles: ReadonlyMap<string, string>) => Attachment) | undefined;

  constructor(private readonly options: ReconcilerOptions) {}

  /** The fleet repository this reconciler reads and writes. */
  get repository(): FleetRepo {
    return this.options.repo;
  }

  /** The status branch it writes. */
  get statusBranch(): string {
    return this.options.statusBranch;
  }

  /**
   * Where observations come from (cluster conditions, workloads' replicas, the time): the render takes
   * them in, and a change that moves replicas is reconciled even when the source branch did not move.
   */
  observeWith(source: () => ObservedState): void {
    this.observations = source;
  }

  /**
   * Files the controller keeps on the status branch besides the render (autoscalers' state): they go
   * with the next reconcile's commit, or in a commit of their own when nothing else changed.
   */
  attachWith(source: (syncFiles: ReadonlyMap<string, string>) => Attachment): void {
    this.attached = source;
  }

  /** The observed block of a status file on the branch (status/clusters/<c>.yaml's holds the probes' condition). */
  observedBlock(path: string): string | undefined {
    return this.observed.get(path);
  }

  /**
   * A standby's warm state: fetches, and restores from the status branch's tip when it moved — what a
   * takeover's first round would do, done ahead so that round starts from it. Writes nothing.
   */
  async follow(): Promise<"current" | "replayed" | "restored"> {
    const { repo, branch, statusBranch } = this.options;
    await repo.fetch([branch, statusBranch]);
    const head = await repo.branchTip(branch);
    const tip = await repo.branchTip(statusBranch);
    if (!head || (this.state && tip === this.statusTip)) return "current";
    if (tip && (await this.catchUp(tip))) return "replayed";
    await this.restore(tip, head);
    return "restored";
  }

  // The status branch moved by one commit of another writer (the leader) on top of this state: a
  // commit of what the members reported is taken on as it is, a reconcile of a new source commit is
  // replayed; false when neither can be (another parent, a hand edit, a repair pending) — the caller
  // then restores from the branch.
  private async catchUp(tip: string): Promise<boolean> {
    const { repo } = this.options;
    const state = this.state;
    const base = this.statusTip;
    if (!state?.model || !base || this.repair.size > 0 || this.sweep) return false;
    const parents = await repo.parentsOf(tip);
    if (parents.length !== 1 || parents[0] !== base) return false;
    const source = trailerBlock(await repo.commitMessage(tip))?.get(SOURCE_COMMIT_TRAILER);
    if (!source) return false;
    const at = { tip, base, state };
    return source === state.sourceCommit ? this.adoptObserved(at) : this.replay(at, source);
  }

  // The leader's reconcile of `source`, recomputed: when this replica renders that commit to exactly
  // the files it changed — same paths, same bytes — the state moves on to it as if this replica had
  // written it, without reading the whole branch again.
  private async replay(at: CatchUp, source: string): Promise<boolean> {
    const { repo } = this.options;
    if (!this.renderedTree) return false;
    // A remote's shallow cache holds the source branch's tip only: a commit the leader rendered
    // before the tip moved on is not there, and the branch is restored instead.
    if (
      !(await repo.treeOf(source).then(
        () => true,
        () => false,
      ))
    )
      return false;
    const observations = this.observations?.() ?? noObservations((this.options.now ?? Date.now)());
    const { outcome, headTree } = await this.step(at.state, source, new Stopwatch(), observations);
    const written = await diffTrees(
      repo.gitdir,
      repo.cache,
      await repo.treeOf(at.base),
      await repo.treeOf(at.tip),
    );
    if (!sameChanges(this.carried(outcome.changes), written)) return false;
    for (const [path, text] of outcome.changes) if (text === null) this.observed.delete(path);
    this.accept(outcome, at.tip, headTree);
    return true;
  }

  // The leader's commit of what the members reported: when it changed only observed blocks of status
  // files whose rendered part is the state's, and files the sync and the policies own, it is taken on
  // as it is — nothing rendered changed. A state that can vouch for its branch (its inventories are
  // used) takes on only a commit its verifier trusts.
  private async adoptObserved(at: CatchUp): Promise<boolean> {
    const texts = await this.observationAt(at);
    if (!texts) return false;
    for (const [path, text] of texts) {
      if (isSyncFile(path)) {
        if (text === null) this.syncFiles.delete(path);
        else this.syncFiles.set(path, text);
        continue;
      }
      const { observed } = splitObserved(text ?? "");
      if (observed === undefined) this.observed.delete(path);
      else this.observed.set(path, observed);
    }
    this.statusTip = at.tip;
    return true;
  }

  // What an observation commit changed, by path (null: removed); undefined when it changed anything else.
  private async observationAt({
    tip,
    base,
    state,
  }: CatchUp): Promise<Map<string, string | null> | undefined> {
    const { repo, verify } = this.options;
    const changed = await diffTrees(repo.gitdir, repo.cache, await repo.treeOf(base), await repo.treeOf(tip));
    const observedOnly = (path: string) => isSyncFile(path) || statusFileKind(path)?.observedBySync === true;
    if (changed.length === 0 || !changed.every(({ path }) => observedOnly(path))) return undefined;
    if (this.trusted && !(verify && (await verify(repo.gitdir, repo.cache, tip)).ok)) return undefined;
    const paths = new Set(changed.map((c) => c.path));
    const raw = await readTreeFiles(repo.gitdir, repo.cache, await repo.treeOf(tip), (path) =>
      path.endsWith("/") ? [...paths].some((p) => p.startsWith(path)) : paths.has(path),
    );
    const texts = new Map<string, string | null>();
    for (const { path } of changed) {
      const bytes = raw.get(path);
      texts.set(path, bytes ? new TextDecoder().decode(bytes) : null);
    }
    // A status file removed, or whose rendered part moved, is not an observation.
    const rendered = (path: string, text: string | null) =>
      !isSyncFile(path) && (text === null || splitObserved(text).base !== state.files.get(path));
    return [...texts].some(([path, text]) => rendered(path, text)) ? undefined : texts;
  }

  /** Reconciles the source branch's tip; retries, with jittered backoff, while other writers move the status branch. */
  async reconcile(): Promise<ReconcileReport> {
    if (this.options.branch === this.options.statusBranch)
      throw new TerminalError(
        `the status branch must differ from the source branch (both are "${this.options.branch}"): gitfleet never writes to people's branch`,
      );
    const maxAttempts = this.options.maxAttempts ?? 6;
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      const report = await this.attempt(attempt);
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

  private async attempt(attempt: number): Promise<ReconcileReport | undefined> {
    const { repo, branch, statusBranch, logger } = this.options;
    const watch = new Stopwatch(undefined, this.options.onProgress);
    await repo.fetch([branch, statusBranch]);
    watch.lap("fetch");
    const head = await repo.branchTip(branch);
    if (!head) throw new TerminalError(`branch ${branch} not found in ${repo.describe()}`);
    this.options.onSource?.(head);
    const tip = await repo.branchTip(statusBranch);
    // Another writer moved the branch (the leader before this one): its commit replayed when this
    // state reproduces it exactly, else the state restored from the branch.
    if (!this.state || tip !== this.statusTip)
      if (!(tip && (await this.catchUp(tip)))) await this.restore(tip, head);
    watch.lap("restore");
    const { next, attachment, repair } = await this.nextCommit(head, watch);
    if (!next) {
      // Already reconciled — by this process, an earlier one or a controller that won the race: the
      // verdict is the one recorded, so an invalid commit stays invalid however often it is asked.
      const recorded = recordedVerdict(this.state ?? EMPTY_STATE, head);
      return {
        result: "up-to-date",
        sourceCommit: head,
        statusCommit: tip,
        ...recorded,
        attempts: attempt,
        filesChanged: 0,
        durationsMs: watch.laps(),
      };
    }
    const { outcome, headTree } = next;
    const message = outcome.message;
    const published = await this.publish(
      tip,
      this.withObserved(outcome.changes),
      message,
      head,
      async (written) => {
        watch.lap("write");
        if (written) await this.options.onStage?.("written");
      },
    );
    const errorProblems = outcome.problems.filter((p) => p.severity === "error");
    const first = errorProblems[0];
    const base = {
      sourceCommit: head,
      valid: outcome.valid,
      errors: errorProblems.length,
      ...(first ? { firstError: formatProblem(first) } : {}),
      attempts: attempt,
      filesChanged: outcome.changes.size,
    };
    if (published.status === "unchanged") {
      this.landed({ outcome, headTree }, tip, undefined, repair);
      return { ...base, result: "unchanged", statusCommit: tip, durationsMs: watch.laps() };
    }
    if (published.status === "moved") return undefined;
    const written = published;
    await this.options.onStage?.("published");
    this.published(written.oid, message);
    watch.lap("publish");
    this.landed({ outcome, headTree }, written.oid, attachment, repair);
    if (await repo.compactCache()) {
      // The cache was started afresh: what the state points into is gone, so the next reconcile rebuilds it.
      this.state = undefined;
      logger.info({ repo: repo.describe() }, "cache repository started afresh (too many packfiles)");
    }
    logger.info(
      {
        sourceCommit: head,
        statusCommit: written.oid,
        valid: outcome.valid,
        errors: errorProblems.length,
        scope: outcome.scope === ALL ? "all" : outcome.scope.size,
        filesChanged: outcome.changes.size,
        objectsWritten: written.objectsWritten,
        clusters: outcome.summary ? Object.fromEntries(outcome.summary.clusters) : {},
        durationsMs: watch.laps(),
        attempt,
      },
      message.head.line,
    );
    return { ...base, result: "committed", statusCommit: written.oid, durationsMs: watch.laps() };
  }

  // What the next status commit carries: the reconcile's outcome, the autoscalers' files and a
  // repair of what the branch held that this controller does not render.
  private async nextCommit(head: string, watch: Stopwatch) {
    const found = this.swept(await this.nextOutcome(head, watch));
    const attachment = this.attached?.(this.syncFiles);
    const repair = this.repair.size > 0 ? this.repair : undefined;
    const state = this.state ?? EMPTY_STATE;
    const next = withRepair(
      withAttachment(found, attachment, state, this.renderedTree),
      repair,
      state,
      this.renderedTree,
    );
    return { next, attachment, repair };
  }

  // After a rebuild that could not render, the first valid render removes the branch's files it
  // does not account for.
  private swept(
    found: { outcome: ReconcileOutcome; headTree: string | undefined } | undefined,
  ): { outcome: ReconcileOutcome; headTree: string | undefined } | undefined {
    if (!this.sweep || !found?.outcome.valid) return found;
    this.sweep = false;
    const stray = strayFiles(found.outcome.state);
    if (stray.length === 0) return found;
    const changes = new Map(found.outcome.changes);
    const files = new Map(found.outcome.state.files);
    for (const path of stray) {
      changes.set(path, null);
      files.delete(path);
    }
    return { ...found, outcome: { ...found.outcome, changes, state: { ...found.outcome.state, files } } };
  }

  // A commit landed (or changed nothing): the state moves on, and what it carried is done.
  private landed(
    next: { outcome: ReconcileOutcome; headTree: string | undefined },
    statusTip: string | undefined,
    attachment: Attachment | undefined,
    repair: ReadonlyMap<string, string | null> | undefined,
  ): void {
    this.accept(next.outcome, statusTip, next.headTree);
    if (attachment) this.attachmentCommitted(attachment);
    if (repair) this.repair = new Map();
  }

  // The source branch's new tip reconciled, or — with the tip reconciled already — what new
  // observations move (failover); undefined when neither changes anything.
  private async nextOutcome(
    head: string,
    watch: Stopwatch,
  ): Promise<{ outcome: ReconcileOutcome; headTree: string | undefined } | undefined> {
    const state = this.state ?? EMPTY_STATE;
    // Without a source of observations (no sync), the render still needs the time: failover records carry it.
    const observations = this.observations?.() ?? noObservations((this.options.now ?? Date.now)());
    if (state.sourceCommit === head) {
      if (!this.observations || !observationsMoved(state, observations)) return undefined;
      const outcome = observationStep(state, observations, this.options.secretDigestKey);
      watch.lap("reconcile");
      return { outcome, headTree: this.renderedTree };
    }
    await this.refuseOwnCommit(head);
    return this.step(state, head, watch, observations);
  }

  private attachmentCommitted(attachment: Attachment): void {
    if (attachment.files.size === 0) return;
    for (const [path, text] of attachment.files)
      if (text === null) this.syncFiles.delete(path);
      else this.syncFiles.set(path, text);
    attachment.committed();
  }

  private accept(
    outcome: ReconcileOutcome,
    statusTip: string | undefined,
    headTree: string | undefined,
  ): void {
    this.state = outcome.state;
    this.statusTip = statusTip;
    if (outcome.valid) this.renderedTree = headTree;
  }

  private async step(
    state: ReconcileState,
    head: string,
    watch: Stopwatch,
    observations: ObservedState,
  ): Promise<{ outcome: ReconcileOutcome; headTree: string }> {
    const { repo } = this.options;
    const headTree = await repo.treeOf(head);
    let tree: FileTree;
    let changedPaths: readonly string[] | typeof ALL;
    // Objects of the last rendered tree can be gone (a cache started afresh): then everything is read again.
    const changes =
      state.model && this.renderedTree
        ? await diffTrees(repo.gitdir, repo.cache, this.renderedTree, headTree).catch(() => undefined)
        : undefined;
    if (state.model && changes) {
      const next = new Map(state.tree);
      for (const change of changes) {
        if (change.oid === null || !wantedSource(change.path)) next.delete(change.path);
        else next.set(change.path, await repo.readBlob(change.oid));
      }
      tree = next;
      changedPaths = changes.map((c) => c.path);
    } else {
      tree = await readTreeFiles(repo.gitdir, repo.cache, headTree, wantedSource);
      changedPaths = ALL;
    }
    const { charts, kustomize } = await this.appBuilds(tree);
    watch.lap("read");
    const outcome = reconcileStep(state, {
      sourceCommit: head,
      tree,
      changedPaths,
      cache: this.parseCache,
      ...(charts ? { charts } : {}),
      ...(kustomize ? { kustomize } : {}),
      policy: this.policy(),
      observations,
      ...(this.options.secretDigestKey ? { secretDigestKey: this.options.secretDigestKey } : {}),
    });
    watch.lap("reconcile");
    return { outcome, headTree };
  }

  // Rebuilds the state from the status branch (controller/branch-restore.ts): as it is when its tip
  // is signed by a trusted key, else by rendering the source again.
  private async restore(tip: string | undefined, head: string): Promise<void> {
    const restored = await restoreBranch(
      {
        repo: this.options.repo,
        logger: this.options.logger,
        ...(this.options.verify ? { verify: this.options.verify } : {}),
        now: this.options.now ?? Date.now,
        ...(this.options.secretDigestKey ? { secretDigestKey: this.options.secretDigestKey } : {}),
        load: async (tree) => {
          const { charts, kustomize } = await this.appBuilds(tree);
          return loadFleet(tree, this.parseCache, charts, this.policy(), kustomize);
        },
      },
      tip,
      head,
    );
    this.state = restored.state;
    this.statusTip = restored.statusTip;
    this.renderedTree = restored.renderedTree;
    this.observed = restored.observed;
    this.syncFiles = restored.syncFiles;
    this.trusted = restored.trusted;
    this.repair = restored.repair;
    this.sweep = restored.sweep;
  }

  private policy(): LoadPolicy {
    return this.options.policy ?? buildSettings().policy;
  }

  // The renders of the tree's Helm charts and the builds of its kustomizations, off the event loop
  // (helm runs and kustomizations are built only on a cache miss).
  private appBuilds(tree: FileTree): Promise<AppBuildOutputs> {
    const defaults = this.options.charts && this.options.kustomize ? {} : defaultBuilders();
    const builders = {
      charts: this.options.charts ?? defaults.charts,
      kustomize: this.options.kustomize ?? defaults.kustomize,
    };
    return appBuildsFor(tree, builders, this.parseCache, this.policy());
  }

  /** What the status branch holds as of the last reconcile: its tip and the state it describes. */
  snapshot(): {
    statusTip: string | undefined;
    state: ReconcileState;
    syncFiles: ReadonlyMap<string, string>;
    /** False when the state was rebuilt from a branch gitfleet cannot vouch for: its files are observations only. */
    trusted: boolean;
  } {
    return {
      statusTip: this.statusTip,
      state: this.state ?? EMPTY_STATE,
      syncFiles: this.syncFiles,
      trusted: this.trusted,
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
    const state = this.state;
    if (!state?.sourceCommit) return "unchanged";
    const changes = this.observedChanges(state, blocks, files);
    if (changes.size === 0) return "unchanged";
    const written = await this.publish(this.statusTip, changes, message, state.sourceCommit);
    if (written.status !== "committed") return written.status;
    this.statusTip = written.oid;
    this.published(written.oid, message);
    for (const [path, block] of blocks) if (changes.has(path)) this.observed.set(path, block);
    for (const [path, text] of files) this.syncFiles.set(path, text);
    return "committed";
  }

  private observedChanges(
    state: ReconcileState,
    blocks: ReadonlyMap<string, string>,
    files: ReadonlyMap<string, string>,
  ): Map<string, string> {
    const changes = new Map<string, string>();
    for (const [path, block] of blocks) {
      const base = state.files.get(path);
      if (base !== undefined && this.observed.get(path) !== block)
        changes.set(path, joinObserved(base, block));
    }
    for (const [path, text] of files) if (this.syncFiles.get(path) !== text) changes.set(path, text);
    return changes;
  }

  // One status commit on top of `parent`, published with compare-and-swap, with the trailers that
  // name its source commit, this controller and the event it records.
  private publish(
    parent: string | undefined,
    changes: ReadonlyMap<string, string | null>,
    message: StatusMessage,
    sourceCommit: string,
    onWritten?: (written: boolean) => Promise<void>,
  ): Promise<Published> {
    const { fence } = this.options;
    return publishStatusCommit(this.options.repo, {
      branch: this.options.statusBranch,
      onWritten: async (written) => {
        await onWritten?.(written);
        fence?.();
      },
      parent,
      changes,
      message: messageText(message),
      trailers: [
        [SOURCE_COMMIT_TRAILER, sourceCommit],
        [CONTROLLER_TRAILER, this.options.controllerId],
        [EVENT_TRAILER, eventKindOf(message)],
      ],
      author: this.author(),
      ...(this.options.sign ? { sign: this.options.sign } : {}),
    });
  }

  private published(oid: string, message: StatusMessage): void {
    this.options.onCommit?.({ oid, message: messageText(message), kinds: eventKindsOf(message) });
  }

  // The reconcile's changes with each status file's observed block carried over; a removed file loses its block.
  private withObserved(changes: ReadonlyMap<string, string | null>): Map<string, string | null> {
    const carried = this.carried(changes);
    for (const [path, text] of changes) if (text === null) this.observed.delete(path);
    return carried;
  }

  // The changes as the branch would hold them: each status file with its observed block.
  private carried(changes: ReadonlyMap<string, string | null>): Map<string, string | null> {
    const carried = new Map(changes);
    for (const [path, text] of changes) {
      const block = this.observed.get(path);
      if (text !== null && block !== undefined) carried.set(path, joinObserved(text, block));
    }
    return carried;
  }

  // gitfleet never reacts to its own commits: a source branch whose tip is a status commit is
  // misconfigured. A status commit is one whose trailer block (its last paragraph, not lines quoted
  // anywhere in a message) names a source commit and a controller, and whose tree holds nothing but
  // what gitfleet writes — so a person's commit that quotes a status commit is reconciled as usual.
  private async refuseOwnCommit(head: string): Promise<void> {
    const { repo } = this.options;
    if (!hasStatusTrailers(await repo.commitMessage(head))) return;
    const names = await topLevelNames(repo.gitdir, repo.cache, await repo.treeOf(head));
    if (names.some((name) => !OWNED_DIRECTORIES.includes(name))) return;
    throw new TerminalError(
      `the tip of ${this.options.branch} (${head.slice(0, 7)}) is a gitfleet status commit; point --branch at the branch people write`,
    );
  }

  /** The author of the commits this controller writes, stamped now. */
  author(): CommitAuthor {
    const now = (this.options.now ?? Date.now)();
    return { ...this.options.author, timestamp: Math.floor(now / 1000), timezoneOffset: 0 };
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
