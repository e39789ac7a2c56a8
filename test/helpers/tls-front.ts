import { connect } from "node:net";
import { createServer, type TLSSocket } from "node:tls";

/**
 * A TLS front for a plain-HTTP simulated member, as a hosted cluster's kube-apiserver serves: its
 * serving certificate, and a client certificate signed by `ca` required of every client. Each
 * accepted connection is piped to `target`; the subjects of the client certificates are kept.
 */
export async function startTlsFront(options: {
  readonly port: number;
  readonly cert: string;
  readonly key: string;
  readonly ca: string;
  readonly target: string;
}): Promise<{ clients: string[]; close(): Promise<void> }> {
  const clients: string[] = [];
  const open = new Set<{ destroy(): void }>();
  const target = new URL(options.target);
  const server = createServer(
    { cert: options.cert, key: options.key, ca: options.ca, requestCert: true, rejectUnauthorized: true },
    (socket: TLSSocket) => {
      clients.push(String(socket.getPeerCertificate().subject?.CN ?? ""));
      const upstream = connect(Number(target.port), target.hostname);
      open.add(socket);
      open.add(upstream);
      socket.pipe(upstream).pipe(socket);
      const end = () => {
        socket.destroy();
        upstream.destroy();
      };
      socket.on("error", end);
      upstream.on("error", end);
    },
  );
  await new Promise<void>((resolve) => server.listen(options.port, "127.0.0.1", resolve));
  return {
    clients,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of open) socket.destroy();
      }),
  };
}
