import type { Logger } from "pino";
import type { CommitStatus, Forge } from "../forge/forge.js";
import { DeliveryQueue } from "../util/delivery-queue.js";
import type { ReconcileReport } from "./reconciler.js";

export interface CommitStatusOptions {
  readonly forge: Forge;
  readonly logger: Logger;
  /** The status's name on the forge (default gitfleet/reconcile). */
  readonly context?: string;
  /** The dashboard's base URL: a status links to its page for the status commit. */
  readonly dashboardUrl?: string;
  /** Statuses waiting to be posted at most, the one in flight included (default 100). */
  readonly maxBacklog?: number;
}

/** Source commits whose last posted status is remembered, so a poll of the same tip posts nothing. */
const REMEMBERED = 1000;

/**
 * The controller's commit statuses: pending when a source commit is first seen, then success once
 * its status commit is published, or failure naming the first validation problem. Posting goes
 * through a delivery queue beside the loop and never delays it: a forge that is down only grows a
 * bounded backlog (a commit's newer status replaces its older one waiting; the oldest commits are
 * dropped and counted), and a status the forge client could not post after its retries is logged,
 * and posted again when the next poll reports the same commit.
 */
export class CommitStatuses {
  private readonly context: string;
  private readonly queue: DeliveryQueue<CommitStatus>;
  private readonly posted = new Map<string, CommitStatus["state"]>();

  constructor(private readonly options: CommitStatusOptions) {
    this.context = options.context ?? "gitfleet/reconcile";
    this.queue = new DeliveryQueue<CommitStatus>({
      maxBacklog: options.maxBacklog ?? 100,
      key: (status) => status.sha,
      deliver: (status) => this.post(status),
      onGiveUp: (status, reason) =>
        options.logger.warn(
          { sourceCommit: status.sha, state: status.state, forge: options.forge.kind },
          `commit status not posted: ${reason}`,
        ),
    });
  }

  /** Statuses waiting to be posted (the one in flight included). */
  get backlog(): number {
    return this.queue.backlog;
  }

  /** Statuses dropped because the backlog was full. */
  get dropped(): number {
    return this.queue.dropped;
  }

  /** Statuses the forge refused or never took. */
  get failed(): number {
    return this.queue.failed;
  }

  /** The source branch's tip, about to be reconciled. */
  seen(sourceCommit: string): void {
    if (this.posted.has(sourceCommit) || this.queue.latest(sourceCommit)) return;
    this.queue.add({
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
    // A poll of a tip already reported (or about to be) posts nothing again.
    const last = this.queue.latest(status.sha)?.state ?? this.posted.get(status.sha);
    if (last !== status.state) this.queue.add(status);
  }

  /** Waits until the backlog is empty (tests, a graceful stop). */
  idle(): Promise<void> {
    return this.queue.idle();
  }

  // One post; the forge client already retried rate limits and server errors, so what fails is final.
  private async post(
    status: CommitStatus,
  ): Promise<{ kind: "delivered" } | { kind: "failed"; reason: string }> {
    try {
      await this.options.forge.setStatus(status);
    } catch (error) {
      return { kind: "failed", reason: (error as Error).message };
    }
    this.posted.delete(status.sha);
    this.posted.set(status.sha, status.state);
    if (this.posted.size > REMEMBERED) this.posted.delete(this.posted.keys().next().value as string);
    return { kind: "delivered" };
  }
}
