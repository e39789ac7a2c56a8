import { mkdirSync } from "node:fs";
import { Writable } from "node:stream";
import { Reconciler, type ReconcilerOptions } from "../../src/controller/reconciler.js";
import { FleetRepo, type RepoLocation } from "../../src/git/fleet-repo.js";
import { createLogger } from "../../src/log/logger.js";
import { BASE_SPEC, type FleetSpec, fleetFiles } from "./fleet-spec.js";
import { commitTree, createRepo, gitIn } from "./git-repo.js";

/**
 * A fleet repo as a team hosts it: a work tree people commit to (`<root>/work`, the example fleet
 * spec) and a bare repository it pushes to (`<root>/srv/fleet.git`), which a server in front serves.
 */
export function remoteFleet(root: string): {
  work: string;
  bare: string;
  push(spec: FleetSpec, message: string): string;
} {
  const work = `${root}/work`;
  const bare = `${root}/srv/fleet.git`;
  mkdirSync(work);
  createRepo(work, fleetFiles(BASE_SPEC));
  gitIn(root, "clone", "-q", "--bare", work, bare);
  gitIn(work, "remote", "add", "origin", bare);
  return {
    work,
    bare,
    push: (spec, message) => {
      const commit = commitTree(work, fleetFiles(spec), message);
      gitIn(work, "push", "-q", "origin", "main");
      return commit;
    },
  };
}

/** The base spec with web at `n` replicas: a one-app change. */
export const webReplicas = (n: number): FleetSpec => ({
  ...BASE_SPEC,
  apps: BASE_SPEC.apps.map((a) => (a.name === "web" ? { ...a, replicas: n } : a)),
});

const quiet = createLogger({ destination: new Writable({ write: (_c, _e, done) => done() }) });

/** A reconciler of main into gitfleet/status on the repository at `location`, silent, never sleeping. */
export async function remoteReconciler(
  name: string,
  location: RepoLocation,
  extra: Partial<ReconcilerOptions> = {},
): Promise<Reconciler> {
  return new Reconciler({
    repo: await FleetRepo.open(location),
    branch: "main",
    statusBranch: "gitfleet/status",
    author: { name: "gitfleet", email: "gitfleet@example.com" },
    controllerId: name,
    logger: quiet,
    sleep: async () => undefined,
    ...extra,
  });
}
