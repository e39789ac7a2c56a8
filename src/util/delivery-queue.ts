/** What one delivery attempt came to: taken, worth another try later, or refused for good. */
export type DeliveryOutcome =
  | { readonly kind: "delivered" }
  | { readonly kind: "retry"; readonly reason: string }
  | { readonly kind: "failed"; readonly reason: string };

export interface DeliveryQueueOptions<T> {
  /** Delivers one item once. */
  readonly deliver: (item: T) => Promise<DeliveryOutcome>;
  /** Items waiting at most, the one in flight included; past it the oldest waiting one is dropped (default 1000). */
  readonly maxBacklog?: number;
  /**
   * Items with the same key are one: a new one replaces the one waiting (not one in flight) where it
   * stands — a commit's newer status replaces its older one. Without it every item is delivered.
   */
  readonly key?: (item: T) => string;
  /** The first retry's pause, doubled after each failed try up to `maxBackoffMs` (defaults 1 s and 5 min). */
  readonly backoffMs?: number;
  readonly maxBackoffMs?: number;
  /** Told of each item given up: refused for good, or dropped from a full backlog. */
  readonly onGiveUp?: (item: T, reason: string) => void;
}

/**
 * One destination's deliveries (a notification sink, the forge's commit statuses), in order, one at
 * a time: an item stays at the head, retried with exponential backoff, until the destination takes
 * it (at least once: a retry is the same item) or refuses it for good. Adding never waits; a
 * destination that is down only grows the backlog, bounded.
 */
export class DeliveryQueue<T> {
  private readonly waiting: T[] = [];
  private worker: Promise<void> | undefined;
  private stopped = false;
  private wake: (() => void) | undefined;
  dropped = 0;
  failed = 0;
  delivered = 0;

  constructor(private readonly options: DeliveryQueueOptions<T>) {}

  get backlog(): number {
    return this.waiting.length;
  }

  /** The newest item waiting (or in flight) with this key. */
  latest(key: string): T | undefined {
    const keyOf = this.options.key;
    return keyOf ? this.waiting.findLast((item) => keyOf(item) === key) : undefined;
  }

  add(item: T): void {
    if (this.stopped) return;
    const keyOf = this.options.key;
    const same = keyOf
      ? this.waiting.findIndex((waiting, i) => (i > 0 || !this.worker) && keyOf(waiting) === keyOf(item))
      : -1;
    if (same >= 0) this.waiting[same] = item;
    else this.waiting.push(item);
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
      const item = this.waiting[0];
      if (item === undefined) return;
      const outcome = await this.options.deliver(item);
      if (outcome.kind === "retry") {
        await this.sleep(pause * (0.75 + Math.random() / 2));
        pause = Math.min(pause * 2, this.options.maxBackoffMs ?? 300_000);
        continue;
      }
      pause = this.options.backoffMs ?? 1000;
      if (this.waiting[0] === item) this.waiting.shift();
      if (outcome.kind === "delivered") this.delivered++;
      else {
        this.failed++;
        this.options.onGiveUp?.(item, outcome.reason);
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
