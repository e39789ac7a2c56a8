// Runs one reconcile of a local fleet repo and SIGKILLs its own process at a chosen stage of the
// publish: "written" (status commit objects on disk, branch not moved) or "published" (branch moved,
// in-memory state not yet updated). Used by the crash tests; built code from dist/.
import { Writable } from "node:stream";
import { Reconciler } from "../../dist/src/controller/reconciler.js";
import { FleetRepo } from "../../dist/src/git/fleet-repo.js";
import { createLogger } from "../../dist/src/log/logger.js";

const [location, stage] = process.argv.slice(2);
const reconciler = new Reconciler({
  repo: await FleetRepo.open({ location }),
  branch: "main",
  statusBranch: "gitfleet/status",
  author: { name: "gitfleet", email: "gitfleet@example.com" },
  controllerId: "crash-test",
  logger: createLogger({ destination: new Writable({ write: (_c, _e, done) => done() }) }),
  onStage: (reached) => {
    if (reached === stage) process.kill(process.pid, "SIGKILL");
  },
});
await reconciler.reconcile();
