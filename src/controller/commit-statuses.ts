import type { Logger } from "pino";
import type { CommitStatus, Forge } from "../forge/forge.js";
import type { ReconcileReport } from "./reconciler.js";

export interface CommitStatusOptions {
  readonly forge: Forge;
  readonly logger: Logger;
  /** The status's name on the forge (default gitfleet/reconcile). */
  readonly context?: string;
  /** The dashboard's base URL: a status links to its page for the status commit. */
  readonly dashboardUrl?: string;
  /** Statuses waiting to be posted at most; the oldest are dropped past it (default 100). */
  readonly maxBacklog?: number;
}

/** Source commits whose last status is remembered, so a poll of the same tip posts nothing. */
const REMEMBERED = 1000;

/**
 * The controller's commit statuses: pending when a source commit is first seen, then success once
 * its status commit is published, or failure naming the first validation problem. Posting happens
 * beside the loop, one request at a time, and never delays it: a forge that is down only grows a
 * bounded backlog (the newest status per commit kept, the oldest commits dropped and counted), and
 * what could not be posted after the forge client's retries is logged and left.
 */
export class CommitStatuses {
  private readonly context: string;
  private readonly queue = new Map<string, CommitStatus>();
  private readonly posted = new Map<string, CommitStatus["state"]>();
  private worker: Promise<void> | undefined;
  /** Statuses dropped because the backlog was full, and statuses the forge refused or never took. */
  dropped = 0;
  failed = 0;

  constructor(private readonly options: CommitStatusOptions) {
    this.context = options.context ?? "gitfleet/reconcile";
  }

  /** Statuses waiting to be posted. */
  get backlog(): number {
    return this.queue.size;
  }

  /** The source branch's tip, about to be reconciled. */
  seen(sourceCommit: string): void {
    if (this.posted.has(sourceCommit) || this.queue.has(sourceCommit)) return;
    this.enqueue({
      sha: sourceCommit,
      state: "pending",
      context: this.context,
      description: "gitfleet is reconciling this commit",
    });
  }

  /** A reconcile's outcome for its source commit. */
  reconciled(report: ReconcileReport): void {
    const link =
      this.options.dashboardUrl && report.statusCommit
        ? { targetUrl: `${this.options.dashboardUrl.replace(/\/+$/, "")}/#/commits/${report.statusCommit}` }
        : {};
    const status: CommitStatus = report.valid
      ? {
          sha: report.sourceCommit,
          state: "success",
          context: this.context,
          description: `reconciled${report.statusCommit ? `: status commit ${report.statusCommit.slice(0, 12)}` : ""}`,
          ...link,
        }
      : {
          sha: report.sourceCommit,
          state: "failure",
          context: this.context,
          description: `invalid (${report.errors} error${report.errors === 1 ? "" : "s"})${report.firstError ? `: ${report.firstError}` : ""}`,
          ...link,
        };
    // A poll of a tip already reported posts nothing again.
    if (!this.queue.has(status.sha) && this.posted.get(status.sha) === status.state) return;
    this.enqueue(status);
  }

  /** Waits until the backlog is empty (tests, a graceful stop). */
  async idle(): Promise<void> {
    while (this.worker) await this.worker;
  }

  private enqueue(status: CommitStatus): void {
    this.queue.delete(status.sha);
    this.queue.set(status.sha, status);
    const max = this.options.maxBacklog ?? 100;
    for (const sha of this.queue.keys()) {
      if (this.queue.size <= max) break;
      this.queue.delete(sha);
      this.dropped++;
    }
    this.worker ??= this.drain().finally(() => {
      this.worker = undefined;
    });
  }

  private async drain(): Promise<void> {
    for (;;) {
      const next = this.queue.entries().next();
      if (next.done) return;
      const [sha, status] = next.value;
      this.queue.delete(sha);
      try {
        await this.options.forge.setStatus(status);
        this.remember(sha, status.state);
      } catch (error) {
        this.failed++;
        this.options.logger.warn(
          { sourceCommit: sha, state: status.state, forge: this.options.forge.kind },
          `commit status not posted: ${(error as Error).message}`,
        );
      }
    }
  }

  private remember(sha: string, state: CommitStatus["state"]): void {
    this.posted.delete(sha);
    this.posted.set(sha, state);
    if (this.posted.size > REMEMBERED) this.posted.delete(this.posted.keys().next().value as string);
  }
}
