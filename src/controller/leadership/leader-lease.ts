import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { type LeaseTimings, monotonicMs } from "../../kube/leader-election.js";

/** What the election's thread is given (leader-lease-worker.ts). */
export interface LeaseWorkerInput {
  /** The management cluster's kubeconfig (exported, one context); absent: the in-cluster service account. */
  readonly kubeconfig: string | undefined;
  readonly namespace: string;
  readonly name: string;
  readonly identity: string;
  readonly timings: LeaseTimings;
  readonly logLevel: string;
  /** One BigInt64: the monotonic millisecond the last renewal was sent, -1 for none. */
  readonly renewedAt: SharedArrayBuffer;
  /** One Int32: 1 while this process may take the Lease, 0 while it waits (absent: always may). */
  readonly willing?: SharedArrayBuffer;
}

/** What the election's thread tells the controller's. */
export type LeaseWorkerMessage =
  | { readonly type: "started" }
  | { readonly type: "stopped"; readonly holder: string }
  | { readonly type: "released" }
  | { readonly type: "relayed"; readonly reason: string }
  | { readonly type: "relay-failed"; readonly error: string }
  | { readonly type: "observed"; readonly holder: string };

/** A fenced write: this process no longer holds the leader Lease. */
export class FencedError extends Error {
  override readonly name = "FencedError";
}

/** What the controller does as the election goes: lead, stop leading, run a round a standby relayed. */
export interface LeaseEvents {
  readonly started: () => void;
  /** No longer leading (a renewal missed its deadline, another holder, or the thread died). */
  readonly stopped: (why: string) => void;
  readonly relayed: (reason: string) => void;
  /** A relay that did not reach the Lease. */
  readonly relayFailed?: (error: string) => void;
  /** The holder named in the Lease as last read changed ("" for none). */
  readonly observed?: (holder: string) => void;
}

/**
 * The controller's side of leader election: the election runs in a worker thread
 * (leader-lease-worker.ts) and this side answers, without waiting on it, whether this process leads
 * — from the shared time of the last renewal sent, against the renew deadline — which every status
 * commit and every write to a member checks first (`fence`).
 */
export class LeaderLease {
  private readonly renewedAt: BigInt64Array;
  private readonly worker: Worker;
  private exited = false;
  private released: (() => void) | undefined;

  private readonly willing: Int32Array | undefined;

  constructor(
    private readonly input: Omit<LeaseWorkerInput, "renewedAt" | "willing"> & {
      /** Whether the Lease is taken only while `willing` says so (shards); default: whenever it is free. */
      readonly gated?: boolean;
    },
    events: LeaseEvents,
  ) {
    const buffer = new SharedArrayBuffer(8);
    this.renewedAt = new BigInt64Array(buffer);
    Atomics.store(this.renewedAt, 0, -1n);
    const willing = input.gated ? new SharedArrayBuffer(4) : undefined;
    this.willing = willing ? new Int32Array(willing) : undefined;
    this.worker = new Worker(workerScript(), {
      workerData: { ...input, renewedAt: buffer, ...(willing ? { willing } : {}) },
    });
    this.worker.on("message", (message: LeaseWorkerMessage) => {
      if (message.type === "started") events.started();
      else if (message.type === "stopped")
        events.stopped(
          `the Lease was not renewed in time${message.holder ? `; ${message.holder} holds it` : ""}`,
        );
      else if (message.type === "relayed") events.relayed(message.reason);
      else if (message.type === "relay-failed") events.relayFailed?.(message.error);
      else if (message.type === "observed") events.observed?.(message.holder);
      else this.released?.();
    });
    this.worker.on("error", (error) => events.stopped(`the election's thread failed: ${error.message}`));
    this.worker.once("exit", () => {
      this.exited = true;
      Atomics.store(this.renewedAt, 0, -1n);
      this.released?.();
    });
  }

  /** Whether the last renewal this process sent is younger than the renew deadline. */
  get leading(): boolean {
    const at = Atomics.load(this.renewedAt, 0);
    return at >= 0n && monotonicMs() - Number(at) < this.input.timings.renewDeadlineMs;
  }

  /** Throws a FencedError unless this process leads: called right before every write. */
  fence(): void {
    if (!this.leading)
      throw new FencedError(
        `${this.input.identity} does not hold the leader Lease ${this.input.namespace}/${this.input.name}: it writes nothing`,
      );
  }

  /** Whether this process may take the Lease when it is free (a gated Lease only). */
  set mayAcquire(willing: boolean) {
    if (this.willing) Atomics.store(this.willing, 0, willing ? 1 : 0);
  }

  /** Passes a round on to the leader (this process stands by). */
  relay(reason: string): void {
    if (!this.exited) this.worker.postMessage({ relay: reason });
  }

  /** Gives the Lease up (a graceful stop) and ends the thread. */
  async release(): Promise<void> {
    Atomics.store(this.renewedAt, 0, -1n);
    if (this.exited) return;
    const released = new Promise<void>((resolve) => {
      this.released = resolve;
    });
    this.worker.postMessage({ release: true });
    await Promise.race([released, new Promise((resolve) => setTimeout(resolve, 5000).unref())]);
    await this.worker.terminate();
  }
}

function workerScript(): URL {
  const candidates = [
    new URL("./leader-lease-worker.js", import.meta.url),
    new URL("../../../dist/src/controller/leadership/leader-lease-worker.js", import.meta.url),
  ];
  return candidates.find((url) => existsSync(fileURLToPath(url))) ?? (candidates[0] as URL);
}
