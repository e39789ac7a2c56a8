import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { parse } from "yaml";
import { asMap, isJsonMap, type JsonMap } from "../apimachinery/json.js";
import type { ApiResponse } from "./api/api-context.js";
import type { AdapterMetrics } from "./custom-metrics.js";
import { duplicateJsonFields, duplicateYamlFields } from "./duplicate-fields.js";
import { isPlainJson, parseAccept } from "./media-types.js";
import { MemberApi, type MemberOptions } from "./member-api.js";
import { type PodFault, podFaultFrom } from "./pod-faults.js";
import type { LoadRule } from "./pod-metrics.js";
import {
  decodeObject,
  encodeObject,
  encodeWatchFrame,
  hasMessageType,
  PROTOBUF_MEDIA_TYPE,
  ProtobufError,
} from "./protobuf/kube-protobuf.js";
import { badRequest, StatusError } from "./status-error.js";
import { World, type WorldOptions } from "./world.js";

class UnsupportedMediaType extends Error {}

const UNSUPPORTED_BODY =
  "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf";

/** A simulated member cluster listening on loopback. */
export interface SimulatedMember {
  readonly name: string;
  /** http://127.0.0.1:<port> */
  readonly url: string;
  readonly api: MemberApi;
  /** Faults to inject, for tests and demos. */
  readonly faults: Faults;
  close(): Promise<void>;
}

/** One request a member received, as its log records it. */
export interface MemberRequest {
  readonly method: string;
  readonly path: string;
  readonly userAgent: string;
}

/** What can go wrong with a member, on purpose. */
export interface Faults {
  /** Stops answering: the port closes and connections are refused, as when a cluster is down. */
  down(): Promise<void>;
  /** Answers again, on the same port. */
  up(): Promise<void>;
  /** Answers again after `ms` (unless the member is closed first). */
  upAfter(ms: number): void;
  /** Every answer waits this long (milliseconds). */
  delayMs: number;
  /** This fraction of requests (0 to 1) gets a 500, spread evenly. */
  errorFraction: number;
  /** Loses nodes (NotReady, tainted, pods evicted); returns their names. Needs a member started with a world. */
  loseNodes(count: number): string[];
  /** Brings lost nodes back. */
  restoreNodes(): void;
  /** Images no node can pull (pods using them stay in ImagePullBackOff); an empty list clears it. */
  unpullableImages(images: readonly string[]): void;
  /** The CPU/memory usage metrics.k8s.io reports for matching pods (and their custom metrics); an empty list goes back to idle. */
  load(rules: readonly LoadRule[]): void;
  /** The object and external metrics the member's metrics adapter serves (custom-metrics.ts). */
  adapterMetrics(metrics: AdapterMetrics): void;
  /** Failing readiness probes and crash loops in matching pods (sim/pod-faults.ts); an empty list clears them. */
  podFaults(faults: readonly PodFault[]): void;
}

/** The deepest a request body may nest objects and lists. */
const MAX_BODY_DEPTH = 1000;
const MAX_BODY_BYTES = 3 * 2 ** 20;

/**
 * Starts one simulated member: the Kubernetes API of MemberApi over HTTP on 127.0.0.1 (an ephemeral
 * port unless one is given), JSON in and out (YAML accepted for apply patches), so that
 * @kubernetes/client-node and kubectl talk to it exactly as to a real API server.
 */
export async function startMember(
  options: {
    readonly name: string;
    readonly port?: number;
    /** Nodes, pods and workload controllers inside the member; none unless given. */
    readonly world?: WorldOptions;
    /** Told of every request as it arrives (a request log: who wrote to the member). */
    readonly onRequest?: (request: MemberRequest) => void;
  } & MemberOptions,
): Promise<SimulatedMember> {
  const api = new MemberApi(options.name, options);
  const world = options.world ? new World(api, options.world) : undefined;
  world?.start();
  let failures = 0;
  let closed = false;
  const upTimers = new Set<NodeJS.Timeout>();
  const faults: Faults = {
    delayMs: 0,
    errorFraction: 0,
    down: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
    // A member closed meanwhile stays closed: a timed outage ending after close must not reopen it.
    up: () =>
      new Promise((resolve) => {
        if (closed) resolve();
        else server.listen(port, "127.0.0.1", () => resolve());
      }),
    upAfter: (ms) => {
      const timer = setTimeout(() => {
        upTimers.delete(timer);
        void faults.up();
      }, ms);
      upTimers.add(timer);
    },
    loseNodes: (count) => {
      if (!world) throw new Error(`member ${options.name} runs no nodes: start it with a world`);
      return world.loseNodes(count);
    },
    restoreNodes: () => world?.restoreNodes(),
    load: (rules) => api.setLoad(rules),
    adapterMetrics: (metrics) => {
      api.adapterMetrics = metrics;
    },
    unpullableImages: (images) => {
      if (!world) throw new Error(`member ${options.name} runs no pods: start it with a world`);
      world.setUnpullableImages(images);
    },
    podFaults: (faults) => {
      if (!world) throw new Error("pod faults need a member started with a world");
      world.setPodFaults(faults);
    },
  };
  const server: Server = createServer(async (request, response) => {
    options.onRequest?.({
      method: request.method ?? "GET",
      path: request.url ?? "/",
      userAgent: request.headers["user-agent"] ?? "",
    });
    if (request.url === FAULTS_PATH) {
      await controlFaults(faults, request, response).catch((error: unknown) =>
        respond(response, 400, badRequest(error instanceof Error ? error.message : String(error)).body()),
      );
      return;
    }
    if (faults.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, faults.delayMs));
    failures += faults.errorFraction;
    if (failures >= 1) {
      failures -= 1;
      respond(
        response,
        500,
        new StatusError(500, "InternalError", "an injected fault: the member failed this request").body(),
      );
      return;
    }
    serve(api, request, response).catch((error: unknown) => {
      // An answer cut off after its head is ended with the connection, never left open.
      if (response.headersSent) response.destroy();
      else
        respond(response, 500, {
          kind: "Status",
          apiVersion: "v1",
          status: "Failure",
          message: String(error),
          reason: "InternalError",
          code: 500,
        });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    name: options.name,
    url: `http://127.0.0.1:${port}`,
    api,
    faults,
    close: () =>
      new Promise((resolve) => {
        closed = true;
        for (const timer of upTimers) clearTimeout(timer);
        world?.stop();
        server.closeAllConnections();
        if (!server.listening) resolve();
        else server.close(() => resolve());
      }),
  };
}

/** Where a running member (under `gitfleet simulate` or the demo) takes fault injection over HTTP. */
export const FAULTS_PATH = "/_gitfleet/faults";

/**
 * POST /_gitfleet/faults with JSON `{ "delayMs", "errorFraction", "loseNodes", "restoreNodes", "unpullableImages", "load", "podFaults",
 * "downForSeconds" }` (any subset) changes a running member's faults — for demos, from outside the
 * process; GET shows them. Not part of the Kubernetes API: no client calls it by accident. Never
 * slowed down or failed itself, so faults can always be cleared.
 */
async function controlFaults(
  faults: Faults,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  if (request.method === "POST") {
    // A browser page elsewhere may not take members down: browsers send Origin (and Sec-Fetch-Site)
    // with every cross-site POST, even the "simple" ones CORS does not preflight; curl sends neither.
    const origin = request.headers.origin;
    const site = request.headers["sec-fetch-site"];
    const own = `http://${request.headers.host ?? ""}`;
    if (
      (origin !== undefined && origin !== own) ||
      (site !== undefined && site !== "same-origin" && site !== "none")
    ) {
      respond(
        response,
        403,
        new StatusError(403, "Forbidden", "faults may not be set from another site").body(),
      );
      return;
    }
    let body: Record<string, unknown>;
    try {
      body = JSON.parse((await readBody(request)).toString("utf8") || "{}") as Record<string, unknown>;
    } catch {
      respond(response, 400, badRequest("the faults body must be JSON").body());
      return;
    }
    const lost = setFaults(faults, body);
    if (typeof body.downForSeconds === "number" && body.downForSeconds > 0) {
      const seconds = body.downForSeconds;
      // Down once this answer is out; up again after the given time, unless the member closes first.
      response.on("finish", () => {
        void faults.down().then(() => faults.upAfter(seconds * 1000));
      });
      respond(response, 202, { down: true, forSeconds: seconds });
      return;
    }
    respond(response, 200, { delayMs: faults.delayMs, errorFraction: faults.errorFraction, lostNodes: lost });
    return;
  }
  respond(response, 200, { delayMs: faults.delayMs, errorFraction: faults.errorFraction });
}

// Applies the simple settings of a faults request; returns the nodes it lost.
function setFaults(faults: Faults, body: Record<string, unknown>): string[] {
  if (typeof body.delayMs === "number" && body.delayMs >= 0) faults.delayMs = body.delayMs;
  if (typeof body.errorFraction === "number" && body.errorFraction >= 0 && body.errorFraction <= 1)
    faults.errorFraction = body.errorFraction;
  if (body.restoreNodes === true) faults.restoreNodes();
  if (Array.isArray(body.unpullableImages)) faults.unpullableImages(body.unpullableImages.map(String));
  if (Array.isArray(body.load)) faults.load(body.load.map(loadRule));
  if (Array.isArray(body.podFaults)) faults.podFaults(body.podFaults.map(podFaultFrom));
  if (isJsonMap(body.adapterMetrics)) faults.adapterMetrics(adapterMetricsFrom(body.adapterMetrics));
  return typeof body.loseNodes === "number" ? faults.loseNodes(body.loseNodes) : [];
}

// {"objects": {"shop/ingresses.networking.k8s.io/main/rps": "120"}, "external": {"shop/queue": [{"value": "40"}]}}.
function adapterMetricsFrom(value: JsonMap): AdapterMetrics {
  const strings = (map: unknown) =>
    Object.fromEntries(Object.entries(asMap(map as JsonMap)).map(([k, v]) => [k, String(v)]));
  return {
    objects: strings(value.objects),
    external: Object.fromEntries(
      Object.entries(asMap(value.external)).map(([key, series]) => [
        key,
        (Array.isArray(series) ? series : []).map((s) => {
          const one = asMap(s as JsonMap);
          return {
            value: String(one.value),
            ...(isJsonMap(one.labels) ? { labels: strings(one.labels) } : {}),
          };
        }),
      ]),
    ),
  };
}

// {"namespace": "shop", "selector": {"app": "web"}, "cpu": "900m"} from a faults request.
function loadRule(value: unknown): LoadRule {
  const rule = (value ?? {}) as Record<string, unknown>;
  const selector = Object.fromEntries(
    Object.entries((rule.selector ?? {}) as Record<string, unknown>).map(([k, v]) => [k, String(v)]),
  );
  return {
    namespace: String(rule.namespace ?? "default"),
    selector,
    ...(typeof rule.cpu === "string" ? { cpu: rule.cpu } : {}),
    ...(typeof rule.memory === "string" ? { memory: rule.memory } : {}),
    ...(rule.custom && typeof rule.custom === "object"
      ? {
          custom: Object.fromEntries(
            Object.entries(rule.custom as Record<string, unknown>).map(([k, v]) => [k, String(v)]),
          ),
        }
      : {}),
  };
}

async function serve(api: MemberApi, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const url = new URL(request.url ?? "/", "http://localhost");
  if (url.pathname === "/readyz" || url.pathname === "/healthz" || url.pathname === "/livez") {
    response.writeHead(200, { "content-type": "text/plain; charset=utf-8" }).end("ok");
    return;
  }
  const contentType = request.headers["content-type"] ?? "";
  let body: unknown;
  let duplicateFields: readonly string[] = [];
  try {
    ({ body, duplicateFields } = decode(await readBody(request), contentType));
  } catch (error) {
    const status =
      error instanceof UnsupportedMediaType
        ? new StatusError(415, "UnsupportedMediaType", UNSUPPORTED_BODY)
        : badRequest((error as Error).message);
    respond(response, status.code, status.body(), request.headers.accept);
    return;
  }
  const address = `127.0.0.1:${(request.socket.localPort ?? 0).toString()}`;
  const result = api.handle(
    {
      method: request.method ?? "GET",
      path: url.pathname,
      query: url.searchParams,
      contentType,
      accept: request.headers.accept ?? "",
      body,
      duplicateFields,
      userAgent: request.headers["user-agent"] ?? "",
    },
    address,
  );
  warn(response, result.warnings);
  if (result.stream) {
    stream(response, result, request.headers.accept);
    return;
  }
  if (result.text !== undefined || result.textStream) {
    text(response, result);
    return;
  }
  respond(response, result.status, result.body, request.headers.accept);
}

// Each warning its own header line, as kube-apiserver sends them (kubectl prints each as "Warning: …").
function warn(response: ServerResponse, warnings: readonly string[] | undefined): void {
  if (warnings && warnings.length > 0)
    response.setHeader(
      "Warning",
      warnings.map((warning) => `299 - ${JSON.stringify(warning)}`),
    );
}

// A watch: newline-delimited JSON, or length-delimited protobuf frames when the client prefers them
// and the kind has a message.
function stream(response: ServerResponse, result: ApiResponse, accept: string | undefined): void {
  const protobuf = result.streamKind !== undefined && prefersProtobuf(accept, result.streamKind);
  response.writeHead(200, {
    "content-type": protobuf ? `${PROTOBUF_MEDIA_TYPE};stream=watch` : "application/json",
    "cache-control": "no-cache, private",
  });
  response.flushHeaders();
  const send = (event: JsonMap) => {
    const object = asMap(event.object);
    if (protobuf && hasMessageType(object))
      response.write(encodeWatchFrame({ type: String(event.type), object }));
    else if (!protobuf) response.write(`${JSON.stringify(event)}\n`);
  };
  const stop = result.stream?.(send, () => response.end()) ?? (() => undefined);
  response.on("close", stop);
}

// Plain text (a container's log), all at once or as it is written.
function text(response: ServerResponse, result: ApiResponse): void {
  response.writeHead(result.status, { "content-type": "text/plain", "cache-control": "no-cache, private" });
  if (!result.textStream) {
    response.end(result.text ?? "");
    return;
  }
  response.flushHeaders();
  const stop = result.textStream(
    (chunk) => response.write(chunk),
    () => response.end(),
  );
  response.on("close", stop);
}

// Whether the first media type of Accept that this body can take is protobuf.
function prefersProtobuf(accept: string | undefined, body: unknown): boolean {
  if (!isJsonMap(body) || !hasMessageType(body)) return false;
  for (const range of parseAccept(accept)) {
    if (range.type === PROTOBUF_MEDIA_TYPE) return true;
    if (isPlainJson(range)) return false;
  }
  return false;
}

// The body, and the fields it gives twice in one object (which protobuf cannot).
function decode(raw: Buffer, contentType: string): { body: unknown; duplicateFields: readonly string[] } {
  const decoded = decodeText(raw, contentType);
  if (deeperThan(decoded.body, MAX_BODY_DEPTH))
    throw new Error(`the request body is nested deeper than ${MAX_BODY_DEPTH} levels`);
  return decoded;
}

/**
 * Whether a value nests objects and lists deeper than `limit`, found with an explicit stack. The
 * member's handlers walk what they store and answer by recursion, so a body is bounded in depth as in
 * size: a real API server takes 10,000 levels, a simulated member 1,000 (far beyond any object's).
 */
function deeperThan(value: unknown, limit: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [next, depth] = stack.pop() as [unknown, number];
    if (typeof next !== "object" || next === null) continue;
    if (depth + 1 > limit) return true;
    for (const item of Array.isArray(next) ? next : Object.values(next)) stack.push([item, depth + 1]);
  }
  return false;
}

function decodeText(raw: Buffer, contentType: string): { body: unknown; duplicateFields: readonly string[] } {
  if (raw.length === 0) return { body: undefined, duplicateFields: [] };
  if (contentType.startsWith(PROTOBUF_MEDIA_TYPE)) {
    try {
      return { body: decodeObject(raw), duplicateFields: [] };
    } catch (error) {
      // Custom resources and kinds without a message: as kube-apiserver, 415 (clients then send JSON).
      if (error instanceof ProtobufError) throw new UnsupportedMediaType(error.message);
      throw error;
    }
  }
  if (contentType.startsWith("application/cbor")) throw new UnsupportedMediaType(contentType);
  const text = raw.toString("utf8");
  if (contentType.startsWith("application/apply-patch+yaml") || contentType.includes("yaml"))
    return { body: parse(text, { uniqueKeys: false }), duplicateFields: duplicateYamlFields(text) };
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new Error("the request body is not valid JSON");
  }
  return { body, duplicateFields: duplicateJsonFields(text) };
}

function readBody(request: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) reject(new Error("the request body is too large"));
      else chunks.push(chunk);
    });
    request.on("end", () => resolve(Buffer.concat(chunks)));
    request.on("error", reject);
  });
}

function respond(response: ServerResponse, status: number, body: unknown, accept?: string): void {
  if (prefersProtobuf(accept, body)) {
    response
      .writeHead(status, { "content-type": PROTOBUF_MEDIA_TYPE, "cache-control": "no-cache, private" })
      .end(encodeObject(body as JsonMap));
    return;
  }
  // Written whole before the head is sent: a body that cannot be written is still answered (a 500).
  const text = JSON.stringify(body);
  response
    .writeHead(status, { "content-type": "application/json", "cache-control": "no-cache, private" })
    .end(text);
}
