import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { type AddressInfo, isIP } from "node:net";
import type { Logger } from "pino";
import { type AccessGate, type ApiScope, OPEN_SCOPE } from "./access-gate.js";
import { answerApi, type FleetApiSources } from "./fleet-api.js";
import { serveDashboard } from "./static-files.js";
import { StatusEvents } from "./status-events.js";
import { judgeWebhook } from "./webhook.js";

/** Push payloads are small; GitHub caps them at 25 MB, real ones are kilobytes. */
const MAX_BODY_BYTES = 5 * 2 ** 20;

export interface ControllerServerOptions {
  /** host:port; port 0 picks a free one. */
  readonly listen: string;
  /** The shared webhook secret; undefined disables the webhook endpoint (polling still runs). */
  readonly webhookSecret: string | undefined;
  readonly sourceBranch: string;
  /** Asks the loop for a reconcile. */
  readonly trigger: (reason: string) => void;
  /** True once the first reconcile finished (and no configuration error stands). */
  readonly ready: () => boolean;
  /** Why the controller is not ready, when it knows (a configuration error it waits on), for /readyz. */
  readonly notReadyBecause?: () => string | undefined;
  readonly logger: Logger;
  /** GET /metrics: the Prometheus exposition. */
  readonly metrics?: { text(): Promise<string>; readonly contentType: string };
  /** GET /api/…: the read-only JSON API, and /api/events for live updates. */
  readonly api?: FleetApiSources;
  /** The built dashboard (served at / when given). */
  readonly dashboardDir?: string;
  /**
   * Host names requests may name (the Host header), against DNS rebinding: a page elsewhere that
   * points its own name at this address cannot read the API. An IP address is always accepted (a
   * page can only be at an address's origin if this server served it), so probes and scrapes by
   * address work. Default: when listening on a loopback address, the loopback names only;
   * otherwise any (put a proxy that checks it in front).
   */
  readonly allowedHosts?: readonly string[];
  /** Who may read what (bearer tokens); without it the server is open, as before tokens existed. */
  readonly access?: AccessGate;
  /** Open connections at most (default 512) and live-update streams at most (default 100). */
  readonly maxConnections?: number;
  readonly maxEventStreams?: number;
}

export interface ControllerServer {
  /** http://host:port */
  readonly url: string;
  /** Tells live dashboards to look again (after a reconcile). */
  notify(): void;
  close(): Promise<void>;
}

/**
 * The controller's HTTP endpoint: `POST /webhook` (GitHub, GitLab, Gitea and Forgejo push events,
 * signature-checked), `GET /healthz` (the process is alive), `GET /readyz` (the first reconcile
 * finished), `GET /metrics` (Prometheus), the read-only JSON API under `/api/` with live updates at
 * `/api/events`, and the dashboard at `/`.
 */
export async function startControllerServer(options: ControllerServerOptions): Promise<ControllerServer> {
  const api = options.api;
  const events = api
    ? new StatusEvents(() => api.status.tip(), 1000, options.maxEventStreams ?? 100)
    : undefined;
  const [host, port] = splitListen(options.listen);
  const hosts =
    options.allowedHosts?.map((name) => name.toLowerCase()) ??
    (isLoopback(host) ? LOOPBACK_NAMES : undefined);
  const server: Server = createServer((request, response) => {
    const name = hostName(request.headers.host);
    if (hosts && !hosts.includes(name) && isIP(name) === 0) {
      send(response, 403, "this host name is not served here");
      return;
    }
    route(options, events, request, response).catch((error: unknown) => {
      options.logger.error({ err: error }, "HTTP request failed");
      if (!response.headersSent) send(response, 500, "internal error");
    });
  });
  server.maxConnections = options.maxConnections ?? 512;
  server.requestTimeout = 30_000;
  server.headersTimeout = 10_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, resolve);
  });
  const address = server.address() as AddressInfo;
  const url = `http://${address.family === "IPv6" ? `[${address.address}]` : address.address}:${address.port}`;
  options.logger.info({ url }, "listening");
  return {
    url,
    notify: () => void events?.check(),
    close: () => {
      events?.close();
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

async function route(
  options: ControllerServerOptions,
  events: StatusEvents | undefined,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  let url: URL;
  try {
    url = new URL(request.url ?? "/", "http://localhost");
    decodeURIComponent(url.pathname);
  } catch {
    return send(response, 400, "malformed URL");
  }
  const path = url.pathname;
  if (path === "/healthz") return send(response, 200, "ok");
  if (path === "/readyz")
    return options.ready()
      ? send(response, 200, "ready")
      : send(
          response,
          503,
          `not ready: ${options.notReadyBecause?.() ?? "the first reconcile has not finished"}`,
        );
  if (path === "/webhook") return webhook(options, request, response);
  const signIn = options.access?.signIn;
  if (path.startsWith("/auth/") && signIn && (await signIn.route(url, request, response))) return;
  return readOnly(options, events, url, request, response);
}

// GET endpoints: metrics, the JSON API, live events and the dashboard.
async function readOnly(
  options: ControllerServerOptions,
  events: StatusEvents | undefined,
  url: URL,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const path = url.pathname;
  if (request.method !== "GET" && request.method !== "HEAD") return send(response, 405, "use GET");
  if (path === "/metrics" && options.metrics) {
    const text = await options.metrics.text();
    response.writeHead(200, { "content-type": options.metrics.contentType }).end(text);
    return;
  }
  // The API and the dashboard answer whom a token or a session names (metrics and probes answer anyone).
  const scope = options.access?.scopeOf(request) ?? OPEN_SCOPE;
  if (scope === 401) return unauthorized(options.access, response, path);
  if (path === "/api/events" && events) return events.subscribe(response);
  if (path === "/api/whoami") return json(response, { status: 200, body: whoami(options.access, scope) });
  if (path.startsWith("/api/") && options.api) return api(options.api, url, response, scope);
  if (options.dashboardDir && !path.startsWith("/api/"))
    return serveDashboard(options.dashboardDir, path, response);
  return send(response, 404, "not found");
}

async function api(
  sources: FleetApiSources,
  url: URL,
  response: ServerResponse,
  scope: ApiScope,
): Promise<void> {
  // A plan is cancelled when its client leaves before the answer.
  const left = new AbortController();
  response.on("close", () => {
    if (!response.writableFinished) left.abort();
  });
  const answer = await answerApi(sources, url.pathname, url.searchParams, left.signal, scope);
  if (!left.signal.aborted) json(response, answer);
}

// Who the dashboard shows as signed in, and whether it can offer signing in.
function whoami(access: AccessGate | undefined, scope: ApiScope) {
  return {
    viewer: scope.viewer,
    via: scope.via,
    admin: scope.admin,
    teams: scope.teams,
    signIn: access?.signIn !== undefined,
  };
}

// The API says why in JSON; a page of the dashboard goes to sign in when people can.
function unauthorized(access: AccessGate | undefined, response: ServerResponse, path: string): void {
  const message = access?.refusal() ?? "who is asking?";
  if (path.startsWith("/api/")) {
    json(response, { status: 401, body: { error: message } }, { "www-authenticate": "Bearer" });
    return;
  }
  if (access?.signIn) {
    const location = `/auth/login?return=${encodeURIComponent(path)}`;
    response.writeHead(302, { location, "cache-control": "no-store" }).end();
    return;
  }
  response
    .writeHead(401, { "content-type": "text/plain; charset=utf-8", "www-authenticate": "Bearer" })
    .end(`${message}\n`);
}

async function webhook(
  options: ControllerServerOptions,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  if (request.method !== "POST") return send(response, 405, "use POST");
  if (options.webhookSecret === undefined)
    return send(response, 404, "the webhook is not configured (no secret)");
  const body = await readBody(request);
  if (!body) return send(response, 413, `payload larger than ${MAX_BODY_BYTES} bytes`);
  const verdict = judgeWebhook(request.headers, body, options.webhookSecret, options.sourceBranch);
  options.logger.info(
    { status: verdict.status, remote: request.socket.remoteAddress },
    `webhook: ${verdict.message}`,
  );
  if (verdict.status === 202) options.trigger(`webhook:${verdict.provider}`);
  send(response, verdict.status, verdict.message);
}

// The body, or undefined past MAX_BODY_BYTES. What follows the limit is read and dropped — up to
// DRAIN_BYTES, so that the client is done sending and reads the 413 instead of a reset connection;
// past that the connection is cut.
function readBody(request: IncomingMessage): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
      else if (size > DRAIN_BYTES) {
        resolve(undefined);
        request.destroy();
      }
    });
    request.on("end", () => resolve(size > MAX_BODY_BYTES ? undefined : Buffer.concat(chunks)));
    request.on("error", reject);
  });
}

const DRAIN_BYTES = 8 * MAX_BODY_BYTES;

const LOOPBACK_NAMES: readonly string[] = ["localhost", "127.0.0.1", "::1"];

/** Whether a --listen address (host:port) is on loopback only. */
export function listensOnLoopback(listen: string): boolean {
  return isLoopback(splitListen(listen)[0]);
}

/** Whether a host name or address (an IPv6 one bracketed or not) is this machine's loopback. */
export function isLoopback(host: string): boolean {
  const name = host.replace(/^\[(.*)\]$/, "$1");
  return name === "localhost" || name === "::1" || /^127\./.test(name);
}

// The host name of a Host header, without its port ("[::1]:8080" → "::1").
function hostName(header: string | undefined): string {
  const value = (header ?? "").trim().toLowerCase();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(value);
  if (bracketed) return bracketed[1] as string;
  return value.replace(/:\d+$/, "");
}

function json(
  response: ServerResponse,
  answer: { status: number; body: unknown },
  headers: Readonly<Record<string, string>> = {},
): void {
  response
    .writeHead(answer.status, {
      "content-type": "application/json; charset=utf-8",
      "cache-control": "no-cache",
      ...headers,
    })
    .end(JSON.stringify(answer.body));
}

function send(response: ServerResponse, status: number, message: string): void {
  response.writeHead(status, { "content-type": "text/plain; charset=utf-8" }).end(`${message}\n`);
}

function splitListen(listen: string): [string, number] {
  const match = /^(.*):(\d+)$/.exec(listen);
  if (!match) throw new Error(`--listen ${listen}: expected host:port, e.g. 127.0.0.1:8080`);
  return [(match[1] ?? "").replace(/^\[(.*)\]$/, "$1") || "127.0.0.1", Number(match[2])];
}
