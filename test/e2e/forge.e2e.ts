import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Reconciler } from "../../src/controller/reconciler.js";
import { tokenFile } from "../../src/git/git-credentials.js";
import { gitfleetAsync } from "../helpers/cli.js";
import { BASE_SPEC, type FleetSpec, fleetFiles } from "../helpers/fleet-spec.js";
import { commitTree, createRepo, gitIn } from "../helpers/git-repo.js";
import { type Gitea, startGitea } from "../helpers/gitea.js";
import { type GitfleetRun, spawnRun } from "../helpers/gitfleet-run.js";
import { until } from "../helpers/member.js";
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
  // Gitea's git children may still be writing as it exits: retried removal, not a race.
  await rm(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
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

// The status branch's tip as Gitea's API reports it. Right after a push Gitea may still be recording
// the branch (its API has answered 500 then): asked again for a few seconds.
const statusTip = async (): Promise<string> => {
  for (let attempt = 1; ; attempt++) {
    try {
      return (
        await gitea.api<{ commit: { id: string } }>(
          "GET",
          `/repos/${gitea.user}/fleet/branches/gitfleet%2Fstatus`,
        )
      ).commit.id;
    } catch (error) {
      if (!/HTTP 500/.test((error as Error).message) || attempt >= 50) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
};

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

describe("a fleet repo on Gitea over SSH", () => {
  it("is fetched and its status branch pushed with a deploy key through Gitea's SSH server", async () => {
    const key = join(dir, "deploy-key");
    execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "gitfleet-deploy", "-f", key]);
    await gitea.api("POST", `/repos/${gitea.user}/fleet/keys`, {
      title: "gitfleet",
      key: readFileSync(`${key}.pub`, "utf8").trim(),
      read_only: false,
    });
    writeFileSync(join(dir, "known_hosts"), gitea.ssh.knownHosts);
    const remote = new URL(`${gitea.url}/${gitea.user}/fleet.git`);
    remote.username = gitea.user;
    remote.password = gitea.token;
    const source = commitTree(work, fleetFiles(webReplicas(11)), "web: 11 replicas");
    gitIn(work, "push", "-q", remote.toString(), "main");
    const loop = await remoteReconciler("ssh", {
      location: `ssh://git@127.0.0.1:${gitea.ssh.port}/${gitea.user}/fleet.git`,
      cacheDir: join(dir, "cache-ssh"),
      ssh: { keyFile: key, knownHostsFile: join(dir, "known_hosts") },
    });
    const report = await loop.reconcile();
    expect(report).toMatchObject({ result: "committed", sourceCommit: source });
    expect(await statusTip()).toBe(report.statusCommit);
  });
});

interface GiteaStatus {
  readonly status: string;
  readonly context: string;
  readonly description: string;
  readonly target_url: string;
}

describe("a pull request on Gitea", () => {
  let run: GitfleetRun | undefined;
  afterAll(() => {
    run?.child.kill("SIGTERM");
  });

  const remote = () => {
    const url = new URL(`${gitea.url}/${gitea.user}/fleet.git`);
    url.username = gitea.user;
    url.password = gitea.token;
    return url.toString();
  };
  const statuses = (sha: string) =>
    gitea.api<GiteaStatus[]>("GET", `/repos/${gitea.user}/fleet/commits/${sha}/statuses`);
  const comments = (pr: number) =>
    gitea.api<{ id: number; body: string }[]>("GET", `/repos/${gitea.user}/fleet/issues/${pr}/comments`);
  // What a CI job on the pull request runs: `gitfleet plan --post` for the branch's tip.
  const planPost = (pr: number) =>
    gitfleetAsync(
      [
        "plan",
        "--repo",
        work,
        "--base",
        "main",
        "--head",
        "move-web",
        "--post",
        "--pull-request",
        String(pr),
        "--forge",
        "gitea",
        "--forge-api-url",
        `${gitea.url}/api/v1`,
        "--forge-repo",
        `${gitea.user}/fleet`,
      ],
      { env: { GITFLEET_FORGE_TOKEN: gitea.token } },
    );
  const push = (spec: FleetSpec, message: string) => {
    commitTree(work, fleetFiles(spec), message);
    gitIn(work, "push", "-q", remote(), "move-web");
    return gitIn(work, "rev-parse", "HEAD");
  };

  it("gets one plan comment, edited on every push, and a status on each commit that fails on a blocked prune or an invalid fleet; merged, it is reconciled with a success status", async () => {
    gitIn(work, "checkout", "-q", "-b", "move-web");
    const narrowed = webReplicas(9);
    const east = {
      ...narrowed,
      apps: narrowed.apps.map((a) => (a.name === "web" ? { ...a, clusters: ["east", "west"] } : a)),
    };
    const first = push(east, "web: leave south");
    const pr = (
      await gitea.api<{ number: number }>("POST", `/repos/${gitea.user}/fleet/pulls`, {
        head: "move-web",
        base: "main",
        title: "Move web out of south",
      })
    ).number;

    const planned = await planPost(pr);
    expect(planned.stderr).toContain(`commented on ${gitea.user}/fleet#${pr}`);
    expect(planned.code).toBe(5); // over the deletion budget
    let [comment] = await comments(pr);
    expect(await comments(pr)).toHaveLength(1);
    expect(comment?.body).toMatch(/^<!-- gitfleet:plan gitfleet\/plan -->\n### gitfleet plan/);
    expect(comment?.body).toContain("| south | 0 | 0 | 2 | 1 | 0 |");
    expect(comment?.body).toContain("⛔ prune blocked: would delete 2 of 6 objects");
    // Deleting a third of south's objects is over the fleet's deletion budget: the status fails.
    const blocked = await statuses(first);
    expect(blocked.map((s) => [s.context, s.status])).toEqual([["gitfleet/plan", "failure"]]);
    expect(blocked[0]?.description).toMatch(/^prune blocked in south/);

    // A push that breaks the fleet: the same comment says why, and the status fails.
    const second = push({ ...east, broken: "web" }, "web: typo");
    const broken = await planPost(pr);
    expect(broken.code).toBe(4); // an invalid head
    expect(broken.stderr).toContain("updated the comment");
    [comment] = await comments(pr);
    expect(await comments(pr)).toHaveLength(1);
    expect(comment?.body).toContain(`**${second.slice(0, 12)} is invalid**`);
    expect(comment?.body).toContain("apps/web/deployment.yaml:");
    const failed = await statuses(second);
    expect(failed.map((s) => s.status)).toEqual(["failure"]);
    expect(failed[0]?.description).toMatch(/^invalid: /);

    // Pushed again: web keeps south and gains north — nothing is deleted, the status passes.
    const widened = {
      ...narrowed,
      apps: narrowed.apps.map((a) =>
        a.name === "web" ? { ...a, clusters: ["east", "west", "south", "north"] } : a,
      ),
    };
    const third = push(widened, "web: keep south, add north");
    expect((await planPost(pr)).code).toBe(2);
    expect(await comments(pr)).toHaveLength(1);
    expect((await comments(pr))[0]?.body).toContain(third.slice(0, 12));
    expect((await comments(pr))[0]?.body).toContain("| north | 2 | 0 | 0 | 0 | 0 |");
    expect((await statuses(third)).map((s) => s.status)).toEqual(["success"]);

    // Gitea checks a pull request's mergeability in the background and answers 405 until it has.
    await until(
      () =>
        gitea.api("POST", `/repos/${gitea.user}/fleet/pulls/${pr}/merge`, { Do: "merge" }).then(
          () => true,
          (error: Error) => {
            if (!/HTTP 405/.test(error.message)) throw error;
            return undefined;
          },
        ),
      30_000,
    );
    const merged = (
      await gitea.api<{ commit: { id: string } }>("GET", `/repos/${gitea.user}/fleet/branches/main`)
    ).commit.id;

    // The controller, its forge token the Git token file: pending, then success linking the dashboard.
    const tokenPath = join(dir, "token-run");
    writeFileSync(tokenPath, `${gitea.token}\n`);
    run = await spawnRun(
      [
        "--repo",
        `${gitea.url}/${gitea.user}/fleet.git`,
        "--token-file",
        tokenPath,
        "--cache-dir",
        join(dir, "cache-run"),
        "--no-sync",
        "--listen",
        "127.0.0.1:0",
        "--interval",
        "1s",
        "--commit-status",
        "--forge",
        "gitea",
        "--forge-api-url",
        `${gitea.url}/api/v1`,
        "--dashboard-url",
        "https://fleet.example.com",
      ],
      { GITFLEET_WEBHOOK_SECRET: "webhook-secret-for-tests" },
    );
    const reconciled = await until(async () => {
      const found = (await statuses(merged)).find(
        (s) => s.context === "gitfleet/reconcile" && s.status === "success",
      );
      return found;
    }, 60_000);
    expect(reconciled.target_url).toBe(`https://fleet.example.com/#/commits/${await statusTip()}`);
    expect(reconciled.description).toBe(`reconciled: status commit ${(await statusTip()).slice(0, 12)}`);
    // Both were posted (Gitea orders statuses of the same second as it likes), and the commit's
    // combined status is the last one: success.
    const posted = (await statuses(merged))
      .filter((s) => s.context === "gitfleet/reconcile")
      .map((s) => s.status);
    expect(posted.sort()).toEqual(["pending", "success"]);
    const combined = await gitea.api<{ state: string }>(
      "GET",
      `/repos/${gitea.user}/fleet/commits/${merged}/status`,
    );
    expect(combined.state).toBe("success");
    // The token is nowhere it could leak: the log, the metrics, the comments, the status branch.
    const metrics = await (await fetch(`${run.url}/metrics`)).text();
    expect(metrics).toMatch(/gitfleet_delivery_backlog\{sink="forge-status"\} 0/);
    const surfaces = [
      JSON.stringify(run.records),
      metrics,
      JSON.stringify(await comments(pr)),
      gitIn(work, "fetch", "-q", remote(), "gitfleet/status") || gitIn(work, "log", "-p", "FETCH_HEAD"),
    ];
    for (const surface of surfaces) expect(surface).not.toContain(gitea.token);
  });
});
