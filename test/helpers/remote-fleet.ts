import { mkdirSync } from "node:fs";
import { Writable } from "node:stream";
import { expect } from "vitest";
import { Reconciler, type ReconcilerOptions } from "../../src/controller/reconciler.js";
import { FleetRepo, type RepoLocation } from "../../src/git/fleet-repo.js";
import { createLogger } from "../../src/log/logger.js";
import { BASE_SPEC, type FleetSpec, fleetFiles } from "./fleet-spec.js";
import { branchFiles, commitTree, createRepo, gitIn } from "./git-repo.js";

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

/** Makes a reconciler named `name` of the remote under test, told of its stages by `onStage`. */
export type RemoteController = (name: string, onStage?: ReconcilerOptions["onStage"]) => Promise<Reconciler>;

/**
 * Two controllers racing on one remote, whatever its transport: A has written its commit for the first
 * source commit; before it pushes, a new commit lands and B reconciles it. A's push names a tip that
 * moved, so the remote refuses it; A regenerates on B's tip and finds it up to date. Nothing is lost:
 * a third controller agrees, and the next commit gives one status commit on top of B's.
 */
export async function expectRaceResolved(
  controller: RemoteController,
  fleet: ReturnType<typeof remoteFleet>,
): Promise<void> {
  let b: Reconciler | undefined;
  let newer = "";
  const a = await controller("a", async (stage) => {
    if (stage !== "written" || newer) return;
    newer = fleet.push(webReplicas(5), "web: 5");
    expect((await (b as Reconciler).reconcile()).result).toBe("committed");
  });
  b = await controller("b");
  expect(await a.reconcile()).toMatchObject({ result: "up-to-date", sourceCommit: newer, attempts: 2 });
  expect(branchFiles(fleet.bare, "gitfleet/status").get("status/source.yaml")).toContain(
    `sourceCommit: ${newer}`,
  );
  expect((await (await controller("c")).reconcile()).result).toBe("up-to-date");
  fleet.push(webReplicas(6), "web: 6");
  await Promise.all([a.reconcile(), b.reconcile()]);
  const history = gitIn(fleet.bare, "log", "--format=%s", "gitfleet/status").split("\n");
  // A never published its commit for the first source commit: B's status for the newer one came first.
  expect(history).toHaveLength(2);
  expect(history[0]).toMatch(/^web: Deployment shop\/web 6 replicas/);
}
