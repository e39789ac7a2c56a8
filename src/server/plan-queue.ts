import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { type PlanOutcome, type PlanRevisionsInput, RevisionError } from "../revisions/plan-revisions.js";

/** What asking for a plan gives: the plan, or that the queue is full, or that the client left. */
export type QueuedPlan =
  | { readonly outcome: PlanOutcome }
  | { readonly busy: true }
  | { readonly cancelled: true };

/** Bounds on plans over HTTP. */
export interface PlanQueueOptions {
  /** Plans waiting behind the running one; more are refused (429). Default 4. */
  readonly maxQueued?: number;
  /** A plan taking longer is ended. Default 120 s. */
  readonly timeoutMs?: number;
  /** The heap a plan's worker may use. Default 1024 MiB. */
  readonly memoryMb?: number;
  /** Told when a plan's worker starts, and when a plan is cancelled (its client left). */
  readonly onEvent?: (event: "started" | "cancelled") => void;
}

interface Job {
  readonly input: PlanRevisionsInput;
  readonly signal: AbortSignal;
  readonly resolve: (plan: QueuedPlan) => void;
  readonly reject: (error: Error) => void;
}

/**
 * Plans one at a time, each in a worker thread of its own with a memory limit and a deadline, behind
 * a bounded queue: a burst of requests is refused rather than queued without end, a plan whose client
 * left is dropped (or its worker ended), and nothing a plan does — its CPU, its memory, what its
 * fleet repo does to JavaScript's built-ins — reaches the controller's own loop.
 */
export class PlanQueue {
  private readonly waiting: Job[] = [];
  private running = false;

  constructor(private readonly options: PlanQueueOptions = {}) {}

  /** Plans `input`, unless the queue is full; `signal` cancels it (the client went away). */
  plan(input: PlanRevisionsInput, signal: AbortSignal): Promise<QueuedPlan> {
    if (this.waiting.length >= (this.options.maxQueued ?? 4)) return Promise.resolve({ busy: true });
    return new Promise((resolve, reject) => {
      this.waiting.push({ input, signal, resolve, reject });
      void this.next();
    });
  }

  private async next(): Promise<void> {
    if (this.running) return;
    const job = this.waiting.shift();
    if (!job) return;
    this.running = true;
    try {
      if (job.signal.aborted) this.options.onEvent?.("cancelled");
      job.resolve(job.signal.aborted ? { cancelled: true } : await this.run(job));
    } catch (error) {
      job.reject(error as Error);
    } finally {
      this.running = false;
      void this.next();
    }
  }

  private run(job: Job): Promise<QueuedPlan> {
    this.options.onEvent?.("started");
    return new Promise((resolve, reject) => {
      const worker = new Worker(workerScript(), {
        workerData: job.input,
        resourceLimits: { maxOldGenerationSizeMb: this.options.memoryMb ?? 1024, stackSizeMb: 4 },
      });
      let settled = false;
      const finish = (settle: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        job.signal.removeEventListener("abort", cancel);
        void worker.terminate();
        settle();
      };
      const cancel = () =>
        finish(() => {
          this.options.onEvent?.("cancelled");
          resolve({ cancelled: true });
        });
      const timer = setTimeout(
        () =>
          finish(() =>
            reject(new Error(`the plan took longer than ${this.options.timeoutMs ?? 120_000} ms`)),
          ),
        this.options.timeoutMs ?? 120_000,
      );
      job.signal.addEventListener("abort", cancel);
      worker.on("message", (message: { outcome?: PlanOutcome; revisionError?: string; failure?: string }) => {
        if (message.outcome) finish(() => resolve({ outcome: message.outcome as PlanOutcome }));
        else if (message.revisionError) finish(() => reject(new RevisionError(message.revisionError ?? "")));
        else finish(() => reject(new Error(`the plan failed (${message.failure ?? "error"})`)));
      });
      worker.on("error", (error) => finish(() => reject(new Error(`the plan failed (${error.name})`))));
      worker.on("exit", () => finish(() => reject(new Error("the plan's worker stopped (out of memory?)"))));
    });
  }
}

// The worker's compiled script: beside this file in dist/, or in dist/ from the TypeScript sources (tests).
function workerScript(): URL {
  const candidates = [
    new URL("./plan-worker.js", import.meta.url),
    new URL("../../dist/src/server/plan-worker.js", import.meta.url),
  ];
  return candidates.find((url) => existsSync(fileURLToPath(url))) ?? (candidates[0] as URL);
}
