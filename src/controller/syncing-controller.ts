import type { Logger } from "pino";
import { type ConnectionSources, resolveConnections } from "../sync/connections.js";
import type { MemberClientOptions } from "../sync/member-client.js";
import { Syncer } from "../sync/syncer.js";
import { Controller } from "./controller.js";
import type { Reconciler } from "./reconciler.js";

export interface SyncingOptions {
  /** Where member credentials are found: --kubeconfig and the environment. */
  readonly connections: ConnectionSources;
  readonly logger: Logger;
  readonly statusIntervalMs: number;
  readonly resyncIntervalMs: number;
  /** Asks the loop for another round. */
  readonly trigger?: (reason: string) => void;
  readonly client?: MemberClientOptions;
}

/** A reconciler made into the push-mode controller: a syncer reaching each member, and the controller driving both. */
export function syncingController(
  reconciler: Reconciler,
  options: SyncingOptions,
): { syncer: Syncer; controller: Controller } {
  const syncer = new Syncer({
    connect: (model) => resolveConnections(model.clusters, options.connections),
    logger: options.logger,
    ...(options.client ? { client: options.client } : {}),
  });
  const controller = new Controller(reconciler, syncer, {
    logger: options.logger,
    statusIntervalMs: options.statusIntervalMs,
    resyncIntervalMs: options.resyncIntervalMs,
    ...(options.trigger ? { trigger: options.trigger } : {}),
  });
  return { syncer, controller };
}
