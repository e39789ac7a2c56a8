import type { ChildProcess } from "node:child_process";
import { mkdirSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fileTreeFromText } from "../../src/model/file-tree.js";
import { commitTree, createRepo, gitIn, tempDir } from "../helpers/git-repo.js";
import { spawnRun } from "../helpers/gitfleet-run.js";
import { until } from "../helpers/member.js";
import { MINIMAL_FLEET, webDeployment } from "../helpers/minimal-fleet.js";
import { isPolluted } from "../helpers/prototypes.js";

/**
 * M6, M7, L4 and C3 over HTTP (security audit): the unauthenticated endpoints could be used to take
 * every file descriptor (SSE), to queue plans without end (and of any revision, unmerged branches
 * included — which reached the prototype pollution of C3 without merge rights), and answered
 * malformed URLs with 500, oversize webhooks with a reset, and any Host (DNS rebinding).
 */

let dir: string;
let cleanup: () => void;
let child: ChildProcess;
let url: string;
let records: Record<string, unknown>[];
let repo: string;

// The audit's hostile pull request: an Override whose merge patch names __proto__.
const EVIL_OVERRIDE =
  'apiVersion: gitfleet.io/v1alpha1\nkind: Override\nmetadata:\n  name: tuning\nspec:\n  apps: [web]\n  overrideRules:\n    - targetCluster: {clusterNames: [east]}\n      overriders:\n        mergePatch:\n          __proto__:\n            BASH_ENV: "$(id > /tmp/pp-rce-via-api-plan)"\n';

beforeAll(async () => {
  ({ dir, cleanup } = tempDir("gitfleet-http-"));
  repo = join(dir, "fleet");
  mkdirSync(repo);
  createRepo(repo, fileTreeFromText(MINIMAL_FLEET));
  // An unmerged branch with the attack, and one a CI job would push for a pull request.
  commitTree(repo, fileTreeFromText({ ...MINIMAL_FLEET, "overrides/tuning.yaml": EVIL_OVERRIDE }), "tuning");
  gitIn(repo, "branch", "-f", "pr-evil", "HEAD");
  gitIn(repo, "reset", "-q", "--hard", "HEAD~1");
  commitTree(
    repo,
    fileTreeFromText({ ...MINIMAL_FLEET, "apps/web/deployment.yaml": webDeployment(8) }),
    "web: 8",
  );
  gitIn(repo, "branch", "-f", "pr/more-web", "HEAD");
  gitIn(repo, "reset", "-q", "--hard", "HEAD~1");
  const run = await spawnRun(
    [
      "--repo",
      repo,
      "--no-sync",
      "--listen",
      "127.0.0.1:0",
      "--interval",
      "1h",
      "--plan-revisions",
      "pr/*",
      "--plan-memory-mb",
      "256",
    ],
    { GITFLEET_WEBHOOK_SECRET: "a-webhook-secret-for-tests" },
  );
  ({ child, url, records } = run);
  await until(async () => ((await fetch(`${url}/readyz`)).status === 200 ? true : undefined), 20_000);
}, 60_000);

afterAll(() => {
  child?.kill("SIGKILL");
  cleanup();
});

const status = async (path: string, init?: RequestInit) => (await fetch(`${url}${path}`, init)).status;

describe("M7 and C3 over HTTP: plans", () => {
  it("refuses an unmerged branch (the audit's pr-evil), naming no path", async () => {
    const response = await fetch(`${url}/api/plan?base=main&head=pr-evil`);
    expect(response.status).toBe(403);
    const body = (await response.json()) as { error: string };
    expect(body.error).toMatch(/^the revision "pr-evil" may not be planned here/);
    expect(JSON.stringify(body)).not.toContain(dir);
    expect(await status("/healthz")).toBe(200);
  });

  it("plans a branch the operator allows, in a worker; an unknown revision is 404 without the repository's path", async () => {
    const response = await fetch(`${url}/api/plan?base=main&head=pr/more-web`);
    expect(response.status).toBe(200);
    expect(((await response.json()) as { text: string }).text).toMatch(
      /Deployment shop\/web \(app web\): east 2 → 4, west 2 → 4/,
    );
    const unknown = await fetch(`${url}/api/plan?base=main~99999999&head=main`);
    expect(unknown.status).toBe(404);
    expect(JSON.stringify(await unknown.json())).not.toContain(dir);
  });

  it("a burst is bounded: one runs, four wait, the rest get 429", async () => {
    const answers = await Promise.all(
      Array.from({ length: 15 }, () =>
        fetch(`${url}/api/plan?base=main&head=pr/more-web`).then((r) => r.status),
      ),
    );
    expect(answers.filter((s) => s === 429).length).toBeGreaterThanOrEqual(10);
    expect(answers.filter((s) => s === 200).length).toBeLessThanOrEqual(5);
    expect(answers.every((s) => s === 200 || s === 429)).toBe(true);
  });

  it("plans whose clients left are cancelled: dropped from the queue, or their worker ended", async () => {
    const cancelled = () => records.filter((r) => r.msg === "plan cancelled").length;
    const before = cancelled();
    await Promise.all(
      Array.from({ length: 5 }, async () => {
        const aborted = new AbortController();
        const pending = fetch(`${url}/api/plan?base=main&head=pr/more-web`, { signal: aborted.signal }).catch(
          () => undefined,
        );
        setTimeout(() => aborted.abort(), 20);
        await pending;
      }),
    );
    // Every one of them ends cancelled — none runs to its end for a client that is gone.
    await until(() => (cancelled() - before === 5 ? true : undefined), 20_000);
    // The queue is empty again: the next plan is served, not turned away.
    expect(await status("/api/plan?base=main&head=pr/more-web")).toBe(200);
    expect(isPolluted()).toBe(false);
  });
});

describe("M6: live-update streams are capped", () => {
  it("turns away streams past 100 and keeps answering", async () => {
    const streams: AbortController[] = [];
    // The responses are held until the end: undici closes the connection of a response whose
    // unread body is garbage-collected, which would free a stream mid-count.
    const responses: Response[] = [];
    for (let i = 0; i < 105; i++) {
      const stream = new AbortController();
      streams.push(stream);
      responses.push(await fetch(`${url}/api/events`, { signal: stream.signal }));
    }
    const answers = responses.map((r) => r.status);
    expect(answers.filter((s) => s === 200)).toHaveLength(100);
    expect(answers.filter((s) => s === 503)).toHaveLength(5);
    expect(await status("/healthz")).toBe(200);
    for (const stream of streams) stream.abort();
    await until(async () =>
      (await fetch(`${url}/api/events`, { signal: AbortSignal.timeout(1000) }).catch(() => undefined))
        ?.status === 200
        ? true
        : undefined,
    );
  });
});

describe("L4: malformed requests, oversize webhooks, foreign hosts", () => {
  it.each(["/api/apps/%E0%A4%A", "/%E0%A4%A", "/api/%"])("%s is 400", async (path) => {
    expect(await status(path)).toBe(400);
    expect(records.some((r) => r.msg === "HTTP request failed")).toBe(false);
  });

  it("an oversize webhook gets 413, not a reset connection", async () => {
    const response = await fetch(`${url}/webhook`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-github-event": "push" },
      body: "x".repeat(6 * 2 ** 20),
    });
    expect(response.status).toBe(413);
  });

  it("answers only to loopback host names when listening on loopback (DNS rebinding)", async () => {
    const port = new URL(url).port;
    const withHost = (host: string) =>
      new Promise<number>((resolve, reject) => {
        const request = httpRequest(
          { host: "127.0.0.1", port, path: "/api/fleet", headers: { host } },
          (response) => {
            response.resume();
            resolve(response.statusCode ?? 0);
          },
        );
        request.on("error", reject);
        request.end();
      });
    expect(await withHost("evil.example")).toBe(403);
    expect(await withHost(`evil.example:${port}`)).toBe(403);
    expect(await withHost(`localhost:${port}`)).toBe(200);
    expect(await withHost(`127.0.0.1:${port}`)).toBe(200);
  });
});
