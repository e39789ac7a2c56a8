import type { Logger } from "pino";
import type { ReconcileReport } from "./reconciler.js";

/** What the loop drives: one reconcile at a time. */
export interface Reconciles {
  reconcile(): Promise<ReconcileReport>;
}

export interface LoopOptions {
  /** Poll interval in milliseconds. */
  readonly intervalMs: number;
  readonly logger: Logger;
  /** Called after every reconcile, with its report or its error. */
  readonly onReconcile?: (result: { report?: ReconcileReport; error?: unknown; reason: string }) => void;
}

/**
 * Runs reconciles one at a time: on a timer, and whenever something (a webhook) asks. Requests that
 * arrive while a reconcile runs collapse into one more reconcile after it, so a burst of pushes costs
 * at most two. A failed reconcile is logged and tried again on the next tick; nothing is lost, since
 * the next reconcile starts from what the status branch says.
 */
export class ReconcileLoop {
  private running: Promise<void> | undefined;
  private pending: string | undefined;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  private succeeded = false;

  constructor(
    private readonly reconciler: Reconciles,
    private readonly options: LoopOptions,
  ) {}

  /** True once a reconcile has finished without error. */
  get ready(): boolean {
    return this.succeeded;
  }

  /** Reconciles now, then every interval. */
  start(): void {
    this.trigger("start");
    this.timer = setInterval(() => this.trigger("poll"), this.options.intervalMs);
    this.timer.unref();
  }

  /** Asks for a reconcile; returns at once. */
  trigger(reason: string): void {
    if (this.stopped) return;
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
    await this.idle();
  }

  private async run(reason: string): Promise<void> {
    try {
      const report = await this.reconciler.reconcile();
      this.succeeded = true;
      this.options.logger.info(
        { reason, result: report.result, sourceCommit: report.sourceCommit, valid: report.valid },
        "reconcile done",
      );
      this.options.onReconcile?.({ report, reason });
    } catch (error) {
      this.options.logger.error({ err: error, reason }, "reconcile failed; trying again on the next tick");
      this.options.onReconcile?.({ error, reason });
    }
  }
}
