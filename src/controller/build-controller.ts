import type { Logger } from "pino";
import type { ClusterProber } from "../kube/prober.js";
import type { Syncer } from "../kube/syncer.js";
import type { ClusterSyncResult } from "../sync/sync-result.js";
import type { Controller, ControllerReport } from "./controller.js";
import { type LoopOptions, ReconcileLoop } from "./loop.js";
import { type ReconcileReport, Reconciler, type ReconcilerOptions } from "./reconciler.js";
import { type SyncingOptions, syncingController } from "./syncing-controller.js";

/** Everything `gitfleet run`, `gitfleet reconcile` and the demo configure; the rest is wired here. */
export interface ControllerConfig {
  readonly logger: Logger;
  readonly reconciler: Omit<ReconcilerOptions, "logger" | "onCommit" | "onSource">;
  /** Sync to the members (absent: the status branch only). */
  readonly sync?: Omit<SyncingOptions, "logger" | "trigger" | "onSyncResult">;
  /** How often the source branch is polled when nothing else asks for a round. */
  readonly intervalMs: number;
  /** Told of each status commit, each cluster's sync result and each round (metrics, dashboards, printers). */
  readonly hooks?: ControllerHooks;
}

export interface ControllerHooks {
  readonly onSource?: ReconcilerOptions["onSource"];
  readonly onCommit?: ReconcilerOptions["onCommit"];
  readonly onSyncResult?: (result: ClusterSyncResult) => void;
  readonly onReconcile?: LoopOptions["onReconcile"];
}

/** A controller built and ready to run: its parts, one round on demand, and start and stop. */
export interface BuiltController {
  readonly reconciler: Reconciler;
  readonly syncer?: Syncer;
  readonly controller?: Controller;
  readonly prober?: ClusterProber;
  readonly loop: ReconcileLoop;
  /** One round and the sync it asked for, with the members' results published, and the snapshot written (`reconcile --once`). */
  once(): Promise<ReconcileReport | ControllerReport>;
  /** A standby's warm state: the status branch followed as a takeover's first round would (writes nothing). */
  follow(): Promise<"current" | "replayed" | "restored">;
  /** Polls, probes, and reconciles when asked. */
  start(): void;
  /** Stops asking, finishes the round and the syncs in flight, and writes the reconciler's snapshot. */
  stop(): Promise<void>;
}

/**
 * The one composition root: the reconciler (Git around the pure reconcile), with sync on the syncer,
 * the prober and the controller that drives them, and the loop that runs its rounds — a probe that
 * changes a cluster's condition asks the loop for a round; a round says when it wants the next.
 */
export function buildController(config: ControllerConfig): BuiltController {
  const { logger, hooks = {} } = config;
  const reconciler = new Reconciler({
    ...config.reconciler,
    logger,
    ...(hooks.onCommit ? { onCommit: hooks.onCommit } : {}),
    ...(hooks.onSource ? { onSource: hooks.onSource } : {}),
  });
  const parts = config.sync
    ? syncingController(reconciler, {
        ...config.sync,
        logger,
        trigger: (reason) => loop.trigger(reason),
        ...(hooks.onSyncResult ? { onSyncResult: hooks.onSyncResult } : {}),
      })
    : undefined;
  const loop: ReconcileLoop = new ReconcileLoop(parts?.controller ?? reconciler, {
    intervalMs: config.intervalMs,
    logger,
    ...(hooks.onReconcile ? { onReconcile: hooks.onReconcile } : {}),
  });
  return {
    reconciler,
    ...(parts ?? {}),
    loop,
    async once() {
      if (!parts) return reconciler.reconcile().finally(() => reconciler.close());
      const report = await parts.controller.reconcile();
      await parts.syncer.idle();
      await parts.controller.flush();
      await reconciler.close();
      return report;
    },
    follow: () => (parts ? parts.controller.follow() : reconciler.follow()),
    start() {
      loop.start();
      parts?.prober.start();
    },
    async stop() {
      parts?.prober.stop();
      await loop.stop();
      await parts?.syncer.idle();
      await reconciler.close();
    },
  };
}
