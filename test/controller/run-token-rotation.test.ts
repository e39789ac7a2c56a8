import type { ChildProcess } from "node:child_process";
import { writeFileSync } from "node:fs";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type GitHttpServer, startGitHttpServer } from "../helpers/git-http-server.js";
import { gitIn, tempDir } from "../helpers/git-repo.js";
import { spawnRun } from "../helpers/gitfleet-run.js";
import { until } from "../helpers/member.js";
import { remoteFleet, webReplicas } from "../helpers/remote-fleet.js";

/**
 * `gitfleet run --token-file` against a remote served by real Git over HTTP that accepts one token at
 * a time: the forge rotates the token and the Secret's file follows, and the running controller
 * fetches and pushes with the new one — no restart — and never says either token.
 */
const FIRST = "rotation-first-not-a-real-credential";
const SECOND = "rotation-second-not-a-real-credential";
let root: string;
let cleanup: () => void;
let server: GitHttpServer;
let child: ChildProcess | undefined;
let accepted = FIRST;
let fleet: ReturnType<typeof remoteFleet>;

beforeEach(async () => {
  ({ dir: root, cleanup } = tempDir("gitfleet-rotation-"));
  fleet = remoteFleet(root);
  accepted = FIRST;
  server = await startGitHttpServer(`${root}/srv`, () => accepted);
});
afterEach(async () => {
  child?.kill("SIGKILL");
  await server.close();
  cleanup();
});

const bare = () => fleet.bare;
const statusSubject = () => {
  try {
    return gitIn(bare(), "log", "-1", "--format=%s", "gitfleet/status");
  } catch {
    return "";
  }
};

describe("gitfleet run with a rotating token file", () => {
  it("fetches and pushes with the token the file holds now", async () => {
    const tokenPath = `${root}/token`;
    writeFileSync(tokenPath, `${FIRST}\n`);
    const run = await spawnRun(
      [
        "--repo",
        `${server.url}/fleet.git`,
        "--token-file",
        tokenPath,
        "--cache-dir",
        `${root}/cache`,
        "--no-sync",
        "--listen",
        "127.0.0.1:0",
        "--interval",
        "1s",
      ],
      { GITFLEET_WEBHOOK_SECRET: "webhook-secret-for-tests" },
    );
    child = run.child;
    await until(() => (statusSubject() !== "" ? true : undefined), 30_000);
    accepted = SECOND;
    writeFileSync(tokenPath, SECOND);
    fleet.push(webReplicas(7), "web: 7 replicas");
    await until(
      () => (/^web: Deployment shop\/web 7 replicas/.test(statusSubject()) ? true : undefined),
      30_000,
    );
    const pushes = server.requests.filter((r) => r.startsWith("POST /fleet.git/git-receive-pack"));
    expect(pushes.length).toBeGreaterThanOrEqual(2);
    const logs = JSON.stringify(run.records);
    expect(logs).not.toContain(FIRST);
    expect(logs).not.toContain(SECOND);
    expect(logs).not.toContain(Buffer.from(`x-access-token:${SECOND}`).toString("base64"));
    const metrics = await (await fetch(`${run.url}/metrics`)).text();
    expect(metrics).toContain("gitfleet_git_operations_total");
    expect(metrics).not.toContain(SECOND);
  });
});
