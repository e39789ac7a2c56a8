import { generateKeyPairSync } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { appJwt, gitHubApp, staticToken, tokenFile } from "../../src/git/git-credentials.js";
import { tempDir } from "../helpers/git-repo.js";
import { startTokenServer, type TokenServer } from "../helpers/github-app-server.js";

let dir: string;
let cleanup: () => void;
beforeEach(() => {
  ({ dir, cleanup } = tempDir("gitfleet-credentials-"));
});
const servers: TokenServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
  cleanup();
});

const decode = (header: string | undefined) =>
  header?.startsWith("Basic ") ? Buffer.from(header.slice(6), "base64").toString() : undefined;

describe("token credentials", () => {
  it("reads a token file at every use, so a rotated Secret is taken up at once", async () => {
    const file = join(dir, "token");
    writeFileSync(file, "first-token\n");
    const credentials = tokenFile(file);
    expect(decode(await credentials.authorization())).toBe("x-access-token:first-token");
    writeFileSync(file, "  second-token  \n");
    expect(decode(await credentials.authorization())).toBe("x-access-token:second-token");
    expect(decode(await tokenFile(file, "fleet-bot").authorization())).toBe("fleet-bot:second-token");
    expect(decode(await staticToken("fixed").authorization())).toBe("x-access-token:fixed");
  });

  it.each([
    { content: "", error: /is empty/ },
    { content: "two\nlines-secret-part", error: /line break/ },
    { content: "x".repeat(20_000), error: /is too large \(over 16384 bytes\)/ },
  ])("refuses a token file that is no token, without repeating it ($error)", async ({ content, error }) => {
    const file = join(dir, "token");
    writeFileSync(file, content);
    const failure = await tokenFile(file)
      .authorization()
      .catch((e: Error) => e.message);
    expect(failure).toMatch(error);
    expect(failure).not.toContain("secret-part");
  });

  it("says which file is missing, and refuses what is no regular file", async () => {
    const failure = await tokenFile(join(dir, "absent"))
      .authorization()
      .catch((e: Error) => e.message);
    expect(failure).toBe(`token file ${join(dir, "absent")} does not exist`);
    const device = await tokenFile("/dev/zero")
      .authorization()
      .catch((e: Error) => e.message);
    expect(device).toBe("token file /dev/zero is not a regular file");
  });
});

describe("GitHub App credentials", () => {
  const keys = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const pem = keys.privateKey.export({ type: "pkcs8", format: "pem" }).toString();

  async function app(clock: { now: number }) {
    const keyFile = join(dir, "app-key.pem");
    writeFileSync(keyFile, pem);
    const server = await startTokenServer(keys.publicKey, () => clock.now);
    servers.push(server);
    const credentials = gitHubApp({
      appId: "4242",
      installationId: "77",
      privateKeyFile: keyFile,
      apiUrl: server.url,
      now: () => clock.now,
    });
    return { server, credentials, keyFile };
  }

  it("buys an installation token with a JWT and keeps it until shortly before it expires", async () => {
    const clock = { now: Date.UTC(2026, 11, 2, 12) };
    const { server, credentials } = await app(clock);
    expect(decode(await credentials.authorization())).toBe("x-access-token:ghs_77_1");
    clock.now += 54 * 60_000;
    expect(decode(await credentials.authorization())).toBe("x-access-token:ghs_77_1");
    // Inside the five minutes before expiry: a new token, before the old one can lapse mid-push.
    clock.now += 2 * 60_000;
    expect(decode(await credentials.authorization())).toBe("x-access-token:ghs_77_2");
    expect(server.issued).toEqual(["ghs_77_1", "ghs_77_2"]);
    expect(server.refused).toEqual([]);
  });

  it("asks once for many requests at the same time", async () => {
    const clock = { now: Date.UTC(2026, 11, 2, 12) };
    const { server, credentials } = await app(clock);
    const headers = await Promise.all([1, 2, 3, 4].map(() => credentials.authorization()));
    expect(new Set(headers.map(decode))).toEqual(new Set(["x-access-token:ghs_77_1"]));
    expect(server.issued).toHaveLength(1);
  });

  it("never uses a token that has expired, and tries again on the next request", async () => {
    const clock = { now: Date.UTC(2026, 11, 2, 12) };
    const { server, credentials } = await app(clock);
    server.lifetime = -1000;
    const failure = await credentials.authorization().catch((e: Error) => e.message);
    expect(failure).toMatch(/has already expired/);
    expect(failure).not.toContain("ghs_");
    server.lifetime = 60 * 60_000;
    expect(decode(await credentials.authorization())).toBe("x-access-token:ghs_77_2");
  });

  it("reports a refusal with GitHub's message and never the JWT or the key", async () => {
    const clock = { now: Date.UTC(2026, 11, 2, 12) };
    // The key file is read at each refresh: the same credentials take up whatever it holds.
    const { server, keyFile, credentials } = await app(clock);
    const other = generateKeyPairSync("rsa", { modulusLength: 2048 });
    const wrongPem = other.privateKey.export({ type: "pkcs8", format: "pem" }).toString();
    writeFileSync(keyFile, wrongPem);
    const failure = await credentials.authorization().catch((e: Error) => e.message);
    expect(failure).toBe(
      `GitHub App 4242 installation 77: ${server.url}/app/installations/77/access_tokens answered HTTP 401: A JSON web token could not be decoded`,
    );
    expect(failure).not.toContain(appJwt("4242", wrongPem, clock.now).slice(0, 40));
    writeFileSync(keyFile, "-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5\n-----END PRIVATE KEY-----\n");
    const broken = await credentials.authorization().catch((e: Error) => e.message);
    expect(broken).toBe("GitHub App 4242: the private key is not a PEM RSA private key");
    // The key file is read at each refresh: the right key again, and it works.
    writeFileSync(keyFile, pem);
    expect(decode(await credentials.authorization())).toBe("x-access-token:ghs_77_1");
  });
});
