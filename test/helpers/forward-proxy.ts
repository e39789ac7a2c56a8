import { createServer, request } from "node:http";
import { connect, type Socket } from "node:net";

/**
 * A forward proxy on loopback, as an operator's egress proxy works: plain HTTP by absolute URL,
 * HTTPS by CONNECT tunnels. It records what it was asked (`GET http://…`, `CONNECT host:port`).
 */
export async function startForwardProxy(): Promise<{
  url: string;
  requests: string[];
  close(): Promise<void>;
}> {
  const requests: string[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((incoming, outgoing) => {
    requests.push(`${incoming.method} ${incoming.url}`);
    const target = new URL(incoming.url ?? "/");
    const upstream = request(
      {
        host: target.hostname,
        port: target.port,
        path: `${target.pathname}${target.search}`,
        method: incoming.method,
        headers: incoming.headers,
      },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(outgoing);
      },
    );
    upstream.on("error", () => outgoing.writeHead(502).end());
    incoming.pipe(upstream);
  });
  server.on("connect", (incoming, client: Socket) => {
    requests.push(`CONNECT ${incoming.url}`);
    const [host = "", port = "443"] = (incoming.url ?? "").replace(/^\[([^\]]+)\]/, "$1").split(/:(?=\d+$)/);
    const upstream = connect(Number(port), host, () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      upstream.pipe(client).pipe(upstream);
    });
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on("error", () => {
        client.destroy();
        upstream.destroy();
      });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
