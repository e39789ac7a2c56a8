import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Reconciler } from "../../src/controller/reconciler.js";
import { tokenFile } from "../../src/git/git-credentials.js";
import { BASE_SPEC, fleetFiles } from "../helpers/fleet-spec.js";
import { commitTree, createRepo, gitIn } from "../helpers/git-repo.js";
import { type Gitea, startGitea } from "../helpers/gitea.js";
import { remoteReconciler, webReplicas } from "../helpers/remote-fleet.js";

/**
 * The fleet repo hosted by a real forge: Gitea, built from Go modules (scripts/build-gitea.sh), on
 * loopback with a throwaway SQLite database. gitfleet fetches the source branch and pushes the status
 * branch over HTTPS's smart protocol with an access token read from a file, through Gitea's own
 * receive hooks; the forge's API sees the branch gitfleet wrote.
 */
let dir: string;
let gitea: Gitea;
let work: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "gitfleet-forge-"));
  gitea = await startGitea(join(dir, "gitea"));
  await gitea.api("POST", "/user/repos", { name: "fleet", default_branch: "main", private: true });
  work = join(dir, "work");
  mkdirSync(work);
  createRepo(work, fleetFiles(BASE_SPEC));
  const remote = new URL(`${gitea.url}/${gitea.user}/fleet.git`);
  remote.username = gitea.user;
  remote.password = gitea.token;
  gitIn(work, "push", "-q", remote.toString(), "main");
}, 30 * 60_000);
afterAll(async () => {
  await gitea?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function controller(name: string, token: string): Promise<Reconciler> {
  const file = join(dir, `token-${name}`);
  writeFileSync(file, `${token}\n`);
  const location = `${gitea.url}/${gitea.user}/fleet.git`;
  return remoteReconciler(name, {
    location,
    cacheDir: join(dir, `cache-${name}`),
    credentials: tokenFile(file),
  });
}

const statusTip = async () =>
  (
    await gitea.api<{ commit: { id: string } }>(
      "GET",
      `/repos/${gitea.user}/fleet/branches/gitfleet%2Fstatus`,
    )
  ).commit.id;

describe("a fleet repo on Gitea", () => {
  it("refuses a wrong token, writing nothing", async () => {
    const loop = await controller("wrong", "0000000000000000000000000000000000000000");
    await expect(loop.reconcile()).rejects.toThrow(/401/);
    await expect(statusTip()).rejects.toThrow(/HTTP 404/);
  });

  it("is fetched and its status branch pushed with a token, and the next commit reconciled", async () => {
    const loop = await controller("a", gitea.token);
    const first = await loop.reconcile();
    expect(first.result).toBe("committed");
    expect(await statusTip()).toBe(first.statusCommit);
    const remote = new URL(`${gitea.url}/${gitea.user}/fleet.git`);
    remote.username = gitea.user;
    remote.password = gitea.token;
    commitTree(work, fleetFiles(webReplicas(9)), "web: 9 replicas");
    gitIn(work, "push", "-q", remote.toString(), "main");
    const second = await loop.reconcile();
    expect(second).toMatchObject({ result: "committed", sourceCommit: gitIn(work, "rev-parse", "HEAD") });
    expect(await statusTip()).toBe(second.statusCommit);
    const commit = await gitea.api<{ commit: { message: string } }>(
      "GET",
      `/repos/${gitea.user}/fleet/git/commits/${second.statusCommit}`,
    );
    expect(commit.commit.message).toMatch(/^web: Deployment shop\/web 9 replicas/);
  });
});
