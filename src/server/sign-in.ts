import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "pino";
import type { Viewer } from "../model/viewers.js";
import { localPath, OidcClient, type OidcSettings, type PendingLogin } from "./oidc.js";
import {
  cookieValue,
  openSession,
  SESSION_COOKIE,
  SIGN_IN_COOKIE,
  seal,
  sealSession,
  unseal,
} from "./sessions.js";

export interface SignInOptions {
  readonly oidc: OidcSettings;
  /** The key sessions are sealed with (--session-key-file); sessions end when it changes. */
  readonly sessionKey: Uint8Array;
  /** Cookies only over https: when the public URL is https. */
  readonly secureCookies: boolean;
  /** How long a session lasts (default 12 hours). */
  readonly sessionMs?: number;
  readonly logger: Logger;
  readonly now?: () => number;
}

const DEFAULT_SESSION_MS = 12 * 3600_000;
/** A sign-in must come back from the identity provider within this. */
const SIGN_IN_MS = 10 * 60_000;

/**
 * People signing in with OpenID Connect: `GET /auth/login` sends the browser to the identity provider
 * (the sign-in in progress — state, nonce, PKCE verifier — kept in a sealed cookie for ten minutes),
 * `GET /auth/callback` finishes it and keeps the person's names in a sealed session cookie (HttpOnly,
 * SameSite=Lax, Secure behind https), `POST /auth/logout` ends it. The provider's discovery document
 * is read at the first sign-in, and again after a failure.
 */
export class SignIn {
  private client: Promise<OidcClient> | undefined;
  private readonly now: () => number;

  constructor(private readonly options: SignInOptions) {
    this.now = options.now ?? Date.now;
  }

  /** The person a request's session cookie names, if it carries a valid one. */
  viewerOf(request: IncomingMessage): Viewer | undefined {
    const value = cookieValue(request.headers.cookie, SESSION_COOKIE);
    return openSession(value, this.options.sessionKey, this.now());
  }

  /** Answers /auth/… paths; false for any other path. */
  async route(url: URL, request: IncomingMessage, response: ServerResponse): Promise<boolean> {
    switch (url.pathname) {
      case "/auth/login":
        if (!isGet(request, response)) return true;
        await this.login(url, response);
        return true;
      case "/auth/callback":
        if (!isGet(request, response)) return true;
        await this.callback(url, request, response);
        return true;
      case "/auth/logout":
        this.logout(request, response);
        return true;
      default:
        return false;
    }
  }

  private async login(url: URL, response: ServerResponse): Promise<void> {
    let client: OidcClient;
    try {
      client = await this.discovered();
    } catch (error) {
      this.options.logger.warn({ err: error }, "sign-in: the identity provider's discovery failed");
      return text(response, 502, `the identity provider did not answer as expected: ${message(error)}`);
    }
    const { location, pending } = client.begin(url.searchParams.get("return") ?? "/");
    const cookie = seal("sign-in", pending, this.options.sessionKey, this.now() + SIGN_IN_MS);
    response
      .writeHead(302, {
        location,
        "set-cookie": this.cookie(SIGN_IN_COOKIE, cookie, SIGN_IN_MS, "/auth/"),
        "cache-control": "no-store",
      })
      .end();
  }

  private async callback(url: URL, request: IncomingMessage, response: ServerResponse): Promise<void> {
    const pending = pendingOf(
      unseal(
        "sign-in",
        cookieValue(request.headers.cookie, SIGN_IN_COOKIE),
        this.options.sessionKey,
        this.now(),
      ),
    );
    if (!pending)
      return text(
        response,
        400,
        "no sign-in is in progress in this browser (or it took longer than ten minutes): start again at /auth/login",
      );
    let viewer: Viewer;
    try {
      viewer = await (await this.discovered()).finish(url.searchParams, pending);
    } catch (error) {
      this.options.logger.warn({ reason: message(error) }, "sign-in refused");
      return text(response, 401, `the sign-in was refused: ${message(error)}`);
    }
    const ttl = this.options.sessionMs ?? DEFAULT_SESSION_MS;
    this.options.logger.info({ subject: viewer.subject, names: viewer.names }, "signed in");
    response
      .writeHead(302, {
        location: localPath(pending.returnTo),
        "set-cookie": [
          this.cookie(
            SESSION_COOKIE,
            sealSession(viewer, this.options.sessionKey, this.now() + ttl),
            ttl,
            "/",
          ),
          this.cookie(SIGN_IN_COOKIE, "", 0, "/auth/"),
        ],
        "cache-control": "no-store",
      })
      .end();
  }

  // Signing out is a POST from this server's own pages: another site cannot sign a person out.
  private logout(request: IncomingMessage, response: ServerResponse): void {
    const origin = request.headers.origin;
    if (request.method !== "POST") text(response, 405, "use POST");
    else if (origin !== undefined && hostOf(origin) !== (request.headers.host ?? "").toLowerCase())
      text(response, 403, "signing out is for this server's own pages");
    else signedOut(response, this.cookie(SESSION_COOKIE, "", 0, "/"));
  }

  private discovered(): Promise<OidcClient> {
    if (!this.client) {
      const client = OidcClient.discover(this.options.oidc);
      this.client = client;
      client.catch(() => {
        if (this.client === client) this.client = undefined;
      });
    }
    return this.client;
  }

  private cookie(name: string, value: string, maxAgeMs: number, path: string): string {
    const secure = this.options.secureCookies ? "; Secure" : "";
    return `${name}=${value}; Path=${path}; Max-Age=${Math.floor(maxAgeMs / 1000)}; HttpOnly; SameSite=Lax${secure}`;
  }
}

function signedOut(response: ServerResponse, cookie: string): void {
  response
    .writeHead(200, {
      "content-type": "text/html; charset=utf-8",
      "set-cookie": cookie,
      "cache-control": "no-store",
    })
    .end(
      '<!doctype html><meta charset="utf-8"><title>gitfleet</title><p>You are signed out of gitfleet. <a href="/auth/login">Sign in again</a></p>\n',
    );
}

function pendingOf(content: unknown): PendingLogin | undefined {
  const p = (content ?? {}) as Partial<Record<keyof PendingLogin, unknown>>;
  return typeof p.state === "string" &&
    typeof p.nonce === "string" &&
    typeof p.verifier === "string" &&
    typeof p.returnTo === "string"
    ? { state: p.state, nonce: p.nonce, verifier: p.verifier, returnTo: p.returnTo }
    : undefined;
}

function isGet(request: IncomingMessage, response: ServerResponse): boolean {
  if (request.method === "GET") return true;
  text(response, 405, "use GET");
  return false;
}

function hostOf(origin: string): string {
  try {
    return new URL(origin).host.toLowerCase();
  } catch {
    return "";
  }
}

function message(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).slice(0, 300);
}

function text(response: ServerResponse, status: number, body: string): void {
  response
    .writeHead(status, { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" })
    .end(`${body}\n`);
}
