import type { ChildProcess } from "node:child_process";
import { createHmac } from "node:crypto";
import { mkdirSync } from "node:fs";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BASE_SPEC, fleetFiles } from "../helpers/fleet-spec.js";
import { commitTree, createRepo, gitIn, tempDir } from "../helpers/git-repo.js";
import { spawnRun } from "../helpers/gitfleet-run.js";
import { until } from "../helpers/member.js";

/** `gitfleet run` as a real process: readiness, push webhooks (signed and not), graceful stop. */
const SECRET = "webhook-secret-for-tests";
let dir: string;
let cleanup: () => void;
let child: ChildProcess | undefined;
let records: Record<string, unknown>[];

beforeEach(() => {
  ({ dir, cleanup } = tempDir("gitfleet-run-"));
  records = [];
});
afterEach(() => {
  child?.kill("SIGKILL");
  cleanup();
});

async function start(): Promise<string> {
  const run = await spawnRun(
    ["--repo", `${dir}/fleet`, "--no-sync", "--listen", "127.0.0.1:0", "--interval", "1h"],
    { GITFLEET_WEBHOOK_SECRET: SECRET },
  );
  child = run.child;
  records = run.records;
  return run.url;
}

function push(url: string, payload: string, signature: string): Promise<Response> {
  return fetch(`${url}/webhook`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-github-event": "push",
      "x-hub-signature-256": signature,
    },
    body: payload,
  });
}

const statusCommits = () => Number(gitIn(`${dir}/fleet`, "rev-list", "--count", "gitfleet/status"));
// Why each finished reconcile ran: "start", "poll" or "webhook:<forge>".
const reasons = () => records.filter((r) => r.msg === "reconcile done").map((r) => r.reason);

describe("gitfleet run", () => {
  it("is ready after the first reconcile, reconciles on a signed push, ignores a forged one, and stops on SIGTERM", async () => {
    mkdirSync(`${dir}/fleet`);
    createRepo(`${dir}/fleet`, fleetFiles(BASE_SPEC));
    const url = await start();
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    await until(async () => ((await fetch(`${url}/readyz`)).status === 200 ? true : undefined), 10_000);
    expect(statusCommits()).toBe(1);

    const source = commitTree(
      `${dir}/fleet`,
      fleetFiles({
        ...BASE_SPEC,
        apps: BASE_SPEC.apps.map((a) => (a.name === "api" ? { ...a, replicas: 7 } : a)),
      }),
      "api: 7",
    );
    const payload = JSON.stringify({ ref: "refs/heads/main", after: source });
    const forged = await push(
      url,
      payload,
      `sha256=${createHmac("sha256", "guess").update(payload).digest("hex")}`,
    );
    expect(forged.status).toBe(401);
    expect(await forged.text()).toBe("missing or invalid webhook signature\n");
    const statusPush = JSON.stringify({ ref: "refs/heads/gitfleet/status", after: source });
    const ignored = await push(
      url,
      statusPush,
      `sha256=${createHmac("sha256", SECRET).update(statusPush).digest("hex")}`,
    );
    expect(ignored.status).toBe(200);
    // Neither started a reconcile (one takes well under this on this fleet). A fixed wait: it checks
    // that nothing happens, which no condition can poll for.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(reasons()).toEqual(["start"]);
    expect(statusCommits()).toBe(1);

    const signed = await push(
      url,
      payload,
      `sha256=${createHmac("sha256", SECRET).update(payload).digest("hex")}`,
    );
    expect(signed.status).toBe(202);
    await until(() => (statusCommits() === 2 ? true : undefined), 10_000);
    expect(gitIn(`${dir}/fleet`, "log", "-1", "--format=%B", "gitfleet/status")).toContain(
      `Source-Commit: ${source}`,
    );
    // Exactly two reconciles ran: at start, and for the signed push — the forged one triggered nothing.
    await until(() => (reasons().length === 2 ? true : undefined), 10_000);
    expect(reasons()).toEqual(["start", "webhook:github"]);

    const exit = new Promise((resolve) => child?.on("exit", (code, signal) => resolve(signal ?? code)));
    child?.kill("SIGTERM");
    expect(await exit).toBe(0);
  });
});
