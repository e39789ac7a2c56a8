import { createSign } from "node:crypto";
import { readConfiguredFile } from "../util/bounded-file.js";
import { readBoundedResponse } from "../util/bounded-response.js";

/**
 * How gitfleet proves who it is to a Git remote over HTTPS, asked before every fetch and push: a
 * credential that rotates (a token file a Kubernetes Secret updates, a GitHub App's installation
 * token) takes effect on the next request, without a restart. Its values never leave the
 * Authorization header: not in errors, logs or metrics.
 */
export interface GitCredentials {
  /** The Authorization header for the next Git request, or undefined to send none. */
  authorization(): Promise<string | undefined>;
  /** The token (or password) alone, for a forge's REST API: `Authorization: Bearer <token>`. */
  token(): Promise<string | undefined>;
  /** Where the credential comes from, for messages ("token file /etc/gitfleet/token"); never its value. */
  readonly source: string;
}

/** The user name Git forges take with a token as the password (GitHub, GitLab and Gitea accept it). */
export const TOKEN_USERNAME = "x-access-token";

/** A token (or password) fixed for the life of the process: from the environment at start. */
export function staticToken(token: string, username = TOKEN_USERNAME, source = "token"): GitCredentials {
  const header = basic(username, token);
  return { source, authorization: async () => header, token: async () => token };
}

/** Bytes a token file may hold: tokens and passwords are short; anything longer is not one. */
const MAX_TOKEN_FILE = 16 * 1024;

/**
 * A token read from a file at every request, as a mounted Secret is: replaced on disk, used next time.
 * The file holds the token alone (surrounding whitespace ignored).
 */
export function tokenFile(path: string, username = TOKEN_USERNAME): GitCredentials {
  const source = `token file ${path}`;
  return {
    source,
    authorization: async () => basic(username, await readSecretFile(path, source)),
    token: () => readSecretFile(path, source),
  };
}

/** A GitHub App installation: its id, the installation's id and the App's private key (PEM). */
export interface GitHubAppOptions {
  readonly appId: string;
  readonly installationId: string;
  /** The App's private key file (PEM), read at each token refresh so that a rotated key is used. */
  readonly privateKeyFile: string;
  /** The REST API's base URL. Default https://api.github.com; GitHub Enterprise: https://host/api/v3. */
  readonly apiUrl?: string;
  /** Milliseconds since the epoch (tests pass a clock). */
  readonly now?: () => number;
  /** A token this close to its expiry is not used; a new one is asked for. Default 5 minutes. */
  readonly refreshBeforeMs?: number;
}

/** Bytes an App's private key file may hold (an RSA key in PEM is a few KiB). */
const MAX_KEY_FILE = 64 * 1024;
/** Installation tokens last an hour; one this close to its end is replaced before it is used. */
const REFRESH_BEFORE_MS = 5 * 60_000;
/** What the token endpoint may answer with, at most. */
const MAX_TOKEN_RESPONSE = 64 * 1024;

/**
 * A GitHub App's installation token: a JWT signed with the App's private key (RS256, as GitHub
 * requires: issued a minute in the past against clock drift, valid nine minutes) buys an
 * installation token, kept until shortly before its `expires_at` and then bought again. An expired
 * token is never sent; a failed refresh fails the fetch or push that needed it (and the next one
 * tries again).
 */
export function gitHubApp(options: GitHubAppOptions): GitCredentials {
  const now = options.now ?? Date.now;
  const margin = options.refreshBeforeMs ?? REFRESH_BEFORE_MS;
  const apiUrl = (options.apiUrl ?? "https://api.github.com").replace(/\/+$/, "");
  const source = `GitHub App ${options.appId} installation ${options.installationId}`;
  let current: { readonly token: string; readonly expiresAt: number } | undefined;
  let pending: Promise<{ readonly token: string; readonly expiresAt: number }> | undefined;
  const refresh = async () => {
    const key = await readSecretFile(
      options.privateKeyFile,
      `the private key file ${options.privateKeyFile}`,
      MAX_KEY_FILE,
    );
    const jwt = appJwt(options.appId, key, now());
    return installationToken(apiUrl, options.installationId, jwt, source);
  };
  const token = async () => {
    if (!current || current.expiresAt - margin <= now()) {
      pending ??= refresh().finally(() => {
        pending = undefined;
      });
      current = await pending;
      if (current.expiresAt <= now())
        throw new Error(`${source}: the installation token GitHub gave has already expired`);
    }
    return current.token;
  };
  return { source, token, authorization: async () => basic(TOKEN_USERNAME, await token()) };
}

/** The JWT a GitHub App authenticates as itself with (RS256; iat a minute back, exp nine minutes on). */
export function appJwt(appId: string, privateKeyPem: string, nowMs: number): string {
  const seconds = Math.floor(nowMs / 1000);
  const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url");
  const unsigned = `${encode({ alg: "RS256", typ: "JWT" })}.${encode({ iat: seconds - 60, exp: seconds + 540, iss: appId })}`;
  let signature: string;
  try {
    signature = createSign("RSA-SHA256").update(unsigned).sign(privateKeyPem, "base64url");
  } catch {
    // The key's bytes stay out of the message: only that it is not a usable RSA key.
    throw new Error(`GitHub App ${appId}: the private key is not a PEM RSA private key`);
  }
  return `${unsigned}.${signature}`;
}

async function installationToken(
  apiUrl: string,
  installationId: string,
  jwt: string,
  source: string,
): Promise<{ token: string; expiresAt: number }> {
  const url = `${apiUrl}/app/installations/${encodeURIComponent(installationId)}/access_tokens`;
  let response: Response;
  try {
    response = await fetch(url, {
      method: "POST",
      headers: {
        authorization: `Bearer ${jwt}`,
        accept: "application/vnd.github+json",
        "x-github-api-version": "2022-11-28",
        "user-agent": "gitfleet",
      },
      signal: AbortSignal.timeout(15_000),
      redirect: "error",
    });
  } catch (error) {
    throw new Error(`${source}: cannot reach ${url}: ${(error as Error).message}`);
  }
  const body = await readBoundedResponse(response, MAX_TOKEN_RESPONSE);
  if (response.status !== 201 && response.status !== 200)
    throw new Error(`${source}: ${url} answered HTTP ${response.status}${errorMessage(body)}`);
  return readToken(body, source);
}

function readToken(body: string, source: string): { token: string; expiresAt: number } {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    throw new Error(`${source}: the token endpoint answered something that is not JSON`);
  }
  const { token, expires_at: expires } = (value ?? {}) as { token?: unknown; expires_at?: unknown };
  if (typeof token !== "string" || !/^[\x21-\x7e]{1,1024}$/.test(token))
    throw new Error(`${source}: the token endpoint's answer has no usable token`);
  const expiresAt = typeof expires === "string" ? Date.parse(expires) : Number.NaN;
  if (!Number.isFinite(expiresAt))
    throw new Error(`${source}: the token endpoint's answer has no expires_at time`);
  return { token, expiresAt };
}

// GitHub's error bodies carry a `message` (never a credential); anything else is not repeated.
function errorMessage(body: string): string {
  try {
    const message = (JSON.parse(body) as { message?: unknown }).message;
    return typeof message === "string" ? `: ${message.replace(/[^\x20-\x7e]/g, " ").slice(0, 200)}` : "";
  } catch {
    return "";
  }
}

// A secret file's content, trimmed; what goes wrong is said about the file, never with its content.
async function readSecretFile(path: string, what: string, limit = MAX_TOKEN_FILE): Promise<string> {
  const text = Buffer.from(await readConfiguredFile(path, what, limit))
    .toString("utf8")
    .trim();
  if (text === "") throw new Error(`${what} is empty`);
  return text;
}

function basic(username: string, password: string): string {
  if (/[\r\n]/.test(password) || /[\r\n:]/.test(username))
    throw new Error("a Git credential may not contain a line break (or a colon in the user name)");
  return `Basic ${Buffer.from(`${username}:${password}`).toString("base64")}`;
}
