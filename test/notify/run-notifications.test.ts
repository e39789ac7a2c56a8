import { createHmac } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { BASE_SPEC, fleetFiles } from "../helpers/fleet-spec.js";
import { commitTree, createRepo, tempDir } from "../helpers/git-repo.js";
import { type GitfleetRun, spawnRun } from "../helpers/gitfleet-run.js";
import { until } from "../helpers/member.js";

/**
 * `gitfleet run` as it is deployed: fleet.yaml routes invalid source commits to a webhook whose URL
 * and key are files in --notification-secrets-dir; a commit that breaks the fleet is delivered,
 * signed, and the key is read from the file as it is at delivery time.
 */
let root: string;
let cleanup: () => void;
let run: GitfleetRun | undefined;
const received: { headers: IncomingHttpHeaders; body: string }[] = [];
const server = createServer((req, res) => {
  let body = "";
  req.on("data", (c: Buffer) => {
    body += c.toString();
  });
  req.on("end", () => {
    received.push({ headers: req.headers, body });
    res.writeHead(202).end();
  });
});

beforeEach(async () => {
  ({ dir: root, cleanup } = tempDir("gitfleet-run-notify-"));
  received.length = 0;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
});
afterEach(async () => {
  run?.child.kill("SIGKILL");
  await new Promise((resolve) => server.close(resolve));
  cleanup();
});

const FLEET_YAML = `apiVersion: gitfleet.io/v1alpha1
kind: Fleet
metadata:
  name: t
spec:
  notifications:
    sinks:
      - name: platform
        type: webhook
        secretRef: platform
    routes:
      - events: [sourceInvalid]
        sinks: [platform]
`;

describe("gitfleet run's notifications", () => {
  it("sends an invalid source commit to the webhook fleet.yaml routes it to, signed with the operator's key", async () => {
    const repo = join(root, "fleet");
    const files = new Map(fleetFiles(BASE_SPEC));
    files.set("fleet.yaml", new TextEncoder().encode(FLEET_YAML));
    mkdirSync(repo);
    createRepo(repo, files);
    const secrets = join(root, "notify");
    // In a cluster, a mounted Secret.
    mkdirSync(secrets);
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/gitfleet`;
    writeFileSync(join(secrets, "platform.url"), `${url}\n`);
    writeFileSync(join(secrets, "platform.signing-key"), "first-key");
    run = await spawnRun(
      ["--repo", repo, "--no-sync", "--listen", "127.0.0.1:0", "--interval", "1s"].concat([
        "--notification-secrets-dir",
        secrets,
      ]),
      { GITFLEET_WEBHOOK_SECRET: "webhook-secret-for-tests" },
    );
    await until(() => (run?.records.some((r) => r.msg === "reconcile done") ? true : undefined), 30_000);
    // The key rotates before the breaking commit: the delivery is signed with the new one.
    writeFileSync(join(secrets, "platform.signing-key"), "second-key");
    files.set("apps/web/deployment.yaml", new TextEncoder().encode("kind: [\n"));
    const broken = commitTree(repo, files, "web: a typo");
    const [delivery] = await until(() => (received.length > 0 ? received : undefined), 30_000);
    const event = JSON.parse(delivery?.body ?? "{}") as {
      type: string;
      sourceCommit: string;
      summary: string;
    };
    expect(event).toMatchObject({ type: "sourceInvalid", sourceCommit: broken });
    expect(event.summary).toMatch(/^Source [0-9a-f]{7} is invalid/);
    expect(delivery?.headers["x-gitfleet-signature-256"]).toBe(
      `sha256=${createHmac("sha256", "second-key")
        .update(delivery?.body ?? "")
        .digest("hex")}`,
    );
    const metrics = await (await fetch(`${run.url}/metrics`)).text();
    expect(metrics).toMatch(/gitfleet_delivery_backlog\{sink="notify\/platform"\} 0/);
    // The sink's URL is the operator's secret: never logged.
    expect(JSON.stringify(run.records)).not.toContain(url);
  });
});
