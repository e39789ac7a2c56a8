import { generateKeyPairSync } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { gitfleetAsync } from "../helpers/cli.js";
import { ForgeContract } from "../helpers/forge-contract.js";
import { type GitHttpServer, startGitHttpServer } from "../helpers/git-http-server.js";
import { gitIn, tempDir } from "../helpers/git-repo.js";
import { type GitfleetRun, spawnRun } from "../helpers/gitfleet-run.js";
import { startTokenServer, type TokenServer } from "../helpers/github-app-server.js";
import { until } from "../helpers/member.js";
import { remoteFleet, webReplicas } from "../helpers/remote-fleet.js";

/**
 * Where a credential could leak, looked at after a real run: `gitfleet run` authenticating as a
 * GitHub App (installation tokens bought with the App's private key) to fetch and push the fleet
 * repo over HTTP and to post commit statuses, and `gitfleet plan --post` commenting with a token.
 * Neither the tokens nor the private key appear in the log, the metrics, the status branch, or
 * anything posted to the forge.
 */
let root: string;
let cleanup: () => void;
let git: GitHttpServer;
let tokens: TokenServer;
let forge: ForgeContract;
let run: GitfleetRun | undefined;
const PLAN_TOKEN = "plan-token-not-a-real-credential-3e9a";
const keys = generateKeyPairSync("rsa", { modulusLength: 2048 });
const pem = keys.privateKey.export({ type: "pkcs8", format: "pem" }).toString();

beforeEach(async () => {
  ({ dir: root, cleanup } = tempDir("gitfleet-secrets-"));
  tokens = await startTokenServer(keys.publicKey, Date.now);
  const current = () => tokens.issued.at(-1) ?? "none issued yet";
  git = await startGitHttpServer(`${root}/srv`, current);
  forge = await ForgeContract.start("github", () =>
    forge.requests.length > 0 && planning ? PLAN_TOKEN : current(),
  );
});
let planning = false;
const forgeFlags = () => ["--forge", "github", "--forge-api-url", forge.url, "--forge-repo", "acme/fleet"];
afterEach(async () => {
  run?.child.kill("SIGKILL");
  await Promise.all([git.close(), tokens.close(), forge.close()]);
  cleanup();
});

describe("credentials on every surface", () => {
  it("never show in logs, metrics, the status branch or what is posted to the forge", async () => {
    const fleet = remoteFleet(root);
    const keyFile = join(root, "app-key.pem");
    writeFileSync(keyFile, pem);
    run = await spawnRun(
      [
        "--repo",
        `${git.url}/fleet.git`,
        "--github-app-id",
        "4242",
        "--github-app-installation-id",
        "77",
        "--github-app-key-file",
        keyFile,
        "--github-api-url",
        tokens.url,
        "--commit-status",
        ...forgeFlags(),
        "--cache-dir",
        `${root}/cache`,
        "--no-sync",
        "--listen",
        "127.0.0.1:0",
        "--interval",
        "1s",
        "--log-level",
        "debug",
      ],
      { GITFLEET_WEBHOOK_SECRET: "webhook-secret-for-tests" },
    );
    const source = gitIn(fleet.bare, "rev-parse", "main");
    await until(() => forge.statuses.get(source)?.find((s) => s.state === "success"), 30_000);
    // A push, reconciled with the same installation token (no refresh needed within its hour).
    const next = fleet.push(webReplicas(8), "web: 8 replicas");
    await until(() => forge.statuses.get(next)?.find((s) => s.state === "success"), 30_000);

    // A pull request's plan, posted with a token of its own.
    planning = true;
    const work = join(root, "pull-request");
    gitIn(root, "clone", "-q", fleet.bare, work);
    const planned = await gitfleetAsync(
      [
        "plan",
        "--repo",
        work,
        "--base",
        "HEAD~1",
        "--head",
        "HEAD",
        "--post",
        "--pull-request",
        "3",
        ...forgeFlags(),
      ],
      { env: { GITFLEET_FORGE_TOKEN: PLAN_TOKEN } },
    );
    expect(planned.stderr).toContain("commented on acme/fleet#3");

    const secrets = [
      ...tokens.issued,
      PLAN_TOKEN,
      // Any line of the key's body, and the key's header.
      ...pem.split("\n").filter((line) => line.length > 40),
      "PRIVATE KEY",
    ];
    expect(tokens.issued.length).toBeGreaterThan(0);
    const surfaces: Record<string, string> = {
      log: JSON.stringify(run.records),
      metrics: await (await fetch(`${run.url}/metrics`)).text(),
      "status branch": gitIn(fleet.bare, "log", "-p", "gitfleet/status"),
      "posted to the forge": JSON.stringify(forge.requests.map((r) => r.body)),
      "plan output": planned.stdout + planned.stderr,
    };
    expect(surfaces.log).toContain("reconcile done");
    expect(surfaces["posted to the forge"]).toContain("gitfleet plan");
    for (const [where, text] of Object.entries(surfaces))
      for (const secret of secrets)
        expect({ where, leaked: text.includes(secret) }).toEqual({ where, leaked: false });
  });
});
