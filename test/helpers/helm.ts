import { execFile, execFileSync } from "node:child_process";
import { createHash, randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const run = promisify(execFile);

const root = fileURLToPath(new URL("../..", import.meta.url));

/** The pinned helm, built from Go modules by scripts/build-helm.sh (cached after the first build). */
export function helmBinary(): string {
  const out = execFileSync("bash", [join(root, "scripts/build-helm.sh")], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
    timeout: 20 * 60_000,
  });
  return out.trim().split("\n").pop() as string;
}

/**
 * Runs helm with a private home so nothing of the user's configuration is read. Asynchronous, so that
 * loopback servers in this process can answer it.
 */
export async function helm(binary: string, home: string, args: readonly string[]): Promise<string> {
  const { stdout } = await run(binary, args, {
    encoding: "utf8",
    maxBuffer: 64 * 2 ** 20,
    env: {
      PATH: process.env.PATH,
      HOME: home,
      HELM_CACHE_HOME: join(home, "cache"),
      HELM_CONFIG_HOME: join(home, "config"),
      HELM_DATA_HOME: join(home, "data"),
      KUBECONFIG: join(home, "none"),
    },
  });
  return stdout;
}

/** A loopback server of a directory's files (a Helm chart repository: index.yaml and archives). */
export async function serveDirectory(
  dir: string,
): Promise<{ url: string; requests: string[]; close(): Promise<void> }> {
  const requests: string[] = [];
  const server = createServer((request, response) => {
    const path = decodeURIComponent(new URL(request.url ?? "/", "http://x").pathname);
    requests.push(path);
    if (path.includes("..")) return void response.writeHead(400).end();
    try {
      const body = readFileSync(join(dir, path));
      response.writeHead(200, { "content-length": body.length }).end(body);
    } catch {
      response.writeHead(404).end();
    }
  });
  return listen(server, requests);
}

interface Registry {
  readonly blobs: Map<string, Buffer>;
  readonly manifests: Map<string, { body: Buffer; type: string }>;
  readonly uploads: Map<string, Buffer>;
}

interface Call {
  readonly method: string;
  readonly url: URL;
  readonly name: string;
  readonly rest: string;
  readonly body: Buffer;
  readonly type: string;
}

const ociDigest = (body: Buffer) => `sha256:${createHash("sha256").update(body).digest("hex")}`;

/**
 * A loopback OCI registry as the distribution spec describes it: blobs uploaded by POST then PUT (or
 * PATCH chunks), manifests by tag or digest, tag lists. Enough for `helm push` and `helm pull`.
 */
export async function serveOciRegistry(): Promise<{
  url: string;
  requests: string[];
  close(): Promise<void>;
}> {
  const requests: string[] = [];
  const registry: Registry = { blobs: new Map(), manifests: new Map(), uploads: new Map() };
  const handlers: Record<string, (call: Call, response: ServerResponse) => void> = {
    "blobs/uploads": (call, response) => upload(registry, call, response),
    blobs: (call, response) => blob(registry, call, response),
    tags: (call, response) => tags(registry, call, response),
    manifests: (call, response) => manifest(registry, call, response),
  };
  const server = createServer((request, response) => {
    readBody(request)
      .then((body) => {
        const url = new URL(request.url ?? "/", "http://x");
        const method = request.method ?? "GET";
        requests.push(`${method} ${url.pathname}`);
        if (url.pathname === "/v2/" || url.pathname === "/v2") return void response.writeHead(200).end("{}");
        const match = /^\/v2\/(.+)\/(blobs\/uploads|blobs|manifests|tags)\/?(.*)$/.exec(url.pathname);
        const handler = match ? handlers[match[2] as string] : undefined;
        if (!match || !handler) return void response.writeHead(404).end();
        const type = String(request.headers["content-type"] ?? "application/vnd.oci.image.manifest.v1+json");
        handler({ method, url, name: match[1] as string, rest: match[3] as string, body, type }, response);
      })
      .catch(() => response.writeHead(500).end());
  });
  return listen(server, requests);
}

function upload(registry: Registry, call: Call, response: ServerResponse): void {
  const { method, name, rest, body, url } = call;
  if (method === "POST") {
    const id = randomUUID();
    registry.uploads.set(id, Buffer.alloc(0));
    const location = `/v2/${name}/blobs/uploads/${id}`;
    return void response.writeHead(202, { location, "docker-upload-uuid": id, "content-length": 0 }).end();
  }
  const started = registry.uploads.get(rest);
  if (!started) return void response.writeHead(404).end();
  const data = Buffer.concat([started, body]);
  if (method === "PATCH") {
    registry.uploads.set(rest, data);
    const location = `/v2/${name}/blobs/uploads/${rest}`;
    return void response
      .writeHead(202, { location, range: `0-${data.length - 1}`, "content-length": 0 })
      .end();
  }
  const want = url.searchParams.get("digest") ?? "";
  if (ociDigest(data) !== want) return void response.writeHead(400).end("digest mismatch");
  registry.uploads.delete(rest);
  registry.blobs.set(want, data);
  const location = `/v2/${name}/blobs/${want}`;
  response.writeHead(201, { location, "docker-content-digest": want, "content-length": 0 }).end();
}

function blob(registry: Registry, { method, rest }: Call, response: ServerResponse): void {
  const found = registry.blobs.get(rest);
  if (!found) return void response.writeHead(404).end();
  response.writeHead(200, { "content-length": found.length, "docker-content-digest": rest });
  response.end(method === "HEAD" ? undefined : found);
}

function tags(registry: Registry, { name }: Call, response: ServerResponse): void {
  const names = [...registry.manifests.keys()]
    .filter((key) => key.startsWith(`${name}:`) && !key.startsWith(`${name}:sha256:`))
    .map((key) => key.slice(name.length + 1));
  response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ name, tags: names }));
}

function manifest(
  registry: Registry,
  { method, name, rest, body, type }: Call,
  response: ServerResponse,
): void {
  if (method === "PUT") {
    const at = ociDigest(body);
    registry.manifests.set(`${name}:${rest}`, { body, type });
    registry.manifests.set(`${name}:${at}`, { body, type });
    const location = `/v2/${name}/manifests/${at}`;
    return void response.writeHead(201, { location, "docker-content-digest": at, "content-length": 0 }).end();
  }
  const found = registry.manifests.get(`${name}:${rest}`);
  if (!found)
    return void response
      .writeHead(404, { "content-type": "application/json" })
      .end('{"errors":[{"code":"MANIFEST_UNKNOWN"}]}');
  const headers = {
    "content-type": found.type,
    "content-length": found.body.length,
    "docker-content-digest": ociDigest(found.body),
  };
  response.writeHead(200, headers);
  response.end(method === "HEAD" ? undefined : found.body);
}

function readBody(request: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => resolve(Buffer.concat(chunks)));
    request.on("error", reject);
  });
}

async function listen(server: Server, requests: string[]) {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `127.0.0.1:${port}`,
    requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
