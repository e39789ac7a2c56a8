// Reconciles a local fleet repo with a snapshot store and writes its snapshot, SIGKILLing its own
// process at a chosen stage of the write ("partial": some bytes in the temporary file, "written":
// the temporary file whole and synced, "renamed": in place; "none": no kill), or, with "read",
// prints what the store holds. Used by the snapshot crash tests; built code from dist/.
import { Writable } from "node:stream";
import { Reconciler } from "../../dist/src/controller/reconciler.js";
import { SnapshotStore } from "../../dist/src/controller/snapshot/snapshot-store.js";
import { FleetRepo } from "../../dist/src/git/fleet-repo.js";
import { createLogger } from "../../dist/src/log/logger.js";

const [location, dir, stage] = process.argv.slice(2);
const snapshots = new SnapshotStore({
  dir,
  statusBranch: "gitfleet/status",
  onWriteStage: (reached) => {
    if (reached === stage) process.kill(process.pid, "SIGKILL");
  },
});
if (stage === "read") {
  const read = await snapshots.read();
  process.stdout.write(JSON.stringify({ kind: read.kind, statusTip: read.statusTip ?? null }));
} else {
  const messages = [];
  const reconciler = new Reconciler({
    repo: await FleetRepo.open({ location }),
    branch: "main",
    statusBranch: "gitfleet/status",
    author: { name: "gitfleet", email: "gitfleet@example.com" },
    controllerId: "snapshot-crash-test",
    logger: createLogger({
      destination: new Writable({
        write: (chunk, _encoding, done) => {
          messages.push(
            ...String(chunk)
              .split("\n")
              .filter(Boolean)
              .map((line) => JSON.parse(line).msg),
          );
          done();
        },
      }),
    }),
    snapshots,
    snapshotAfterMs: 2 ** 30,
  });
  await reconciler.reconcile();
  await reconciler.close();
  process.stdout.write(JSON.stringify({ messages }));
}
