import { readBoundedResponse } from "../util/bounded-response.js";

/**
 * One forge REST request with the retries a forge needs: rate limits (429, or GitHub's 403 with no
 * requests remaining) and server errors (5xx) and unreachable hosts are retried with jittered
 * exponential backoff, honouring Retry-After up to a bound; anything else is answered at once. The
 * answer's size is bounded, redirects are refused (a token is never sent elsewhere), and an error
 * names the method, the path and the forge's own message — never the token.
 */
export interface ForgeHttp {
  /** The API's base URL: https://api.github.com, https://gitlab.example.com/api/v4, https://gitea.example.com/api/v1. */
  readonly apiUrl: string;
  /** The headers that authenticate a request, asked before each one (a rotated token is used next time). */
  readonly auth: () => Promise<Readonly<Record<string, string>>>;
  /** Attempts per request, first included (default 5). */
  readonly attempts?: number;
  /** The first retry's pause in milliseconds, doubled each time (default 500). */
  readonly backoffMs?: number;
  readonly sleep?: (ms: number) => Promise<void>;
}

export interface ForgeAnswer {
  readonly status: number;
  readonly json: unknown;
  readonly headers: Headers;
}

export class ForgeError extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = "ForgeError";
  }
}

/** What a forge may answer with, at most: a page of a hundred long comments fits. */
const MAX_ANSWER = 8 * 1024 * 1024;
/** A Retry-After longer than this is not waited for inside one request. */
const MAX_RETRY_AFTER_MS = 60_000;
const TIMEOUT_MS = 20_000;

export async function forgeRequest(
  http: ForgeHttp,
  method: string,
  path: string,
  body?: unknown,
): Promise<ForgeAnswer> {
  const attempts = http.attempts ?? 5;
  const sleep = http.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  for (let attempt = 1; ; attempt++) {
    const outcome = await once(http, method, path, body);
    const wait = retryAfter(outcome, attempt, http.backoffMs ?? 500);
    if (wait === undefined || attempt >= attempts) {
      if (outcome instanceof Error) throw outcome;
      if (outcome.status >= 200 && outcome.status < 300) return outcome;
      throw new ForgeError(
        `${method} ${path} answered HTTP ${outcome.status}${forgeMessage(outcome.json)}`,
        outcome.status,
      );
    }
    await sleep(wait);
  }
}

async function once(
  http: ForgeHttp,
  method: string,
  path: string,
  body: unknown,
): Promise<ForgeAnswer | ForgeError> {
  // A token that cannot be read fails the request at once: no retry mends a missing file.
  const auth = await http.auth();
  let response: Response;
  try {
    response = await fetch(`${http.apiUrl.replace(/\/+$/, "")}${path}`, {
      method,
      headers: {
        accept: "application/json",
        "user-agent": "gitfleet",
        ...(body === undefined ? {} : { "content-type": "application/json" }),
        ...auth,
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      redirect: "error",
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (error) {
    return new ForgeError(`${method} ${path}: cannot reach ${http.apiUrl}: ${(error as Error).message}`);
  }
  const text = await readBoundedResponse(response, MAX_ANSWER).catch((error: Error) => error);
  if (text instanceof Error) return new ForgeError(`${method} ${path}: ${text.message}`, response.status);
  let json: unknown;
  try {
    json = text === "" ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, json, headers: response.headers };
}

// How long to wait before trying again, or undefined when the answer is final.
function retryAfter(
  outcome: ForgeAnswer | ForgeError,
  attempt: number,
  backoffMs: number,
): number | undefined {
  const backoff = Math.round(backoffMs * 2 ** (attempt - 1) * (0.5 + Math.random()));
  if (outcome instanceof ForgeError) return outcome.status === undefined ? backoff : undefined;
  const { status, headers } = outcome;
  const limited = status === 429 || (status === 403 && headers.get("x-ratelimit-remaining") === "0");
  if (!limited && status < 500) return undefined;
  const asked = retryAfterHeader(headers, limited);
  return asked === undefined ? backoff : Math.min(Math.max(asked, backoff), MAX_RETRY_AFTER_MS);
}

// Retry-After in seconds; when rate limited, else the limit's reset time (epoch seconds).
function retryAfterHeader(headers: Headers, limited: boolean): number | undefined {
  const value = headers.get("retry-after")?.trim();
  if (value !== undefined && /^\d{1,6}$/.test(value)) return Number(value) * 1000;
  const reset = (headers.get("x-ratelimit-reset") ?? headers.get("ratelimit-reset"))?.trim();
  if (limited && reset !== undefined && /^\d{1,12}$/.test(reset))
    return Math.max(Number(reset) * 1000 - Date.now(), 0);
  return undefined;
}

// The forge's own words on an error ("message", GitLab's "error"), printable and short.
function forgeMessage(json: unknown): string {
  const record = (json ?? {}) as { message?: unknown; error?: unknown };
  const raw =
    typeof record.message === "string"
      ? record.message
      : typeof record.error === "string"
        ? record.error
        : "";
  const text = typeof raw === "string" ? raw.replace(/[^\x20-\x7e]/g, " ").slice(0, 200) : "";
  return text === "" ? "" : `: ${text}`;
}
