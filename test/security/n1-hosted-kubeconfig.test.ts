import { truncateSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createCertificateAuthority, issueCertificate } from "../../src/credentials/x509.js";
import { type MemberConnection, MemberCredentials } from "../../src/kube/connections.js";
import { MemberClient } from "../../src/kube/member-client.js";
import { simulatedKubeconfig } from "../../src/sim/kubeconfig.js";
import { type SimulatedMember, startMember } from "../../src/sim/member-server.js";
import { tempDir } from "../helpers/git-repo.js";
import { hostedPair, putAdminKubeconfig } from "../helpers/hosted-example.js";
import { clientConfig } from "../helpers/member.js";

/**
 * N1 (security audit 2): a hosted cluster's admin kubeconfig was read from a Secret in its host and
 * handed to a kubeconfig loader, which honours `token-file`, certificate and key paths and any
 * `server`. A hostile host (or a workload that can write Secrets in the control-plane namespace)
 * made the controller read any of its files and send it as a bearer token to a server of its choice,
 * and a file with a newline was quoted in the error that reached the status branch. The connection
 * is now built by gitfleet from typed parts: the endpoint from the Cluster file, the CA and client
 * certificate as bounded PEM; nothing the Secret holds names a file, a proxy, a plugin or a server.
 */

const PLANTED = "controller-sa-token-SECRET123notreal";
let dir: string;
let cleanup: () => void;
let host: SimulatedMember;
let attacker: { server: Server; url: string; requests: string[] };

beforeEach(async () => {
  ({ dir, cleanup } = tempDir("gitfleet-n1-"));
  host = await startMember({ name: "meta" });
  const requests: string[] = [];
  const server = createServer((request, response) => {
    requests.push(`${request.method} ${request.url} ${request.headers.authorization ?? ""}`);
    response.writeHead(200, { "content-type": "application/json" }).end('{"kind":"APIVersions"}');
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  attacker = { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
});
afterEach(async () => {
  attacker.server.closeAllConnections();
  await new Promise((resolve) => attacker.server.close(resolve));
  await host.close();
  cleanup();
});

const { host: meta, hosted } = hostedPair({ type: "HostPort", port: 9, address: "127.0.0.1" });

// The host holds `kubeconfig` as pc-1's admin kubeconfig; the controller resolves pc-1 and, if it got
// a connection, asks it for /api as a probe would.
async function resolveWith(kubeconfig: unknown): Promise<MemberConnection> {
  const text = typeof kubeconfig === "string" ? kubeconfig : JSON.stringify(kubeconfig);
  await putAdminKubeconfig(new MemberClient("meta", clientConfig(host)), text);
  const kubeconfigFile = join(dir, "operator.kubeconfig");
  writeFileSync(kubeconfigFile, simulatedKubeconfig([{ name: "meta", url: host.url }]));
  const credentials = new MemberCredentials({ kubeconfig: kubeconfigFile, env: {} });
  const connection = (await credentials.resolve([meta, hosted])).find((c) => c.cluster === "pc-1");
  if (!connection) throw new Error("pc-1 was not resolved");
  if ("config" in connection && connection.config)
    await new MemberClient("pc-1", connection.config, { timeoutMs: 1000, retries: 0 }).probe();
  return connection;
}

const kubeconfig = (cluster: Record<string, unknown>, user: Record<string, unknown>) => ({
  apiVersion: "v1",
  kind: "Config",
  clusters: [{ name: "pc-1", cluster }],
  users: [{ name: "admin", user }],
  contexts: [{ name: "pc-1", context: { cluster: "pc-1", user: "admin" } }],
  "current-context": "pc-1",
});

// Real certificate material of a CA, as gitfleet generates it.
async function material() {
  const ca = await createCertificateAuthority(
    { commonName: "pc-1-ca", usage: "ca", validityMs: 3_600_000 },
    Date.now(),
  );
  const client = await issueCertificate(
    {
      commonName: "kubernetes-admin",
      organization: "system:masters",
      usage: "client",
      validityMs: 3_600_000,
    },
    ca,
    Date.now(),
  );
  const b64 = (text: string) => Buffer.from(text).toString("base64");
  return {
    "certificate-authority-data": b64(ca.certificatePem),
    "client-certificate-data": b64(client.certificatePem),
    "client-key-data": b64(client.key.privatePem),
  };
}

describe("N1: a hosted cluster's admin kubeconfig is data, never a kubeconfig the controller loads", () => {
  it.each([
    [
      "the audit's token-file with the controller's token",
      (token: string) => ({ "token-file": token }),
      "token-file",
    ],
    ["a token file ending in a newline", (token: string) => ({ "token-file": `${token}-nl` }), "token-file"],
    // The audit's /dev/zero is the same road: no file the Secret names is ever opened. (A sparse file
    // stands in for it here, so that a regression fails this test instead of exhausting the machine.)
    ["a huge token file", (token: string) => ({ "token-file": `${token}-huge` }), "token-file"],
    [
      "certificate and key paths",
      (token: string) => ({ "client-certificate": token, "client-key": token }),
      "client-certificate, client-key",
    ],
    ["an inline token", () => ({ token: PLANTED }), "token"],
    [
      "a plugin",
      () => ({ exec: { apiVersion: "client.authentication.k8s.io/v1", command: "/bin/sh" } }),
      "exec",
    ],
  ])("%s: refused by name, nothing read, nothing sent", async (_name, user, named) => {
    const tokenFile = join(dir, "sa-token");
    writeFileSync(tokenFile, PLANTED);
    writeFileSync(`${tokenFile}-nl`, `${PLANTED}\nGITFLEET_GIT_TOKEN=ghp_LEAKME123notreal\n`);
    writeFileSync(`${tokenFile}-huge`, PLANTED);
    truncateSync(`${tokenFile}-huge`, 256 * 2 ** 20);
    const connection = await resolveWith(
      kubeconfig({ server: attacker.url, "insecure-skip-tls-verify": true }, user(tokenFile)),
    );
    expect(connection).toMatchObject({ error: expect.stringContaining(named) });
    expect(JSON.stringify(connection)).not.toMatch(/SECRET123|LEAKME|sa-token/);
    expect(attacker.requests).toEqual([]);
  });

  it("a server the host names is never used: the Cluster file says where pc-1 is", async () => {
    const { "certificate-authority-data": ca, ...user } = await material();
    const connection = await resolveWith(
      kubeconfig({ server: attacker.url, "certificate-authority-data": ca }, user),
    );
    // The certificates are used; the server is the fleet's endpoint.
    if (!("config" in connection) || !connection.config) throw new Error(JSON.stringify(connection));
    expect(connection.config.getCurrentCluster()?.server).toBe("https://127.0.0.1:9");
    expect(connection.config.getCurrentUser()).toMatchObject({ name: "gitfleet-admin" });
    expect(Object.keys(connection.config.getCurrentUser() ?? {}).sort()).toEqual([
      "certData",
      "keyData",
      "name",
    ]);
    expect(attacker.requests).toEqual([]);
  });

  it.each([
    [
      "a CA that is not PEM",
      { "certificate-authority-data": Buffer.from(PLANTED).toString("base64") },
      "the CA",
    ],
    [
      "a key that is not a key",
      {
        "client-key-data": Buffer.from(
          `-----BEGIN PRIVATE KEY-----\n${Buffer.from(PLANTED).toString("base64")}\n-----END PRIVATE KEY-----\n`,
        ).toString("base64"),
      },
      "the client key",
    ],
    [
      "a certificate of 100 kB",
      { "client-certificate-data": Buffer.from("A".repeat(100_000)).toString("base64") },
      "the client certificate",
    ],
  ])("%s: refused without quoting it", async (_name, broken, what) => {
    const parts = await material();
    const { "certificate-authority-data": ca, ...user } = { ...parts, ...broken };
    const connection = await resolveWith(
      kubeconfig({ server: attacker.url, "certificate-authority-data": ca }, user),
    );
    expect(connection).toMatchObject({ error: expect.stringContaining(what) });
    expect(JSON.stringify(connection)).not.toContain("SECRET123");
    expect(attacker.requests).toEqual([]);
  });

  it("a kubeconfig text that is not JSON, or is huge, is refused as not gitfleet's", async () => {
    for (const text of [`clusters: []\nusers: [{user: {token-file: /etc/passwd}}]\n`, "{".repeat(300_000)]) {
      const connection = await resolveWith(text);
      expect(connection).toMatchObject({
        error: expect.stringMatching(/not one gitfleet wrote|holds no admin kubeconfig/),
      });
    }
    expect(attacker.requests).toEqual([]);
  });
});
