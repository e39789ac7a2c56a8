import { spawn } from "node:child_process";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** A loopback HTTP server in front of real Git's smart-HTTP CGI, `git http-backend`. */
export interface GitHttpServer {
  /** Base URL; a repository at <root>/fleet.git is <url>/fleet.git */
  readonly url: string;
  /** Requests served, as "METHOD path?query". */
  readonly requests: string[];
  close(): Promise<void>;
}

/**
 * Serves every repository under `root` with `git http-backend`, fetch and push enabled. With `token`,
 * requests need HTTP basic auth whose password is the token (as GitHub, GitLab and Gitea accept); a
 * function gives the token accepted now (a forge that rotated it).
 */
export async function startGitHttpServer(
  root: string,
  token?: string | (() => string),
): Promise<GitHttpServer> {
  const requests: string[] = [];
  const server: Server = createServer((request, response) => {
    requests.push(`${request.method} ${request.url}`);
    if (token && !authorized(request, typeof token === "string" ? token : token())) {
      response.writeHead(401, { "www-authenticate": 'Basic realm="fleet"' }).end("unauthorized\n");
      return;
    }
    serveCgi(root, request, response);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

function authorized(request: IncomingMessage, token: string): boolean {
  const header = request.headers.authorization ?? "";
  if (!header.startsWith("Basic ")) return false;
  const [, password] = Buffer.from(header.slice(6), "base64").toString().split(":");
  return password === token;
}

function serveCgi(root: string, request: IncomingMessage, response: ServerResponse): void {
  const url = new URL(request.url ?? "/", "http://localhost");
  const child = spawn("git", ["http-backend"], {
    env: {
      PATH: process.env.PATH,
      GIT_PROJECT_ROOT: root,
      GIT_HTTP_EXPORT_ALL: "1",
      REMOTE_USER: "fleet-writer",
      REMOTE_ADDR: "127.0.0.1",
      REQUEST_METHOD: request.method ?? "GET",
      PATH_INFO: decodeURIComponent(url.pathname),
      QUERY_STRING: url.search.slice(1),
      CONTENT_TYPE: request.headers["content-type"] ?? "",
      CONTENT_LENGTH: request.headers["content-length"] ?? "",
      HTTP_CONTENT_ENCODING: request.headers["content-encoding"] ?? "",
      GIT_HTTP_MAX_REQUEST_BUFFER: "100M",
      // The protocol the client asks for (Git-Protocol: version=2), as web servers in front of git pass it.
      GIT_PROTOCOL: String(request.headers["git-protocol"] ?? ""),
    },
  });
  request.pipe(child.stdin);
  const chunks: Buffer[] = [];
  child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk));
  child.stderr.on("data", () => undefined);
  child.on("close", () => {
    const output = Buffer.concat(chunks);
    const split = output.indexOf("\r\n\r\n");
    const headerEnd = split >= 0 ? split : output.indexOf("\n\n");
    const separator = split >= 0 ? 4 : 2;
    const headers: Record<string, string> = {};
    let status = 200;
    for (const line of output.subarray(0, headerEnd).toString().split(/\r?\n/)) {
      const colon = line.indexOf(":");
      if (colon < 0) continue;
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim();
      if (name === "status") status = Number.parseInt(value, 10);
      else headers[name] = value;
    }
    response.writeHead(status, headers).end(output.subarray(headerEnd + separator));
  });
}
