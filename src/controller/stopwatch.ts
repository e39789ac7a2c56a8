/** Times the stages of one reconcile for its log record. */
export class Stopwatch {
  private last: number;
  private readonly recorded: Record<string, number> = {};

  constructor(
    private readonly now: () => number = () => performance.now(),
    /** Told each stage as it ends. */
    private readonly onLap?: (stage: string) => void,
  ) {
    this.last = now();
  }

  /** Records the time since the previous lap under `stage` (added to what the stage already has). */
  lap(stage: string): void {
    const now = this.now();
    this.recorded[stage] = Math.round(((this.recorded[stage] ?? 0) + now - this.last) * 10) / 10;
    this.last = now;
    this.onLap?.(stage);
  }

  laps(): Readonly<Record<string, number>> {
    return { ...this.recorded };
  }
}
