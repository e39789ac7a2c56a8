import type { KubeConfig } from "@kubernetes/client-node";
import fetch, { type RequestInit } from "node-fetch";
import { asList, asMap, type JsonMap } from "../apimachinery/json.js";
import { parseGitVersion } from "../apimachinery/kube-version.js";
import { MAX_MESSAGE, oneLine } from "../model/one-line.js";
import { FIELD_MANAGER } from "../sync/field-manager.js";
import type { MemberCredential } from "../sync/sync-result.js";
import { credentialOf } from "./member-credential.js";

/** A Kubernetes API error: the Status a member answered with, or a failure to reach it (code 0). */
export class MemberApiError extends Error {
  override readonly name = "MemberApiError";
  constructor(
    readonly cluster: string,
    readonly code: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }

  /** Worth another try: unreachable, throttled, or a server error. */
  get transient(): boolean {
    return this.code === 0 || this.code === 429 || this.code >= 500;
  }
}

/** Where a kind is served. */
export interface ServedResource {
  readonly plural: string;
  readonly namespaced: boolean;
}

/** An object's address in a member. */
export interface ObjectAddress {
  readonly apiVersion: string;
  readonly kind: string;
  readonly namespace: string | undefined;
  readonly name: string;
}

export interface MemberClientOptions {
  /** Per request, milliseconds (default 10 s). */
  readonly timeoutMs?: number;
  /** Extra tries for a transient failure, with exponential backoff and jitter (default 3). */
  readonly retries?: number;
  /** First backoff delay in milliseconds (default 200). */
  readonly backoffMs?: number;
  /** The field manager of server-side apply (default "gitfleet"). */
  readonly fieldManager?: string;
  /** The largest answer read, in bytes, for a list (default 64 MiB) and for anything else (default 8 MiB). */
  readonly maxListBytes?: number;
  readonly maxResponseBytes?: number;
  /** Checked before every request that writes (any method but GET), with the member's name: throws when this process may not write to it (leader election's and shards' fence). */
  readonly beforeWrite?: (cluster: string) => void;
  /** The User-Agent every request carries (default: the client's own); a replica names itself in it. */
  readonly userAgent?: string;
}

/** Default bounds on what a member may send: a list of every pod of a large cluster fits; nothing endless does. */
export const MAX_LIST_BYTES = 64 * 2 ** 20;
export const MAX_RESPONSE_BYTES = 8 * 2 ** 20;

/** The reason of an error that was the controller's own, not the member's (no file descriptors left). */
const LOCAL_FAILURE = "ControllerResources";

// Authentication material is read again after this long (exec plugins and tokens expire).
const AUTH_REFRESH_MS = 60_000;

/**
 * One member cluster's API, through @kubernetes/client-node's KubeConfig (server, TLS, credentials,
 * exec plugins) and raw JSON requests: the typed serializer would drop fields of custom resources and
 * fields newer than the client's models, and drift detection needs the server's JSON as it is.
 * Discovery maps a kind to its resource; transient failures are retried with backoff.
 */
export class MemberClient {
  private readonly discovery = new Map<string, Promise<Map<string, ServedResource>>>();
  private auth: { init: Promise<RequestInit>; at: number } | undefined;
  private impersonated: string | undefined;

  constructor(
    readonly cluster: string,
    private readonly config: KubeConfig,
    private readonly options: MemberClientOptions = {},
  ) {}

  /**
   * This client acting as another user of the member (the Impersonate-User header on every request):
   * a team's ServiceAccount, so the member's RBAC decides what the team's objects may be. Shares this
   * client's credentials, discovery and bounds; the credentials' user must be allowed to impersonate.
   */
  as(user: string): MemberClient {
    const view = Object.create(this) as MemberClient;
    view.impersonated = user;
    return view;
  }

  /** When the credential this client asks with stops working, if it says (see member-credential.ts). */
  credential(now: number): MemberCredential | undefined {
    return credentialOf(this.config, now);
  }

  /** The API server's URL. */
  get server(): string {
    return this.config.getCurrentCluster()?.server.replace(/\/+$/, "") ?? "";
  }

  /**
   * Server-side apply: creates or updates the fields this manager (this client's, unless another is
   * named) applies; `force` takes fields other managers own.
   */
  async apply(object: JsonMap, force: boolean, fieldManager?: string): Promise<JsonMap> {
    const path = await this.objectPath(addressOf(object));
    const query = this.managed(fieldManager);
    if (force) query.set("force", "true");
    return asMap(
      await this.request("PATCH", `${path}?${query.toString()}`, object, "application/apply-patch+yaml"),
    );
  }

  /**
   * Creates the object (a POST, as kubectl create does): fails with 409 AlreadyExists when one with
   * its name is there, so nothing another party made in between is taken over.
   */
  async create(object: JsonMap, fieldManager?: string): Promise<JsonMap> {
    const path = await this.objectPath(addressOf(object));
    const query = this.managed(fieldManager);
    const collection = path.slice(0, path.lastIndexOf("/"));
    return asMap(await this.request("POST", `${collection}?${query.toString()}`, object));
  }

  /** A JSON merge patch (an Update, as kubectl patch is) by a field manager, this client's by default. */
  async mergePatch(address: ObjectAddress, patch: JsonMap, fieldManager?: string): Promise<JsonMap> {
    const query = this.managed(fieldManager);
    return asMap(
      await this.request(
        "PATCH",
        `${await this.objectPath(address)}?${query.toString()}`,
        patch,
        "application/merge-patch+json",
      ),
    );
  }

  // The query naming the field manager of a write: the one given, else this client's, else gitfleet.
  private managed(fieldManager: string | undefined): URLSearchParams {
    return new URLSearchParams({ fieldManager: fieldManager ?? this.options.fieldManager ?? FIELD_MANAGER });
  }

  /** The live object, or undefined when it (or its kind) does not exist. */
  async get(address: ObjectAddress): Promise<JsonMap | undefined> {
    try {
      return asMap(await this.request("GET", await this.objectPath(address)));
    } catch (error) {
      if (error instanceof MemberApiError && error.code === 404) return undefined;
      throw error;
    }
  }

  /** Every object of a kind in all namespaces matching a label (and field) selector; undefined when the kind is not served. */
  async list(
    apiVersion: string,
    kind: string,
    labelSelector: string,
    fieldSelector?: string,
  ): Promise<JsonMap[] | undefined> {
    const resource = await this.resource(apiVersion, kind);
    if (!resource) return undefined;
    const query = new URLSearchParams({ labelSelector, ...(fieldSelector ? { fieldSelector } : {}) });
    const list = asMap(
      await this.request("GET", `${prefix(apiVersion)}/${resource.plural}?${query.toString()}`),
    );
    return asList(list.items).map((item) => ({ apiVersion, kind, ...asMap(item) }));
  }

  /**
   * Every object of a kind in all namespaces (or one), a page of at most `limit` at a time (the API's
   * limit/continue chunking, so a 150,000-pod member is never one answer); undefined when the kind is
   * not served. A continue token that expired mid-way (410) fails the listing: it cannot be consistent.
   */
  async pages(
    apiVersion: string,
    kind: string,
    options: {
      readonly fieldSelector?: string;
      readonly labelSelector?: string;
      /** Only this namespace's objects (for a namespaced kind). */
      readonly namespace?: string;
      readonly limit?: number;
    },
    each: (items: JsonMap[]) => void,
  ): Promise<boolean> {
    const resource = await this.resource(apiVersion, kind);
    if (!resource) return false;
    const scope =
      options.namespace !== undefined && resource.namespaced
        ? `/namespaces/${encodeURIComponent(options.namespace)}`
        : "";
    let token = "";
    do {
      const query = new URLSearchParams({ limit: String(options.limit ?? 500) });
      if (options.fieldSelector) query.set("fieldSelector", options.fieldSelector);
      if (options.labelSelector) query.set("labelSelector", options.labelSelector);
      if (token) query.set("continue", token);
      const list = asMap(
        await this.request("GET", `${prefix(apiVersion)}${scope}/${resource.plural}?${query.toString()}`),
      );
      each(asList(list.items).map((item) => asMap(item)));
      const next = asMap(list.metadata).continue;
      token = typeof next === "string" ? next : "";
    } while (token !== "");
    return true;
  }

  /**
   * Deletes the object only if it is still the one with this uid (a look-alike created since is left
   * alone): "deleted", "gone" when it no longer exists, "replaced" when the uid differs.
   */
  async delete(address: ObjectAddress, uid: string): Promise<"deleted" | "gone" | "replaced"> {
    try {
      await this.request("DELETE", await this.objectPath(address), {
        apiVersion: "v1",
        kind: "DeleteOptions",
        propagationPolicy: "Background",
        ...(uid ? { preconditions: { uid } } : {}),
      });
      return "deleted";
    } catch (error) {
      if (error instanceof MemberApiError && error.code === 404) return "gone";
      if (error instanceof MemberApiError && error.code === 409 && /precondition/i.test(error.message))
        return "replaced";
      throw error;
    }
  }

  /**
   * One probe of /readyz, not retried: ready (200), unready (any other answer), unreachable (no
   * answer in time), or skipped when the controller itself could not ask (out of file descriptors):
   * a controller short of resources must not report its members down.
   */
  async probe(): Promise<{ outcome: "ready" | "unready" | "unreachable" | "skipped"; error?: string }> {
    try {
      await this.request("GET", "/readyz", undefined, undefined, 0);
      return { outcome: "ready" };
    } catch (error) {
      if (error instanceof MemberApiError && error.reason === LOCAL_FAILURE)
        return { outcome: "skipped", error: error.message };
      const unreachable = error instanceof MemberApiError && error.code === 0;
      return { outcome: unreachable ? "unreachable" : "unready", error: (error as Error).message };
    }
  }

  /** Where a kind is served, from discovery (cached; refreshed once when the kind is missing, as after a CRD). */
  async resource(apiVersion: string, kind: string): Promise<ServedResource | undefined> {
    const found = (await this.groupVersion(apiVersion)).get(kind);
    if (found) return found;
    this.discovery.delete(apiVersion);
    return (await this.groupVersion(apiVersion)).get(kind);
  }

  /** A request by path, for what the typed calls do not cover (subresources such as pods/status). */
  raw(method: string, path: string, body?: unknown, contentType?: string): Promise<unknown> {
    return this.request(method, path, body, contentType);
  }

  /**
   * The Kubernetes version the member's /version reports (gitVersion, such as "v1.34.1"), or undefined
   * when it answers something that is not a version. An answer is untrusted: one bounded line.
   */
  async version(): Promise<string | undefined> {
    const answer = asMap(await this.request("GET", "/version"));
    const text = typeof answer.gitVersion === "string" ? oneLine(answer.gitVersion, 64) : "";
    return parseGitVersion(text) ? text : undefined;
  }

  /**
   * Every group-version the member serves and its kinds (subresources left out), read afresh from
   * discovery: /api, /apis, then each group-version. A group-version that fails to answer (an
   * aggregated API that is down) is left out, as kubectl leaves it out.
   */
  async servedApis(): Promise<Record<string, string[]>> {
    this.discovery.clear();
    const core = asList(asMap(await this.request("GET", "/api")).versions).map(String);
    const groups = asList(asMap(await this.request("GET", "/apis")).groups).flatMap((group) =>
      asList(asMap(group).versions).map((v) => String(asMap(v).groupVersion ?? "")),
    );
    const apis: Record<string, string[]> = {};
    for (const groupVersion of [...core, ...groups].filter(Boolean).slice(0, 1000)) {
      const kinds = await this.groupVersion(groupVersion).catch(() => undefined);
      if (kinds && kinds.size > 0) apis[groupVersion] = [...kinds.keys()].sort();
    }
    return apis;
  }

  /** Forgets what discovery said, e.g. after CRDs were applied. */
  forgetDiscovery(): void {
    this.discovery.clear();
  }

  private async objectPath(address: ObjectAddress): Promise<string> {
    const resource = await this.resource(address.apiVersion, address.kind);
    if (!resource)
      throw new MemberApiError(
        this.cluster,
        404,
        "NotFound",
        `the server does not serve ${address.kind} in ${address.apiVersion} (is its CustomResourceDefinition installed?)`,
      );
    const namespace = resource.namespaced ? `/namespaces/${address.namespace ?? "default"}` : "";
    return `${prefix(address.apiVersion)}${namespace}/${resource.plural}/${encodeURIComponent(address.name)}`;
  }

  private groupVersion(apiVersion: string): Promise<Map<string, ServedResource>> {
    let cached = this.discovery.get(apiVersion);
    if (!cached) {
      cached = this.request("GET", prefix(apiVersion))
        .then((list) => {
          const kinds = new Map<string, ServedResource>();
          for (const item of asList(asMap(list).resources).map((r) => asMap(r))) {
            const name = String(item.name ?? "");
            if (name.includes("/")) continue;
            kinds.set(String(item.kind), { plural: name, namespaced: item.namespaced === true });
          }
          return kinds;
        })
        .catch((error: unknown) => {
          this.discovery.delete(apiVersion);
          if (error instanceof MemberApiError && error.code === 404) return new Map<string, ServedResource>();
          throw error;
        });
      this.discovery.set(apiVersion, cached);
    }
    return cached;
  }

  private async request(
    method: string,
    path: string,
    body?: unknown,
    contentType = "application/json",
    retries = this.options.retries ?? 3,
  ): Promise<unknown> {
    for (let attempt = 0; ; attempt++) {
      if (method !== "GET") this.options.beforeWrite?.(this.cluster);
      try {
        return await this.once(method, path, body, contentType);
      } catch (error) {
        if (!(error instanceof MemberApiError) || !error.transient || attempt >= retries) throw error;
        const base = (this.options.backoffMs ?? 200) * 2 ** attempt;
        await new Promise((resolve) => setTimeout(resolve, base * (0.5 + Math.random())));
      }
    }
  }

  // One request, bounded: the whole exchange — headers and body — within the timeout, at most the
  // size cap read (a list may be larger than one object), redirects refused rather than followed (the
  // credentials would go along), and on any of these the socket is destroyed, not left to drain.
  private async once(method: string, path: string, body: unknown, contentType: string): Promise<unknown> {
    const init = await this.requestInit();
    const headers = new Map<string, string>([["accept", "application/json"]]);
    // client-node gives the WHATWG Headers of its credentials (Authorization, exec plugin tokens).
    for (const [key, value] of new Headers(init.headers as ConstructorParameters<typeof Headers>[0]))
      headers.set(key, value);
    if (body !== undefined) headers.set("content-type", contentType);
    if (this.options.userAgent) headers.set("user-agent", this.options.userAgent);
    if (this.impersonated) headers.set("impersonate-user", this.impersonated);
    const timeoutMs = this.options.timeoutMs ?? 10_000;
    const maxBytes = isList(method, path)
      ? (this.options.maxListBytes ?? MAX_LIST_BYTES)
      : (this.options.maxResponseBytes ?? MAX_RESPONSE_BYTES);
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), timeoutMs);
    try {
      let response: Awaited<ReturnType<typeof fetch>>;
      try {
        response = await fetch(`${this.server}${path}`, {
          ...init,
          method,
          headers: Object.fromEntries(headers),
          redirect: "manual",
          signal: abort.signal,
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        } as RequestInit);
      } catch (error) {
        throw this.unreachable(error, abort.signal.aborted, timeoutMs);
      }
      const text = await readBounded(response.body, maxBytes, abort).catch((error: unknown) => {
        throw this.unreachable(error, abort.signal.aborted && !(error instanceof TooLarge), timeoutMs);
      });
      return this.answer(response, text);
    } finally {
      clearTimeout(timer);
    }
  }

  // The parsed answer of a 2xx; any other status as a MemberApiError with the member's words on one line.
  private answer(response: { status: number; ok: boolean; statusText: string }, text: string): unknown {
    if (response.status >= 300 && response.status < 400)
      throw new MemberApiError(
        this.cluster,
        response.status,
        "Redirect",
        `${this.cluster} answered with a redirect (${response.status}); gitfleet does not follow redirects from members`,
      );
    if (response.ok) return text === "" || !text.startsWith("{") ? text : JSON.parse(text);
    let status: JsonMap = {};
    try {
      status = asMap(JSON.parse(text));
    } catch {
      // Not a Status object: the text is the message.
    }
    throw new MemberApiError(
      this.cluster,
      response.status,
      oneLine(String(status.reason ?? response.statusText), 80),
      oneLine(String(status.message ?? (text || response.statusText)), MAX_MESSAGE),
    );
  }

  // A member that did not answer, and how: never the server's address or a library's message.
  private unreachable(error: unknown, timedOut: boolean, timeoutMs: number): MemberApiError {
    const code = (error as { code?: unknown }).code;
    if (code === "EMFILE" || code === "ENFILE")
      return new MemberApiError(
        this.cluster,
        0,
        LOCAL_FAILURE,
        `${this.cluster} was not asked: the controller is out of file descriptors (${code})`,
      );
    const how =
      error instanceof TooLarge
        ? error.message
        : timedOut
          ? `no complete answer within ${timeoutMs} ms`
          : networkFailure(error);
    return new MemberApiError(this.cluster, 0, "Unreachable", `${this.cluster} did not answer: ${how}`);
  }

  // The agent, TLS material and credential headers client-node derives from the kubeconfig context,
  // with connections kept alive (client-node's agents close each one after a request).
  private requestInit(): Promise<RequestInit> {
    const now = Date.now();
    if (!this.auth || now - this.auth.at > AUTH_REFRESH_MS)
      this.auth = {
        init: (this.config.applyToFetchOptions({}) as Promise<RequestInit>).then((init) => {
          const agent = init.agent as { keepAlive?: boolean; options?: { keepAlive?: boolean } } | undefined;
          if (agent && typeof agent === "object") {
            agent.keepAlive = true;
            if (agent.options) agent.options.keepAlive = true;
          }
          return init;
        }),
        at: now,
      };
    return this.auth.init;
  }
}

/** "/apis/apps/v1", or "/api/v1" for the core group. */
function prefix(apiVersion: string): string {
  return apiVersion.includes("/") ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
}

class TooLarge extends Error {}

// Reads a response body up to maxBytes; past it, or when the request is aborted, the stream and its
// socket are destroyed.
function readBounded(
  body: NodeJS.ReadableStream | null,
  maxBytes: number,
  abort: AbortController,
): Promise<string> {
  if (!body) return Promise.resolve("");
  const stream = body as NodeJS.ReadableStream & { destroy(error?: Error): void };
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let failed = false;
    // The first failure is the answer; aborting makes the stream report another, which is ignored.
    const fail = (error: Error) => {
      if (failed) return;
      failed = true;
      reject(error);
      abort.abort();
      stream.destroy();
    };
    stream.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes)
        fail(new TooLarge(`the answer is larger than ${Math.round(maxBytes / 2 ** 20)} MiB`));
      else chunks.push(chunk);
    });
    stream.on("error", (error: Error) => fail(error));
    stream.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
  });
}

// Lists (GETs of a collection) may be large; single objects, applies and discovery are not.
function isList(method: string, path: string): boolean {
  if (method !== "GET") return false;
  const query = path.indexOf("?");
  const parts = (query < 0 ? path : path.slice(0, query)).split("/").filter(Boolean);
  // /api/v1/pods, /api/v1/namespaces/x/pods, /apis/g/v/pods, /apis/g/v/namespaces/x/pods
  const offset = parts[0] === "api" ? 2 : 3;
  const rest = parts.slice(offset);
  return rest.length === 1 || (rest.length === 3 && rest[0] === "namespaces");
}

// A network failure by its kind, from the error's code: connection refused, reset, name not found, TLS.
function networkFailure(error: unknown): string {
  const code = String((error as { code?: unknown }).code ?? (error as { errno?: unknown }).errno ?? "");
  const kinds: Record<string, string> = {
    ECONNREFUSED: "connection refused",
    ECONNRESET: "connection reset",
    ETIMEDOUT: "connection timed out",
    EHOSTUNREACH: "host unreachable",
    ENETUNREACH: "network unreachable",
    ENOTFOUND: "server name not found",
    EAI_AGAIN: "server name not resolved",
    EPIPE: "connection closed",
  };
  if (Object.hasOwn(kinds, code)) return `${kinds[code]} (${code})`;
  if (/CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO_VERIFY/.test(code)) return `TLS failed (${code})`;
  return code ? `request failed (${oneLine(code, 40)})` : "request failed";
}

/** Where an object is addressed in a member: apiVersion, kind, namespace, name. */
export function addressOf(object: JsonMap): ObjectAddress {
  const metadata = asMap(object.metadata);
  return {
    apiVersion: String(object.apiVersion),
    kind: String(object.kind),
    namespace: typeof metadata.namespace === "string" ? metadata.namespace : undefined,
    name: String(metadata.name),
  };
}

/** What went wrong, on one bounded line: errors can quote what a member sent. */
export function message(error: unknown): string {
  return oneLine(error instanceof Error ? error.message : String(error));
}
