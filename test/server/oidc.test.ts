import { createHash } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair, type JWTPayload, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { localPath, OidcClient } from "../../src/server/oidc.js";

// The OpenID Connect client against a provider that lies: a real HTTP server on loopback that
// publishes one key and hands out ID tokens each case shapes (signed by another key, for another
// audience, expired, with another nonce, unsigned). The client must accept only the honest one.
// (The honest flow against a real provider, Gitea in Chromium, is test/e2e/sign-in.e2e.ts.)

const CLIENT = { id: "gitfleet", secret: "client-secret-for-tests" };
let server: Server;
let issuer: string;
let sign: (claims: JWTPayload, options?: { key?: "other" | "none" }) => Promise<string>;
/** What the token endpoint answers next (an ID token for the code's nonce, shaped by the case). */
let nextToken: (nonce: string) => Promise<unknown>;
let discoveryIssuer: string | undefined;
let lastTokenRequest: { authorization: string | undefined; body: URLSearchParams } | undefined;
/** code → the PKCE challenge and nonce the authorization request carried. */
const codes = new Map<string, { challenge: string; nonce: string }>();

beforeAll(async () => {
  const ours = await generateKeyPair("RS256");
  const other = await generateKeyPair("RS256");
  const jwk = { ...(await exportJWK(ours.publicKey)), kid: "k1", alg: "RS256", use: "sig" };
  sign = async (claims, options = {}) => {
    if (options.key === "none") {
      const part = (o: unknown) => Buffer.from(JSON.stringify(o)).toString("base64url");
      return `${part({ alg: "none" })}.${part(claims)}.`;
    }
    return new SignJWT(claims)
      .setProtectedHeader({ alg: "RS256", kid: "k1" })
      .sign(options.key === "other" ? other.privateKey : ours.privateKey);
  };
  server = createServer((request, response) => {
    const url = new URL(request.url ?? "/", issuer);
    const reply = (status: number, body: unknown): void => {
      response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
    };
    if (url.pathname === "/.well-known/openid-configuration")
      return reply(200, {
        issuer: discoveryIssuer ?? issuer,
        authorization_endpoint: `${issuer}authorize`,
        token_endpoint: `${issuer}token`,
        jwks_uri: `${issuer}jwks`,
      });
    if (url.pathname === "/jwks") return reply(200, { keys: [jwk] });
    if (url.pathname === "/token") {
      let text = "";
      request.on("data", (chunk) => {
        text += chunk;
      });
      request.on("end", () => {
        const body = new URLSearchParams(text);
        lastTokenRequest = { authorization: request.headers.authorization, body };
        const issued = codes.get(body.get("code") ?? "");
        const verifier = body.get("code_verifier") ?? "";
        const basic = `Basic ${Buffer.from(`${CLIENT.id}:${CLIENT.secret}`).toString("base64")}`;
        if (!issued || request.headers.authorization !== basic)
          return reply(400, { error: "invalid_client" });
        if (createHash("sha256").update(verifier).digest("base64url") !== issued.challenge)
          return reply(400, { error: "invalid_grant" });
        void nextToken(issued.nonce).then((token) => reply(200, { id_token: token, token_type: "Bearer" }));
      });
      return;
    }
    reply(404, {});
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const claims = (nonce: string, extra: JWTPayload = {}): JWTPayload => ({
  iss: issuer,
  aud: CLIENT.id,
  sub: "42",
  nonce,
  iat: Math.floor(Date.now() / 1000),
  exp: Math.floor(Date.now() / 1000) + 300,
  preferred_username: "alice",
  email: "alice@example.com",
  email_verified: true,
  groups: ["shop", "shop:web"],
  ...extra,
});

function withoutSubject({ sub: _, ...rest }: JWTPayload): JWTPayload {
  return rest;
}

// Signs in once: the authorization request's challenge and nonce recorded as the provider would,
// then the callback finished with the code.
async function signIn(shape: (nonce: string) => Promise<unknown>, query: Record<string, string> = {}) {
  const client = await OidcClient.discover({
    issuer,
    clientId: CLIENT.id,
    clientSecret: CLIENT.secret,
    redirectUrl: "http://127.0.0.1:1/auth/callback",
  });
  const { location, pending } = client.begin("/apps");
  const request = new URL(location).searchParams;
  const code = `code-${Math.random()}`;
  codes.set(code, { challenge: request.get("code_challenge") ?? "", nonce: request.get("nonce") ?? "" });
  nextToken = shape;
  return client.finish(new URLSearchParams({ code, state: request.get("state") ?? "", ...query }), pending);
}

describe("signing in with OpenID Connect", () => {
  it("gives the viewer the provider's ID token names, after PKCE and client authentication", async () => {
    const viewer = await signIn((nonce) => sign(claims(nonce)));
    expect(viewer).toEqual({
      subject: "42",
      names: ["@alice", "alice@example.com", "@shop", "@shop/web"],
    });
    expect(lastTokenRequest?.body.get("grant_type")).toBe("authorization_code");
    expect(lastTokenRequest?.body.get("redirect_uri")).toBe("http://127.0.0.1:1/auth/callback");
  });

  it.each([
    [
      "signed by a key the provider does not publish",
      (n: string) => sign(claims(n), { key: "other" }),
      /signature verification failed/,
    ],
    ["unsigned (alg none)", (n: string) => sign(claims(n), { key: "none" }), /"alg"/],
    ["from another issuer", (n: string) => sign(claims(n, { iss: "http://127.0.0.1:9/" })), /"iss"/],
    ["for another client", (n: string) => sign(claims(n, { aud: "another-client" })), /"aud"/],
    [
      "for several clients without naming this one as azp",
      (n: string) => sign(claims(n, { aud: [CLIENT.id, "another-client"] })),
      /azp/,
    ],
    [
      "expired",
      (n: string) => sign(claims(n, { exp: Math.floor(Date.now() / 1000) - 120, iat: 1_700_000_000 })),
      /"exp"/,
    ],
    ["for another sign-in (nonce)", () => sign(claims("another-nonce")), /nonce/],
    ["without a subject", (n: string) => sign(withoutSubject(claims(n))), /"sub"/],
    ["absent", async () => undefined, /no ID token/],
  ])("refuses an ID token %s", async (_, shape, reason) => {
    await expect(signIn(shape)).rejects.toThrow(reason);
  });

  it("accepts several audiences when azp names this client", async () => {
    const viewer = await signIn((n) => sign(claims(n, { aud: [CLIENT.id, "other"], azp: CLIENT.id })));
    expect(viewer.subject).toBe("42");
  });

  it("refuses a callback with another sign-in's state, or the provider's refusal", async () => {
    await expect(signIn((n) => sign(claims(n)), { state: "forged" })).rejects.toThrow(/state does not match/);
    await expect(signIn((n) => sign(claims(n)), { error: "access_denied" })).rejects.toThrow(/refused/);
  });

  it("refuses a provider whose discovery document names another issuer", async () => {
    discoveryIssuer = "http://127.0.0.1:9/";
    try {
      await expect(
        OidcClient.discover({ issuer, clientId: "x", clientSecret: "y", redirectUrl: "http://127.0.0.1:1/" }),
      ).rejects.toThrow(/names the issuer/);
    } finally {
      discoveryIssuer = undefined;
    }
  });
});

describe("where a sign-in returns to", () => {
  it.each([
    ["/", "/"],
    ["/apps?x=1", "/apps?x=1"],
    ["//evil.example/", "/"],
    ["/\\evil.example/", "/"],
    ["https://evil.example/", "/"],
    ["javascript:alert(1)", "/"],
    ["/a b", "/"],
    ["", "/"],
  ])("%j → %j", (given, expected) => {
    expect(localPath(given)).toBe(expected);
  });
});
