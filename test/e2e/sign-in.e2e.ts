import { randomBytes } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SESSION_COOKIE, sealSession } from "../../src/server/sessions.js";
import { launchBrowser } from "../helpers/browser.js";
import { freePort } from "../helpers/free-port.js";
import { type Gitea, startGitea } from "../helpers/gitea.js";
import { until } from "../helpers/member.js";
import { type RunningController, runController, teamsFleet } from "../helpers/running-controller.js";

/**
 * People sign in to the dashboard with OpenID Connect against a real identity provider: Gitea (built
 * from Go modules, scripts/build-gitea.sh) with an organization whose teams are the fleet's owners.
 * Chromium goes through Gitea's sign-in form and consent page; gitfleet's session then shows each
 * person their teams' apps only (the platform team everything), and a forged, expired or foreign
 * session, or a replayed callback, is refused.
 */
const PASSWORD = "a-password-for-tests-only";

let dir: string;
let gitea: Gitea;
let controller: RunningController;
let browser: Browser;
let sessionKey: Buffer;

// Gitea's organization shop with the teams web and platform, and a person in each.
async function people(): Promise<void> {
  await gitea.api("POST", "/orgs", { username: "shop", visibility: "private" });
  for (const [user, team] of [
    ["alice", "web"],
    ["pat", "platform"],
  ] as const) {
    await gitea.api("POST", "/admin/users", {
      username: user,
      email: `${user}@example.com`,
      password: PASSWORD,
      must_change_password: false,
    });
    const made = await gitea.api<{ id: number }>("POST", "/orgs/shop/teams", {
      name: team,
      permission: "read",
      units: ["repo.code"],
    });
    await gitea.api("PUT", `/teams/${made.id}/members/${user}`);
  }
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "gitfleet-sign-in-"));
  gitea = await startGitea(join(dir, "gitea"));
  await people();
  const port = await freePort();
  const publicUrl = `http://127.0.0.1:${port}`;
  const app = await gitea.api<{ client_id: string; client_secret: string }>(
    "POST",
    "/user/applications/oauth2",
    { name: "gitfleet", redirect_uris: [`${publicUrl}/auth/callback`], confidential_client: true },
  );
  writeFileSync(join(dir, "client-secret"), `${app.client_secret}\n`);
  sessionKey = randomBytes(32);
  writeFileSync(join(dir, "session-key"), sessionKey);
  controller = await runController(teamsFleet(), "gitfleet-sign-in-run-", [
    "--listen",
    `127.0.0.1:${port}`,
    "--public-url",
    publicUrl,
    "--oidc-issuer",
    gitea.url,
    "--oidc-client-id",
    app.client_id,
    "--oidc-client-secret-file",
    join(dir, "client-secret"),
    "--session-key-file",
    join(dir, "session-key"),
  ]);
  browser = await launchBrowser();
}, 30 * 60_000);

afterAll(async () => {
  await browser?.close();
  await controller?.stop();
  await gitea?.close();
  // Gitea's git children may still be writing as it exits: retried removal, not a race.
  await rm(dir, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
});

/** Signs a person in through Gitea's form (and consent page); the page ends on the dashboard. */
async function signIn(user: string): Promise<{ context: BrowserContext; page: Page; callback: string }> {
  const context = await browser.newContext();
  const page = await context.newPage();
  let callback = "";
  page.on("request", (request) => {
    if (request.url().includes("/auth/callback?")) callback = request.url();
  });
  await page.goto(`${controller.url}/`);
  expect(page.url(), (await page.textContent("body"))?.slice(0, 300)).toContain(`${gitea.url}/`);
  await page.fill("#user_name", user);
  await page.fill("#password", PASSWORD);
  await page.click("form.ui.form button.ui.primary.button");
  // Gitea asks for consent at a person's first sign-in to gitfleet, and remembers the grant after.
  const asked = await Promise.race([
    page.waitForSelector("#authorize-app").then(
      () => true,
      () => false,
    ),
    page.waitForURL(`${controller.url}/`).then(
      () => false,
      () => false,
    ),
  ]);
  if (asked) await page.click("#authorize-app");
  await page.waitForURL(`${controller.url}/`);
  await page.waitForSelector('[data-testid="who"]');
  return { context, page, callback };
}

/** GET from the page, with its cookies: the status and the JSON body. */
async function get(page: Page, path: string): Promise<{ status: number; body: Record<string, unknown> }> {
  return page.evaluate(async (url) => {
    const response = await fetch(url, { headers: { accept: "application/json" } });
    const text = await response.text();
    return { status: response.status, body: text.startsWith("{") ? JSON.parse(text) : {} };
  }, path);
}

const appNames = (body: Record<string, unknown>) =>
  ((body.apps ?? []) as { name: string }[]).map((a) => a.name).sort();

describe("signing in to the dashboard with Gitea", () => {
  it("shows a team's member only the team's apps, and refuses a replayed callback", async () => {
    const { context, page, callback } = await signIn("alice");
    try {
      expect(await page.textContent('[data-testid="who"]')).toContain("@alice");
      expect(await page.textContent('[data-testid="who"]')).toContain("team web");
      await until(async () => ((await get(page, "/api/apps")).body.apps ? true : undefined), 30_000);
      expect(appNames((await get(page, "/api/apps")).body)).toEqual(["web"]);
      expect((await get(page, "/api/apps/docs")).status).toBe(404);
      expect((await get(page, "/api/history")).status).toBe(403);
      const plan = await get(page, "/api/plan?base=main&head=main");
      expect(plan.status).toBe(200);
      const who = (await get(page, "/api/whoami")).body;
      expect(who).toMatchObject({ viewer: "@alice", via: "session", admin: false, teams: ["web"] });
      // The code and the sign-in in progress were spent: the same callback again is refused.
      expect(callback).not.toBe("");
      const replay = await page.goto(callback);
      expect(replay?.status()).toBe(400);
    } finally {
      await context.close();
    }
  }, 120_000);

  it("shows the platform team every app and lets it plan", async () => {
    const { context, page } = await signIn("pat");
    try {
      expect(await page.textContent('[data-testid="who"]')).toContain("every app");
      await until(
        async () => (appNames((await get(page, "/api/apps")).body).length === 2 ? true : undefined),
        30_000,
      );
      expect(appNames((await get(page, "/api/apps")).body)).toEqual(["docs", "web"]);
      expect((await get(page, "/api/plan?base=main&head=main")).status).toBe(200);
    } finally {
      await context.close();
    }
  }, 120_000);

  it("refuses a forged, expired or foreign session, and ends one at sign-out", async () => {
    const { context, page } = await signIn("alice");
    try {
      const cookies = await context.cookies(controller.url);
      const session = cookies.find((c) => c.name === SESSION_COOKIE);
      expect(session).toMatchObject({ httpOnly: true, sameSite: "Lax" });
      const original = session?.value ?? "";
      const [body = "", tag = ""] = original.split(".");
      const claims = JSON.parse(Buffer.from(body, "base64url").toString());
      claims.c.n.push("@shop/platform");
      const platform = { subject: "1", names: ["@pat", "@shop/platform"] };
      for (const forged of [
        `${Buffer.from(JSON.stringify(claims)).toString("base64url")}.${tag}`,
        sealSession(platform, randomBytes(32), Date.now() + 3600_000),
        sealSession(platform, sessionKey, Date.now() - 1000),
        "",
      ]) {
        await context.addCookies([{ name: SESSION_COOKIE, value: forged, url: controller.url }]);
        expect((await get(page, "/api/apps")).status).toBe(401);
      }
      // A page of the dashboard without a session goes to sign in.
      const answer = await fetch(`${controller.url}/`, { redirect: "manual" });
      expect(answer.status).toBe(302);
      expect(answer.headers.get("location")).toBe("/auth/login?return=%2F");
      await context.addCookies([{ name: SESSION_COOKIE, value: original, url: controller.url }]);
      expect((await get(page, "/api/apps")).status).toBe(200);
      await page.reload();
      await page.click('[data-testid="sign-out"]');
      await page.waitForSelector("text=signed out");
      expect((await get(page, "/api/apps")).status).toBe(401);
    } finally {
      await context.close();
    }
  }, 120_000);
});
