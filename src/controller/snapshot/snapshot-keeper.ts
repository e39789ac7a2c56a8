import type { Logger } from "pino";
import { type ReconcilerSnapshot, snapshotFrom } from "./reconciler-snapshot.js";
import type { SnapshotStore } from "./snapshot-store.js";

/** The snapshot of now, with the status commit it describes; undefined when nothing is held. */
export type TakeSnapshot = () =>
  | { readonly statusTip: string; readonly parts: Iterable<unknown> }
  | undefined;

/**
 * When a reconciler's snapshot is written and read: read once, by the first restore of the process;
 * written `afterMs` after the held tip first moves past the last snapshot (a commit, a catch-up, an
 * observation), and when the process stops. A write encodes the state a part at a time (each part
 * blocks the event loop while it is encoded; the whole takes about 3 s per 10,000 apps), so it waits
 * for the fleet's changes to gather rather than following every commit; a restart from an older
 * snapshot catches up the commits since.
 */
export class SnapshotKeeper {
  private timer: NodeJS.Timeout | undefined;
  private writtenTip: string | undefined;
  private writing: Promise<void> | undefined;
  private read = false;

  constructor(
    private readonly store: SnapshotStore,
    private readonly logger: Logger,
    private readonly take: TakeSnapshot,
    private readonly afterMs = 60_000,
  ) {}

  /** The snapshot on disk, the first time only (later restores read the branch). */
  async resume(): Promise<ReconcilerSnapshot | undefined> {
    if (this.read) return undefined;
    this.read = true;
    const started = Date.now();
    const found = await this.store.read().catch((error: unknown) => ({
      kind: "refused" as const,
      reason: error instanceof Error ? error.message : String(error),
    }));
    if (found.kind === "none") return undefined;
    const snapshot = found.kind === "read" ? snapshotFrom(found.parts) : undefined;
    if (found.kind === "refused" || !snapshot) {
      const reason = found.kind === "refused" ? found.reason : "its content is not a reconciler's snapshot";
      this.logger.warn(
        { snapshot: this.store.path, reason },
        "snapshot refused: restoring from the status branch",
      );
      return undefined;
    }
    this.writtenTip = found.statusTip;
    this.logger.info(
      {
        snapshot: this.store.path,
        statusCommit: found.statusTip,
        bytes: found.bytes,
        ms: Date.now() - started,
      },
      "snapshot read",
    );
    return snapshot;
  }

  /** The held tip may have moved: a write is due `afterMs` from now, unless one is due already. */
  changed(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.save();
    }, this.afterMs);
    this.timer.unref();
  }

  /** Writes the snapshot now, if the held tip moved since the last one. Never throws. */
  async save(): Promise<void> {
    while (this.writing) await this.writing;
    const taken = this.take();
    if (!taken || taken.statusTip === this.writtenTip) return;
    const started = Date.now();
    this.writing = this.store
      .write(taken.statusTip, taken.parts)
      .then(({ bytes }) => {
        this.writtenTip = taken.statusTip;
        this.logger.info(
          { snapshot: this.store.path, statusCommit: taken.statusTip, bytes, ms: Date.now() - started },
          "snapshot written",
        );
      })
      .catch((error: unknown) =>
        this.logger.warn(
          { snapshot: this.store.path, error: error instanceof Error ? error.message : String(error) },
          "snapshot not written; the next restart restores from the status branch",
        ),
      )
      .finally(() => {
        this.writing = undefined;
      });
    await this.writing;
  }

  /** Stops the timer and writes what is not written yet. */
  async close(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.save();
  }
}
