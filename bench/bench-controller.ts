import { Reconciler } from "../src/controller/reconciler.js";
import { type SyncingOptions, syncingController } from "../src/controller/syncing-controller.js";
import { FleetRepo } from "../src/git/fleet-repo.js";
import { createLogger } from "../src/log/logger.js";

/**
 * The controller a bench drives: a Reconciler on the fleet repo at `fleet` (branch main, status
 * branch gitfleet/status), silent, syncing the members of `kubeconfig`, with the bench's own
 * intervals and client settings. Returns what syncingController returns, and the Reconciler.
 */
export async function benchController(
  fleet: string,
  kubeconfig: string,
  options: Omit<SyncingOptions, "connections" | "logger">,
): Promise<ReturnType<typeof syncingController> & { reconciler: Reconciler }> {
  const logger = createLogger({ level: "silent" });
  const reconciler = new Reconciler({
    repo: await FleetRepo.open({ location: fleet }),
    branch: "main",
    statusBranch: "gitfleet/status",
    author: { name: "gitfleet", email: "gitfleet@example.com" },
    controllerId: "bench",
    logger,
  });
  const syncing = syncingController(reconciler, { ...options, connections: { kubeconfig, env: {} }, logger });
  return { ...syncing, reconciler };
}
