import type { FleetEvent } from "../observe/fleet-events.js";
import type { DeliveryOutcome } from "./deliveries.js";

export interface SinkQueueOptions {
  /** Delivers one event once. */
  readonly deliver: (event: FleetEvent) => Promise<DeliveryOutcome>;
  /** Events waiting at most; past it the oldest waiting one is dropped (default 1000). */
  readonly maxBacklog?: number;
  /** The first retry's pause, doubled after each failed try up to `maxBackoffMs` (defaults 1 s and 5 min). */
  readonly backoffMs?: number;
  readonly maxBackoffMs?: number;
  /** Told of each event given up: refused for good, or dropped from a full backlog. */
  readonly onGiveUp?: (event: FleetEvent, reason: string) => void;
}

/**
 * One sink's deliveries, in order, one at a time: an event stays at the head, retried with
 * exponential backoff, until the sink takes it (at least once: a retry carries the same id) or
 * refuses it for good. Adding never waits; a sink that is down only grows the backlog, bounded.
 */
export class SinkQueue {
  private readonly waiting: FleetEvent[] = [];
  private worker: Promise<void> | undefined;
  private stopped = false;
  private wake: (() => void) | undefined;
  dropped = 0;
  failed = 0;
  delivered = 0;

  constructor(private readonly options: SinkQueueOptions) {}

  get backlog(): number {
    return this.waiting.length;
  }

  add(event: FleetEvent): void {
    if (this.stopped) return;
    this.waiting.push(event);
    const max = this.options.maxBacklog ?? 1000;
    while (this.waiting.length > max) {
      // The head may be in flight: the oldest behind it goes.
      const [dropped] = this.waiting.splice(this.worker ? 1 : 0, 1);
      this.dropped++;
      if (dropped) this.options.onGiveUp?.(dropped, "the backlog is full");
    }
    this.worker ??= this.drain().finally(() => {
      this.worker = undefined;
    });
  }

  /** Waits until nothing waits (tests). */
  async idle(): Promise<void> {
    while (this.worker) await this.worker;
  }

  /** Stops retrying: what waits is left (a stopping controller does not wait for a sink that is down). */
  stop(): void {
    this.stopped = true;
    this.wake?.();
  }

  private async drain(): Promise<void> {
    let pause = this.options.backoffMs ?? 1000;
    while (!this.stopped) {
      const event = this.waiting[0];
      if (!event) return;
      const outcome = await this.options.deliver(event);
      if (outcome.kind === "retry") {
        await this.sleep(pause * (0.75 + Math.random() / 2));
        pause = Math.min(pause * 2, this.options.maxBackoffMs ?? 300_000);
        continue;
      }
      pause = this.options.backoffMs ?? 1000;
      if (this.waiting[0] === event) this.waiting.shift();
      if (outcome.kind === "delivered") this.delivered++;
      else {
        this.failed++;
        this.options.onGiveUp?.(event, outcome.reason);
      }
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      timer.unref();
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}
