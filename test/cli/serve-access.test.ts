import { createHash, randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import type { IncomingMessage } from "node:http";
import { join } from "node:path";
import { pino } from "pino";
import { afterAll, describe, expect, it } from "vitest";
import { type AccessFlags, accessFromFlags } from "../../src/cli/serve-access.js";
import { AccessGate } from "../../src/server/access-gate.js";
import { SESSION_COOKIE, seal, sealSession } from "../../src/server/sessions.js";
import { tempDir } from "../helpers/git-repo.js";

// Who may read the endpoint, from `gitfleet run`'s flags: each way in, the default on loopback and
// elsewhere, and every flag that cannot stand alone; then the gate those flags build, asked by a
// request with a session cookie, a token, both or neither.

const { dir, cleanup } = tempDir("gitfleet-serve-access-");
afterAll(cleanup);
const logger = pino({ level: "silent" });
const file = (name: string, content: string | Buffer) => {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
};
const key = randomBytes(32);
const keyFile = file("session-key", key);
const secretFile = file("client-secret", "s3cret-for-tests\n");
const tokensFile = file(
  "tokens",
  `ci @shop/platform sha256:${createHash("sha256").update("platform-token").digest("hex")}\n`,
);
const OIDC: AccessFlags = {
  listen: "0.0.0.0:8080",
  oidcIssuer: "https://idp.example.com/",
  oidcClientId: "gitfleet",
  oidcClientSecretFile: secretFile,
  publicUrl: "https://fleet.example.com",
  sessionKeyFile: keyFile,
};

describe("who may read, from the flags", () => {
  it.each([
    ["nothing, on loopback: open to this machine", { listen: "127.0.0.1:8080" }, "open"],
    ["nothing, the default listen (loopback)", {}, "open"],
    ["nothing, on IPv6 loopback", { listen: "[::1]:8080" }, "open"],
    ["nothing, on every address: nobody", { listen: "0.0.0.0:8080" }, "nobody"],
    ["nothing, on a pod address: nobody", { listen: "10.0.0.7:8080" }, "nobody"],
    ["anonymous reading only", { listen: "0.0.0.0:8080", anonymousRead: true }, "anonymous"],
    ["tokens", { listen: "0.0.0.0:8080", apiTokensFile: tokensFile }, "tokens"],
    ["sign-in", OIDC, "sign-in"],
  ] as const)("%s", async (_, flags, expected) => {
    const access = await accessFromFlags(flags, logger);
    const ways =
      access === undefined
        ? "open"
        : access.signIn
          ? "sign-in"
          : access.tokens
            ? "tokens"
            : access.anonymousRead
              ? "anonymous"
              : "nobody";
    expect(ways).toBe(expected);
  });

  it.each([
    ["--oidc-client-id alone", { oidcClientId: "gitfleet" }, /--oidc-client-id needs --oidc-issuer/],
    ["--session-key-file alone", { sessionKeyFile: keyFile }, /--session-key-file needs --oidc-issuer/],
    ["an issuer that is not a URL", { ...OIDC, oidcIssuer: "idp.example.com" }, /not a URL/],
    [
      "an issuer over plain http elsewhere than loopback",
      { ...OIDC, oidcIssuer: "http://idp.example.com/" },
      /over https/,
    ],
    ["no client id", { ...OIDC, oidcClientId: undefined }, /needs --oidc-client-id/],
    ["no client secret", { ...OIDC, oidcClientSecretFile: undefined }, /needs --oidc-client-secret-file/],
    ["no public URL", { ...OIDC, publicUrl: undefined }, /needs --public-url/],
    [
      "a public URL with credentials",
      { ...OIDC, publicUrl: "https://u:p@fleet.example.com" },
      /without credentials/,
    ],
    ["an empty client secret", { ...OIDC, oidcClientSecretFile: file("empty", "\n") }, /is empty/],
    [
      "a missing client secret file",
      { ...OIDC, oidcClientSecretFile: join(dir, "absent") },
      /does not exist/,
    ],
    [
      "a session key of 31 bytes",
      { ...OIDC, sessionKeyFile: file("k31", randomBytes(31)) },
      /at least 32 bytes/,
    ],
    ["a tokens file with a bad line", { apiTokensFile: file("bad-tokens", "ci nobody\n") }, /line 1/],
  ] as const)("refuses %s", async (_, flags, message) => {
    await expect(accessFromFlags(flags as AccessFlags, logger)).rejects.toThrow(message);
  });

  it.each(["http://localhost:3000/", "http://[::1]:3000/", "http://127.0.0.2/"])(
    "takes plain http on the loopback issuer %s",
    async (issuer) => {
      expect((await accessFromFlags({ ...OIDC, oidcIssuer: issuer }, logger))?.signIn).toBeDefined();
    },
  );

  it("takes a session key of exactly 32 bytes, and plain http on a loopback issuer", async () => {
    const access = await accessFromFlags(
      { ...OIDC, oidcIssuer: "http://127.0.0.1:3000/", sessionKeyFile: file("k32", randomBytes(32)) },
      logger,
    );
    expect(access?.signIn).toBeDefined();
  });
});

describe("the gate the flags build", () => {
  const model = () => ({
    fleet: {
      spec: { platformOwners: ["@shop/platform"] },
    } as never,
    teams: [
      {
        metadata: { name: "web" },
        spec: { paths: ["apps/web/**"], owners: ["@shop/web"] },
      } as never,
    ],
    apps: [
      { name: "web", resources: [{ origin: { file: "apps/web/deploy.yaml" } }] } as never,
      { name: "docs", resources: [{ origin: { file: "apps/docs/deploy.yaml" } }] } as never,
    ],
  });
  const request = (headers: Record<string, string>) => ({ headers }) as unknown as IncomingMessage;
  const cookie = (value: string) => ({ cookie: `other=1; ${SESSION_COOKIE}=${value}` });
  const alice = { subject: "7", names: ["@alice", "@shop/web"] };

  it("knows a person by their session, a program by its token, and refuses the rest", async () => {
    const access = await accessFromFlags({ ...OIDC, apiTokensFile: tokensFile }, logger);
    const gate = new AccessGate({ ...(access ?? { anonymousRead: false }), model });
    const person = gate.scopeOf(request(cookie(sealSession(alice, key, Date.now() + 60_000))));
    expect(person).toMatchObject({ viewer: "@alice", via: "session", admin: false, teams: ["web"] });
    expect(person !== 401 && [person.seesApp("web"), person.seesApp("docs")]).toEqual([true, false]);
    const program = gate.scopeOf(request({ authorization: "Bearer platform-token" }));
    expect(program).toMatchObject({ viewer: "token:ci", via: "token", admin: true, mayPlan: true });
    for (const refused of [
      {},
      cookie(sealSession(alice, key, Date.now() - 1)),
      cookie(sealSession(alice, randomBytes(32), Date.now() + 60_000)),
      cookie(seal("sign-in", { s: "7", n: ["@shop/platform"] }, key, Date.now() + 60_000)),
      // An unknown token is refused even beside a valid session.
      { ...cookie(sealSession(alice, key, Date.now() + 60_000)), authorization: "Bearer guess" },
    ])
      expect(gate.scopeOf(request(refused))).toBe(401);
    expect(gate.refusal()).toBe(
      "who is asking? sign in at /auth/login, or show a bearer token (Authorization: Bearer …)",
    );
  });

  it("with no way in, refuses everyone and says what the operator must set", async () => {
    const access = await accessFromFlags({ listen: "0.0.0.0:8080" }, logger);
    const gate = new AccessGate({ ...(access ?? { anonymousRead: false }), model });
    expect(gate.scopeOf(request({}))).toBe(401);
    expect(gate.refusal()).toMatch(/--oidc-issuer, --api-tokens-file nor --anonymous-read/);
  });
});
