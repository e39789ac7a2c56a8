import { Reconciler } from "../../src/controller/reconciler.js";
import { FleetRepo } from "../../src/git/fleet-repo.js";
import { createLogger } from "../../src/log/logger.js";
import { gitIn } from "./git-repo.js";

/**
 * One reconcile of `dir` by a reconciler made for it alone (it restores from the status branch):
 * the reference that crash and restart tests compare a controller's status tree with.
 */
export async function reconcileReference(dir: string): Promise<void> {
  const loop = new Reconciler({
    repo: await FleetRepo.open({ location: dir }),
    branch: "main",
    statusBranch: "gitfleet/status",
    author: { name: "gitfleet", email: "gitfleet@example.com" },
    controllerId: "reference",
    logger: createLogger({ level: "silent" }),
  });
  await loop.reconcile();
}

/** The tree id of the status branch's tip. */
export function statusTree(dir: string): string {
  return gitIn(dir, "rev-parse", "gitfleet/status^{tree}");
}
