import { createVerify, type KeyObject } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * GitHub's installation-token endpoint as its documentation gives its contract: POST
 * /app/installations/{id}/access_tokens with a JWT the App's public key verifies (RS256, iss the
 * App's id, not expired, lifetime at most ten minutes) → 201 with a token and its expires_at.
 */
export interface TokenServer {
  readonly url: string;
  readonly issued: string[];
  readonly refused: string[];
  /** Milliseconds the next token lives (negative: already expired). */
  lifetime: number;
  close(): Promise<void>;
}

export async function startTokenServer(publicKey: KeyObject, now: () => number): Promise<TokenServer> {
  const issued: string[] = [];
  const refused: string[] = [];
  const state = { lifetime: 60 * 60_000 };
  const server: Server = createServer((request, response) => {
    const refuse = (status: number, message: string) => {
      refused.push(message);
      response.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify({ message }));
    };
    const match = /^\/app\/installations\/(\d+)\/access_tokens$/.exec(request.url ?? "");
    if (request.method !== "POST" || !match) return refuse(404, "Not Found");
    const jwt = (request.headers.authorization ?? "").replace(/^Bearer /, "");
    const [header, payload, signature] = jwt.split(".");
    const signed = createVerify("RSA-SHA256").update(`${header}.${payload}`);
    if (!header || !payload || !signature || !signed.verify(publicKey, signature, "base64url"))
      return refuse(401, "A JSON web token could not be decoded");
    const claims = JSON.parse(Buffer.from(payload, "base64url").toString()) as Record<
      string,
      number | string
    >;
    const seconds = Math.floor(now() / 1000);
    if (claims.iss !== "4242") return refuse(401, "Integration not found");
    if (Number(claims.exp) <= seconds || Number(claims.exp) - Number(claims.iat) > 600)
      return refuse(401, "'Expiration time' claim ('exp') is too far in the future or expired");
    const token = `ghs_${match[1]}_${issued.length + 1}`;
    issued.push(token);
    response
      .writeHead(201, { "content-type": "application/json" })
      .end(JSON.stringify({ token, expires_at: new Date(now() + state.lifetime).toISOString() }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    issued,
    refused,
    get lifetime() {
      return state.lifetime;
    },
    set lifetime(ms: number) {
      state.lifetime = ms;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
