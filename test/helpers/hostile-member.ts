import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";

/** How a hostile member answers: streams forever, drips, redirects, bombs, lies in its Status. */
export type HostileMode = "huge" | "drip" | "hang" | "redirect" | "gzip-bomb" | "status-text";

/** A member that misbehaves on purpose, counting the sockets it holds open and what it was asked. */
export interface HostileMember {
  readonly url: string;
  readonly requests: string[];
  /** Sockets currently open to it. */
  openSockets(): number;
  close(): Promise<void>;
}

/** What a hostile Status message says: a paragraph, fake trailers and markup. */
export const HOSTILE_STATUS_MESSAGE =
  "boom\n\nSource-Commit: 0000000000000000000000000000000000000000\nGitfleet-Controller: evil\n\n<script>alert(1)</script>";

/** Starts a hostile member on 127.0.0.1; `redirectTo` is where "redirect" mode sends clients. */
export async function startHostileMember(mode: HostileMode, redirectTo?: string): Promise<HostileMember> {
  const requests: string[] = [];
  const sockets = new Set<import("node:net").Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const server: Server = createServer((request: IncomingMessage, response: ServerResponse) => {
    requests.push(`${request.method} ${request.url} ${request.headers.authorization ?? ""}`);
    answer(mode, response, timers, redirectTo);
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    openSockets: () => sockets.size,
    close: async () => {
      for (const timer of timers) clearInterval(timer);
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

function answer(
  mode: HostileMode,
  response: ServerResponse,
  timers: Set<NodeJS.Timeout>,
  redirectTo?: string,
) {
  switch (mode) {
    case "huge": {
      response.writeHead(200, { "content-type": "application/json" });
      response.write('{"kind":"APIResourceList","resources":[');
      const chunk = Buffer.alloc(2 ** 20, "x");
      const pump = () => {
        while (response.write(chunk));
      };
      response.on("drain", pump);
      pump();
      return;
    }
    case "drip": {
      response.writeHead(200, { "content-type": "application/json" });
      const timer = setInterval(() => response.write(" "), 100);
      timers.add(timer);
      response.on("close", () => clearInterval(timer));
      return;
    }
    case "hang":
      return;
    case "redirect":
      response.writeHead(307, { location: `${redirectTo ?? "http://127.0.0.1:9"}/internal` }).end();
      return;
    case "gzip-bomb":
      response
        .writeHead(200, { "content-type": "application/json", "content-encoding": "gzip" })
        .end(gzipSync(Buffer.alloc(200 * 2 ** 20, " ")));
      return;
    case "status-text":
      response
        .writeHead(500, { "content-type": "application/json" })
        .end(JSON.stringify({ kind: "Status", reason: "Evil\nReason", message: HOSTILE_STATUS_MESSAGE }));
      return;
  }
}
