import { observedChanges, withObservedBlocks } from "../reconcile/commit-additions.js";
import { EMPTY_STATE, type ReconcileOutcome, type ReconcileState } from "../reconcile/reconcile-step.js";
import type { RestoredBranch } from "./branch-restore.js";
import { adoptObserved, type CaughtUp, type Following } from "./leadership/standby-catch-up.js";

/** What the status branch holds as of the last reconcile: its tip and the state it describes. */
export interface BranchSnapshot {
  readonly statusTip: string | undefined;
  readonly state: ReconcileState;
  readonly syncFiles: ReadonlyMap<string, string>;
  /** False when the state was rebuilt from a branch gitfleet cannot vouch for: its files are observations only. */
  readonly trusted: boolean;
}

/**
 * The status branch as this process last knew it, held in memory only as a cache of what the branch
 * says: the reconcile's state and its tip, the observed blocks and whole files the sync and the
 * policies wrote, and what the next commit must still repair or sweep. Emptied by a restore
 * (branch-restore.ts), moved on by each commit that lands or is caught up with.
 */
export class BranchCache {
  private state: ReconcileState | undefined;
  /** The status commit `state` describes. */
  private tip: string | undefined;
  /** The source tree `state.tree` was read from, for diffs. */
  private tree: string | undefined;
  /** Observed blocks of status files, by path. */
  private observed = new Map<string, string>();
  /** Whole files of the writers beside the reconcile (inventories, agents, policies, autoscaling). */
  private syncFiles = new Map<string, string>();
  /** Whether the state comes from commits this process wrote or verified, rather than rebuilt. */
  private trusted = true;
  /** What the branch holds that the render does not give: written with the next commit. */
  private repair = new Map<string, string | null>();
  /** Remove, with the next valid render, the branch's files it does not account for. */
  private sweep = false;

  /** Whether a state is held for this tip (else the branch must be caught up with or restored). */
  holds(tip: string | undefined): boolean {
    return this.state !== undefined && tip === this.tip;
  }

  get renderedTree(): string | undefined {
    return this.tree;
  }

  snapshot(): BranchSnapshot {
    const { tip: statusTip, syncFiles, trusted } = this;
    return { statusTip, state: this.state ?? EMPTY_STATE, syncFiles, trusted };
  }

  observedBlock(path: string): string | undefined {
    return this.observed.get(path);
  }

  /** What a catch-up starts from; undefined when nothing is held. */
  following(): Following | undefined {
    if (!this.state || !this.tip) return undefined;
    const pending = this.repair.size > 0 || this.sweep;
    return {
      state: this.state,
      statusTip: this.tip,
      renderedTree: this.tree,
      trusted: this.trusted,
      pending,
    };
  }

  /** Moves on to a commit another writer made on top of the held one. */
  caughtUp(tip: string, caught: CaughtUp): void {
    if (caught.kind === "observed") {
      adoptObserved(caught.texts, this.observed, this.syncFiles);
      this.tip = tip;
      return;
    }
    for (const [path, text] of caught.outcome.changes) if (text === null) this.observed.delete(path);
    this.accept(caught.outcome, tip, caught.headTree);
  }

  /** All it holds, as a restore would give it (a snapshot's content); undefined when nothing is held. */
  held(): RestoredBranch | undefined {
    const { state, tip: statusTip, tree: renderedTree, observed, syncFiles, trusted, repair, sweep } = this;
    if (!state || !statusTip) return undefined;
    return { state, statusTip, renderedTree, observed, syncFiles, trusted, repair, sweep };
  }

  restored(restored: RestoredBranch): void {
    ({ state: this.state, statusTip: this.tip, renderedTree: this.tree } = restored);
    ({ observed: this.observed, syncFiles: this.syncFiles, trusted: this.trusted } = restored);
    ({ repair: this.repair, sweep: this.sweep } = restored);
  }

  /** Forgets the state (the objects it points into are gone): the next reconcile restores. */
  forget(): void {
    this.state = undefined;
  }

  accept(outcome: ReconcileOutcome, tip: string | undefined, headTree: string | undefined): void {
    this.state = outcome.state;
    this.tip = tip;
    if (outcome.valid) this.tree = headTree;
  }

  /** Whether the next valid render sweeps the branch's stray files; asked once. */
  takeSweep(): boolean {
    const sweep = this.sweep;
    this.sweep = false;
    return sweep;
  }

  pendingRepair(): ReadonlyMap<string, string | null> | undefined {
    return this.repair.size > 0 ? this.repair : undefined;
  }

  repaired(): void {
    this.repair = new Map();
  }

  /** Whole files a commit that landed wrote beside the render. */
  wroteFiles(files: ReadonlyMap<string, string | null>): void {
    for (const [path, text] of files)
      if (text === null) this.syncFiles.delete(path);
      else this.syncFiles.set(path, text);
  }

  /** Changes as the branch would hold them: each status file with its observed block. */
  carried(changes: ReadonlyMap<string, string | null>): Map<string, string | null> {
    return withObservedBlocks(changes, this.observed);
  }

  /** The reconcile's changes with observed blocks carried over; a removed file loses its block. */
  withObserved(changes: ReadonlyMap<string, string | null>): Map<string, string | null> {
    const carried = this.carried(changes);
    for (const [path, text] of changes) if (text === null) this.observed.delete(path);
    return carried;
  }

  /** What the sync's blocks and files change on the branch (see commit-additions.ts). */
  observedChanges(
    blocks: ReadonlyMap<string, string>,
    files: ReadonlyMap<string, string>,
  ): Map<string, string> {
    return observedChanges(this.state ?? EMPTY_STATE, this.observed, this.syncFiles, blocks, files);
  }

  /** An observation commit landed at `tip` with these changes. */
  observedAt(
    tip: string,
    changes: ReadonlyMap<string, string>,
    blocks: ReadonlyMap<string, string>,
    files: ReadonlyMap<string, string>,
  ): void {
    this.tip = tip;
    for (const [path, block] of blocks) if (changes.has(path)) this.observed.set(path, block);
    for (const [path, text] of files) this.syncFiles.set(path, text);
  }
}
