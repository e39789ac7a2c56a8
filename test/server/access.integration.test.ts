import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { tempDir } from "../helpers/git-repo.js";
import {
  appHealthy,
  proposeMoreWeb,
  type RunningController,
  runController,
  teamsFleet,
} from "../helpers/running-controller.js";

/**
 * `gitfleet run --api-tokens-file`: the API answers only a bearer token (or, with --anonymous-read,
 * anyone, read-only), and each token sees the apps of the teams whose owners it acts as.
 */
const ADMIN = "admin-token-test-only";
const TEAM = "team-token-test-only";
const hash = (token: string) => `sha256:${createHash("sha256").update(token).digest("hex")}`;

let controller: RunningController | undefined;
let cleanup: (() => void) | undefined;
afterEach(async () => {
  await controller?.stop();
  cleanup?.();
  controller = undefined;
});

async function start(...extra: string[]): Promise<RunningController> {
  const dir = tempDir("gitfleet-access-");
  cleanup = dir.cleanup;
  const tokens = join(dir.dir, "tokens");
  writeFileSync(tokens, `ci @shop/platform ${hash(ADMIN)}\nweb-bot @shop/web ${hash(TEAM)}\n`);
  controller = await runController(teamsFleet(), "gitfleet-access-run-", [
    "--api-tokens-file",
    tokens,
    "--plan-revisions",
    "more-web",
    ...extra,
  ]);
  return controller;
}

async function get(url: string, token?: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(url, token ? { headers: { authorization: `Bearer ${token}` } } : {});
  const text = await response.text();
  return {
    status: response.status,
    body: text.startsWith("{") ? (JSON.parse(text) as Record<string, unknown>) : {},
  };
}

const appNames = (body: Record<string, unknown>) =>
  ((body.apps ?? []) as { name: string }[]).map((a) => a.name).sort();

describe("the API with tokens", () => {
  it("answers a token the apps of its teams, the platform's all, and anyone else nothing", async () => {
    const running = await start();
    await appHealthy(running, "web", ADMIN);
    expect((await get(`${running.url}/api/apps`)).status).toBe(401);
    expect((await get(`${running.url}/api/apps`, "not-a-token")).status).toBe(401);
    expect((await fetch(`${running.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${running.url}/metrics`)).status).toBe(200);
    const page = await fetch(`${running.url}/`);
    expect(page.status).toBe(401);
    expect(page.headers.get("www-authenticate")).toBe("Bearer");
    expect(appNames((await get(`${running.url}/api/apps`, ADMIN)).body)).toEqual(["docs", "web"]);
    expect(appNames((await get(`${running.url}/api/apps`, TEAM)).body)).toEqual(["web"]);
    expect(appNames((await get(`${running.url}/api/fleet`, TEAM)).body)).toEqual(["web"]);
    expect((await get(`${running.url}/api/apps/web`, TEAM)).status).toBe(200);
    expect((await get(`${running.url}/api/apps/docs`, TEAM)).status).toBe(404);
    expect((await get(`${running.url}/api/history`, TEAM)).status).toBe(403);
    expect((await get(`${running.url}/api/history`, ADMIN)).status).toBe(200);
  }, 90_000);

  it("plans a change for a team's token as it touches the team's apps, and the whole of it for the platform", async () => {
    const running = await start();
    await appHealthy(running, "web", ADMIN);
    // One change to both teams' apps: web to 9 replicas, docs' ConfigMap.
    proposeMoreWeb(running.repo, {
      ...teamsFleet(),
      "apps/docs/config.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: docs\ndata: {a: c}\n",
    });
    const appsOf = (body: Record<string, unknown>) => {
      const plan = body.plan as {
        clusters: { changed: { app: string }[] }[];
        distributions: { app: string }[];
      };
      return [
        ...new Set([
          ...plan.clusters.flatMap((c) => c.changed.map((o) => o.app)),
          ...plan.distributions.map((d) => d.app),
        ]),
      ].sort();
    };
    const path = `${running.url}/api/plan?base=main&head=more-web`;
    const platform = await get(path, ADMIN);
    expect(platform.status).toBe(200);
    expect(appsOf(platform.body)).toEqual(["docs", "web"]);
    const team = await get(path, TEAM);
    expect(team.status).toBe(200);
    expect(appsOf(team.body)).toEqual(["web"]);
    expect(String(team.body.text)).not.toContain("docs");
  }, 90_000);

  it("with --anonymous-read lets anyone read, never plan", async () => {
    const running = await start("--anonymous-read");
    await appHealthy(running, "web", ADMIN);
    expect(appNames((await get(`${running.url}/api/apps`)).body)).toEqual(["docs", "web"]);
    expect((await get(`${running.url}/api/plan?base=main&head=main`)).status).toBe(403);
    expect((await get(`${running.url}/api/history`)).status).toBe(403);
    // A token that names nobody is refused, although anyone may read.
    expect((await get(`${running.url}/api/apps`, "not-a-token")).status).toBe(401);
  }, 90_000);
});
