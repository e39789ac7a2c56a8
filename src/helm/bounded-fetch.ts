import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import {
  type ClientRequest,
  request as httpRequest,
  type IncomingMessage,
  type RequestOptions,
} from "node:http";
import { request as httpsRequest } from "node:https";
import { isIP, type Socket } from "node:net";
import { connect as tlsConnect } from "node:tls";
import type { Admission, ChartSources } from "./chart-sources.js";

/** A fetch's answer: status, the headers gitfleet reads, and the body (bounded). */
export interface FetchAnswer {
  readonly status: number;
  readonly headers: Readonly<Record<string, string | undefined>>;
  readonly body: Buffer;
  /** Where the answer came from (after redirects), and on what grounds it was fetched. */
  readonly url: URL;
  readonly admission: Extract<Admission, { ok: true }>;
}

export interface FetchRequest {
  readonly url: URL;
  /** The operator's proxies (HTTPS_PROXY, HTTP_PROXY, NO_PROXY); none: connect directly. */
  readonly proxies?: Proxies;
  /** How the URL was admitted: its source's, or a URL it led to (then checked with admitFollow). */
  readonly admission: Extract<Admission, { ok: true }>;
  readonly maxBytes: number;
  /** What the thing fetched is called in errors ("index.yaml of https://charts.example.com"). */
  readonly what: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly timeoutMs?: number;
}

/** How host names are resolved: node:dns's lookup, with all addresses (tests give their own). */
export type Resolver = (
  hostname: string,
  options: { all: true },
  callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

/** The proxies the operator's environment names, and the hosts reached without one. */
export interface Proxies {
  readonly https?: URL;
  readonly http?: URL;
  /** NO_PROXY's entries: host names, domains (".example.com"), "*" for every host. */
  readonly noProxy: readonly string[];
}

/** The proxies of an environment: HTTPS_PROXY / HTTP_PROXY / NO_PROXY (or their lowercase spellings). */
export function proxiesOf(env: Readonly<Record<string, string | undefined>>): Proxies {
  const url = (...names: string[]) => {
    const value = names.map((name) => env[name]).find((v) => v !== undefined && v !== "");
    if (!value) return undefined;
    try {
      const parsed = new URL(/^[a-z]+:\/\//i.test(value) ? value : `http://${value}`);
      return parsed.protocol === "http:" ? parsed : undefined;
    } catch {
      return undefined;
    }
  };
  const https = url("HTTPS_PROXY", "https_proxy");
  const http = url("HTTP_PROXY", "http_proxy");
  const noProxy = (env.NO_PROXY ?? env.no_proxy ?? "")
    .split(",")
    .map((entry) => entry.trim().toLowerCase())
    .filter((entry) => entry !== "");
  return { ...(https ? { https } : {}), ...(http ? { http } : {}), noProxy };
}

// The proxy a URL goes through, if any: NO_PROXY's hosts and domains go direct.
function proxyFor(url: URL, proxies: Proxies | undefined): URL | undefined {
  if (!proxies) return undefined;
  const proxy = url.protocol === "https:" ? proxies.https : proxies.http;
  if (!proxy) return undefined;
  const host = url.hostname.toLowerCase().replace(/^\[|\]$/g, "");
  const direct = proxies.noProxy.some((entry) => {
    if (entry === "*") return true;
    const [name = "", port] = entry.split(/:(?=\d+$)/);
    if (port !== undefined && port !== (url.port || (url.protocol === "https:" ? "443" : "80"))) return false;
    const domain = name.replace(/^\*?\./, "");
    return host === domain || host.endsWith(`.${domain}`);
  });
  return direct ? undefined : proxy;
}

/** Why a fetch failed: what was refused or what went wrong, never what a server answered. */
export class FetchError extends Error {
  override readonly name = "FetchError";
}

const MAX_REDIRECTS = 3;
const DEFAULT_TIMEOUT_MS = 30_000;

/**
 * GETs a URL a fleet repo chose, through the chart-source policy: every host it connects to is
 * resolved here and each address checked before the connection (so a name cannot resolve to one
 * address for the check and another for the connection), redirects followed only to URLs the policy
 * admits (at most three, credentials never carried to another origin), the body read only up to
 * `maxBytes` (a Content-Length past it is refused before reading), the whole exchange within the
 * timeout. No proxy is used.
 */
export async function fetchBounded(
  sources: ChartSources,
  request: FetchRequest,
  resolver: Resolver = dnsLookup,
): Promise<FetchAnswer> {
  let url = request.url;
  let admission = request.admission;
  let headers = { ...request.headers };
  for (let hop = 0; ; hop++) {
    const answer = await fetchOnce(sources, { ...request, url, admission, headers }, resolver);
    if (answer.status < 300 || answer.status >= 400 || answer.status === 304) return answer;
    const location = answer.headers.location;
    if (!location) return answer;
    if (hop >= MAX_REDIRECTS) throw new FetchError(`${request.what}: more than ${MAX_REDIRECTS} redirects`);
    let next: URL;
    try {
      next = new URL(location, url);
    } catch {
      throw new FetchError(`${request.what}: redirected to something that is not a URL`);
    }
    const followed = sources.admitFollow(next, admission);
    if (!followed.ok) throw new FetchError(`${request.what}: redirected, and refused: ${followed.reason}`);
    if (followed.origin !== admission.origin) headers = withoutCredentials(headers);
    url = next;
    admission = followed;
  }
}

async function fetchOnce(
  sources: ChartSources,
  request: FetchRequest,
  resolver: Resolver,
): Promise<FetchAnswer> {
  const { url, admission, what } = request;
  if (url.protocol !== "http:" && url.protocol !== "https:")
    throw new FetchError(`${what}: ${url.protocol} is not fetched`);
  const literal = url.hostname.replace(/^\[|\]$/g, "");
  if (isIP(literal) !== 0) {
    const refused = sources.refuseAddress(literal, admission);
    if (refused) throw new FetchError(`${what}: refused: ${refused}`);
  }
  const proxy = proxyFor(url, request.proxies);
  // Through a proxy, the address is resolved and checked here and the proxy is asked for it, so the
  // proxy cannot resolve the name to another one.
  const address =
    proxy && isIP(literal) === 0 ? await checkedAddress(sources, admission, resolver, url, what) : literal;
  return exchange(request, (fail) => {
    const headers = { "user-agent": "gitfleet", ...request.headers };
    if (!proxy)
      return (url.protocol === "https:" ? httpsRequest : httpRequest)(url, {
        method: "GET",
        headers,
        lookup: checkedLookup(sources, admission, resolver, (reason) => fail(`refused: ${reason}`)),
        agent: false,
      });
    return proxied(url, proxy, address, headers, fail);
  });
}

// One exchange, bounded: the whole of it within the timeout, the body within its size.
function exchange(
  request: FetchRequest,
  start: (fail: (message: string) => void) => ClientRequest,
): Promise<FetchAnswer> {
  const { url, admission, what } = request;
  const timeoutMs = request.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  return new Promise((resolve, reject) => {
    let settled = false;
    let outgoing: ClientRequest | undefined;
    const fail = (message: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      outgoing?.destroy();
      reject(new FetchError(`${what}: ${message}`));
    };
    const timer = setTimeout(() => fail(`no complete answer within ${timeoutMs} ms`), timeoutMs);
    outgoing = start(fail);
    outgoing.on("error", (error: NodeJS.ErrnoException) =>
      fail(error instanceof FetchError ? error.message : `the connection failed (${error.code ?? "error"})`),
    );
    outgoing.on("response", (response: IncomingMessage) => {
      readBody(response, request.maxBytes).then(
        (body) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          resolve({ status: response.statusCode ?? 0, headers: headersOf(response), body, url, admission });
        },
        (error: Error) => fail(error.message),
      );
    });
    outgoing.end();
  });
}

// A request through the operator's proxy to the checked address: an https URL through a CONNECT
// tunnel (TLS to the host's name inside it), an http URL by its absolute form.
function proxied(
  url: URL,
  proxy: URL,
  address: string,
  headers: Record<string, string>,
  fail: (message: string) => void,
): ClientRequest {
  const authorization = proxy.username
    ? {
        "proxy-authorization": `Basic ${Buffer.from(`${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`).toString("base64")}`,
      }
    : {};
  const port = url.port || (url.protocol === "https:" ? "443" : "80");
  const target = `${isIP(address) === 6 ? `[${address}]` : address}:${port}`;
  const via = { host: proxy.hostname, port: Number(proxy.port || 80), agent: false as const };
  if (url.protocol === "http:")
    return httpRequest({
      ...via,
      method: "GET",
      path: `http://${target}${url.pathname}${url.search}`,
      headers: { ...headers, host: url.host, ...authorization },
    });
  const servername = url.hostname.replace(/^\[|\]$/g, "");
  // Node takes a connection made later: the tunnel first, then TLS to the host's name inside it.
  const tunnelled = (_options: unknown, oncreate: (error: Error | null, socket?: Socket) => void) => {
    const tunnel = httpRequest({
      ...via,
      method: "CONNECT",
      path: target,
      headers: { host: target, ...authorization },
    });
    tunnel.on("connect", (response: IncomingMessage, raw: Socket) => {
      if (response.statusCode === 200) return oncreate(null, tlsConnect({ socket: raw, servername }));
      raw.destroy();
      fail(`the proxy would not connect (${response.statusCode})`);
    });
    tunnel.on("error", (error: NodeJS.ErrnoException) => fail(`the proxy failed (${error.code ?? "error"})`));
    tunnel.end();
    return undefined;
  };
  // No agent: Node uses createConnection only for a request without one.
  return httpsRequest(url, {
    method: "GET",
    headers,
    // The returned socket is undefined on purpose: Node waits for `oncreate`.
    createConnection: tunnelled as unknown as NonNullable<RequestOptions["createConnection"]>,
  });
}

// The address a name resolves to, every one checked: the first, or the refusal.
function checkedAddress(
  sources: ChartSources,
  admission: Extract<Admission, { ok: true }>,
  resolver: Resolver,
  url: URL,
  what: string,
): Promise<string> {
  return new Promise((resolve, reject) => {
    resolver(url.hostname, { all: true }, (error, addresses) => {
      if (error)
        return reject(new FetchError(`${what}: its name does not resolve (${error.code ?? "error"})`));
      const refused = addresses.map((a) => sources.refuseAddress(a.address, admission)).find(Boolean);
      const first = addresses[0];
      if (refused || !first)
        return reject(
          new FetchError(`${what}: refused: ${refused ?? `${admission.origin} resolves to no address`}`),
        );
      resolve(first.address);
    });
  });
}

// A DNS lookup that answers only with addresses the policy admits: the connection goes to what was
// checked. Node asks for all addresses (Happy Eyeballs) or one; both are answered.
function checkedLookup(
  sources: ChartSources,
  admission: Extract<Admission, { ok: true }>,
  resolver: Resolver,
  refuse: (reason: string) => void,
) {
  return (
    hostname: string,
    options: { all?: boolean | undefined; family?: number | string | undefined },
    callback: (
      error: NodeJS.ErrnoException | null,
      address: string | LookupAddress[],
      family?: number,
    ) => void,
  ) => {
    resolver(hostname, { all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      const refused = addresses.map((a) => sources.refuseAddress(a.address, admission)).find(Boolean);
      if (refused || addresses.length === 0) {
        refuse(refused ?? `${admission.origin} resolves to no address`);
        return callback(Object.assign(new Error("refused"), { code: "EREFUSED" }), []);
      }
      const usable = ofFamily(addresses, options.family);
      if (options.all) return callback(null, usable);
      const first = usable[0] ?? (addresses[0] as LookupAddress);
      return callback(null, first.address, first.family);
    });
  };
}

// The addresses of the family asked for (4 or 6), or all of them.
function ofFamily(addresses: readonly LookupAddress[], family: number | string | undefined): LookupAddress[] {
  return family === 6 || family === 4 ? addresses.filter((a) => a.family === family) : [...addresses];
}

function readBody(response: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const declared = Number(response.headers["content-length"]);
  if (Number.isFinite(declared) && declared > maxBytes) {
    response.destroy();
    return Promise.reject(new Error(`it is larger than ${maxBytes} bytes (refused before reading)`));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    response.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        reject(new Error(`it is larger than ${maxBytes} bytes`));
        response.destroy();
        return;
      }
      chunks.push(chunk);
    });
    response.on("end", () => resolve(Buffer.concat(chunks)));
    response.on("error", () => reject(new Error("the answer broke off")));
    response.on("aborted", () => reject(new Error("the answer broke off")));
  });
}

function headersOf(response: IncomingMessage): Record<string, string | undefined> {
  const pick = (name: string) => {
    const value = response.headers[name];
    return typeof value === "string" ? value.slice(0, 4096) : undefined;
  };
  return {
    location: pick("location"),
    "content-type": pick("content-type"),
    "www-authenticate": pick("www-authenticate"),
    "docker-content-digest": pick("docker-content-digest"),
  };
}

function withoutCredentials(headers: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(headers))
    if (key.toLowerCase() !== "authorization") out[key] = value;
  return out;
}
