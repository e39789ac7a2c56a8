import { createHmac } from "node:crypto";
import { request as httpRequest } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { createLogger } from "../../src/log/logger.js";
import { type ControllerServer, startControllerServer } from "../../src/server/http-server.js";
import { startProbedServer } from "../helpers/probed-server.js";

/** The controller's HTTP endpoint over a real socket: health, readiness and the webhook's edges. */
const SECRET = "webhook-secret-for-tests";
let server: ControllerServer | undefined;
afterEach(async () => server?.close());

async function start(secret: string | undefined, ready = false, because?: string) {
  const triggers: string[] = [];
  server = await startControllerServer({
    listen: "127.0.0.1:0",
    webhookSecret: secret,
    sourceBranch: "main",
    trigger: (reason) => triggers.push(reason),
    ready: () => ready,
    ...(because ? { notReadyBecause: () => because } : {}),
    logger: createLogger({ level: "silent" }),
  });
  return { url: server.url, triggers };
}

describe("controller HTTP endpoint", () => {
  it("answers health always and readiness only after the first reconcile", async () => {
    const notReady = await start(SECRET, false);
    expect((await fetch(`${notReady.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${notReady.url}/readyz`)).status).toBe(503);
    await server?.close();
    const ready = await start(SECRET, true);
    expect((await fetch(`${ready.url}/readyz`)).status).toBe(200);
    expect((await fetch(`${ready.url}/nowhere`)).status).toBe(404);
  });

  it("says on /readyz which configuration error the controller waits on", async () => {
    const { url } = await start(SECRET, false, "branch nope not found in /fleet");
    const answer = await fetch(`${url}/readyz`);
    expect(answer.status).toBe(503);
    expect(await answer.text()).toMatch(/^not ready: branch nope not found in \/fleet/);
  });

  it("takes a signed GitLab push, refuses GETs, oversized bodies and a webhook without a secret", async () => {
    const { url, triggers } = await start(SECRET);
    const payload = JSON.stringify({ ref: "refs/heads/main", after: "a".repeat(40) });
    const pushed = await fetch(`${url}/webhook`, {
      method: "POST",
      headers: { "x-gitlab-event": "Push Hook", "x-gitlab-token": SECRET },
      body: payload,
    });
    expect(pushed.status).toBe(202);
    expect(triggers).toEqual(["webhook:gitlab"]);
    expect((await fetch(`${url}/webhook`)).status).toBe(405);
    const huge = Buffer.alloc(6 * 2 ** 20, 0x20);
    const tooBig = await fetch(`${url}/webhook`, {
      method: "POST",
      headers: { "x-hub-signature-256": `sha256=${createHmac("sha256", SECRET).update(huge).digest("hex")}` },
      body: huge,
    }).catch(() => undefined);
    // The server answers 413 or cuts the upload short; either way nothing is triggered.
    if (tooBig) expect(tooBig.status).toBe(413);
    expect(triggers).toEqual(["webhook:gitlab"]);
    await server?.close();
    const open = await start(undefined);
    const unconfigured = await fetch(`${open.url}/webhook`, { method: "POST", body: payload });
    expect(unconfigured.status).toBe(404);
    expect(open.triggers).toEqual([]);
  });
});

describe("Host header check (DNS rebinding)", () => {
  const withHost = (url: string, host: string) =>
    new Promise<number>((resolve, reject) => {
      const { hostname, port } = new URL(url);
      const request = httpRequest(
        { host: hostname, port, path: "/healthz", headers: { host } },
        (response) => {
          response.resume();
          resolve(response.statusCode ?? 0);
        },
      );
      request.on("error", reject);
      request.end();
    });

  it.each([
    // [allowedHosts, Host header, status]
    [undefined, "localhost:8080", 200],
    [undefined, "127.0.0.1", 200],
    [undefined, "[::1]:8080", 200],
    [undefined, "rebound.example", 403],
    [undefined, "LOCALHOST.example", 403],
    [["gitfleet.example.com"], "gitfleet.example.com:443", 200],
    [["GitFleet.example.com"], "GITFLEET.example.com", 200],
    [["gitfleet.example.com"], "localhost", 403],
    [["gitfleet.example.com"], "10.2.3.4:8080", 200],
    [["gitfleet.example.com"], "[fd00::1]:8080", 200],
    [["gitfleet.example.com"], "10.2.3.4.rebound.example", 403],
  ] as const)("allowed %j, Host %s → %i", async (allowedHosts, host, expected) => {
    server = await startProbedServer(allowedHosts);
    expect(await withHost(server.url, host)).toBe(expected);
  });
});
