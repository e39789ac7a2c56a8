import type { Logger } from "pino";
import { isTerminal } from "./errors.js";
import type { ReconcileReport } from "./reconciler.js";

/** When the next round is due without a new event, and why (a deadline, a status interval, progress). */
export interface Requeue {
  readonly afterMs: number;
  readonly reason: string;
}

/** The requeue due first, of those given. */
export function earliest(requeues: readonly (Requeue | undefined)[]): Requeue | undefined {
  return requeues.reduce<Requeue | undefined>(
    (first, next) => (next && (!first || next.afterMs < first.afterMs) ? next : first),
    undefined,
  );
}

/** What the loop drives: one reconcile at a time, each saying when it wants the next. */
export interface Reconciles {
  reconcile(): Promise<ReconcileReport & { readonly requeue?: Requeue }>;
}

export interface LoopOptions {
  /** Poll interval in milliseconds. */
  readonly intervalMs: number;
  readonly logger: Logger;
  /** Called after every reconcile, with its report or its error. */
  readonly onReconcile?: (result: { report?: ReconcileReport; error?: unknown; reason: string }) => void;
  /** The first wait after a failure that may pass, doubled after each further one up to the interval (default 1 s). */
  readonly backoffMs?: number;
}

/** Why the loop is not ready: a configuration error it does not retry, or the failures it backs off from. */
export type LoopProblem =
  | { readonly kind: "terminal"; readonly message: string }
  | {
      readonly kind: "failing";
      readonly message: string;
      readonly failures: number;
      readonly retryInMs: number;
    };

/**
 * Runs reconciles one at a time: on a timer, when a round asks for the next (its requeue), and
 * whenever something (a webhook, a probe that changed) asks. Requests that
 * arrive while a reconcile runs collapse into one more reconcile after it, so a burst of pushes costs
 * at most two. A reconcile that failed for a reason that may pass is tried again after a backoff
 * (1 s, 2 s, 4 s … up to the interval); one that failed on a configuration error (TerminalError) is
 * not tried again on the timer — only when something asks (a push), since only a change can fix it.
 * Nothing is lost either way: the next reconcile starts from what the status branch says.
 */
export class ReconcileLoop {
  private running: Promise<void> | undefined;
  private pending: string | undefined;
  private timer: NodeJS.Timeout | undefined;
  private started = false;
  private stopped = false;
  private succeeded = false;
  private failure: LoopProblem | undefined;
  private retry: NodeJS.Timeout | undefined;
  private requeued: NodeJS.Timeout | undefined;

  constructor(
    private readonly reconciler: Reconciles,
    private readonly options: LoopOptions,
  ) {}

  /** True once a reconcile has finished without error, and the last one did not end on a configuration error. */
  get ready(): boolean {
    return this.succeeded && this.failure?.kind !== "terminal";
  }

  /** What keeps the loop from reconciling, if anything (for /readyz and the log). */
  get problem(): LoopProblem | undefined {
    return this.failure;
  }

  /** Reconciles now, then every interval. */
  start(): void {
    this.started = true;
    this.trigger("start");
    this.timer = setInterval(() => this.trigger("poll"), this.options.intervalMs);
    this.timer.unref();
  }

  /**
   * Asks for a reconcile; returns at once; ignored before `start`. The timer's polls wait while a configuration error stands
   * or a backoff runs; any other reason (a webhook, a retry, a member's change) reconciles.
   */
  trigger(reason: string): void {
    // Before start (a standby replica) nothing runs: asking is for the loop that runs.
    if (this.stopped || !this.started) return;
    if (reason === "poll" && this.failure) return;
    if (this.running) {
      this.pending = reason;
      return;
    }
    this.running = this.run(reason).finally(() => {
      this.running = undefined;
      const next = this.pending;
      this.pending = undefined;
      if (next) this.trigger(next);
    });
  }

  /** Waits until no reconcile runs or is pending (for tests and graceful stops). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  /** Stops the timer and waits for the reconcile in flight. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.pending = undefined;
    if (this.timer) clearInterval(this.timer);
    if (this.retry) clearTimeout(this.retry);
    if (this.requeued) clearTimeout(this.requeued);
    await this.idle();
  }

  private async run(reason: string): Promise<void> {
    try {
      const report = await this.reconciler.reconcile();
      this.succeeded = true;
      this.failure = undefined;
      this.requeue(report.requeue);
      this.options.logger.info(
        { reason, result: report.result, sourceCommit: report.sourceCommit, valid: report.valid },
        "reconcile done",
      );
      this.options.onReconcile?.({ report, reason });
    } catch (error) {
      this.failed(error, reason);
      this.options.onReconcile?.({ error, reason });
    }
  }

  // The round's own next one replaces what an earlier round asked for.
  private requeue(requeue: Requeue | undefined): void {
    if (this.requeued) clearTimeout(this.requeued);
    this.requeued = undefined;
    if (!requeue || this.stopped) return;
    this.requeued = setTimeout(() => {
      this.requeued = undefined;
      this.trigger(requeue.reason);
    }, requeue.afterMs);
    this.requeued.unref();
  }

  private failed(error: unknown, reason: string): void {
    const message = error instanceof Error ? error.message : String(error);
    if (isTerminal(error)) {
      this.failure = { kind: "terminal", message };
      this.options.logger.error(
        { reason, error: message },
        "reconcile stopped on a configuration error; waiting for a change (a push) or a restart",
      );
      return;
    }
    const failures = this.failure?.kind === "failing" ? this.failure.failures + 1 : 1;
    const retryInMs = Math.min(
      this.options.intervalMs,
      (this.options.backoffMs ?? 1000) * 2 ** (failures - 1),
    );
    this.failure = { kind: "failing", message, failures, retryInMs };
    this.options.logger.error({ err: error, reason, failures, retryInMs }, "reconcile failed; backing off");
    if (this.retry) clearTimeout(this.retry);
    this.retry = setTimeout(() => {
      this.retry = undefined;
      this.trigger("retry");
    }, retryInMs);
    this.retry.unref();
  }
}
