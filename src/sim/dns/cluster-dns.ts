import { createSocket, type Socket } from "node:dgram";
import { createServer, type Server, type Socket as TcpSocket } from "node:net";
import dnsPacket, { type Answer, type DecodedPacket, type Packet } from "dns-packet";
import { answerQuery, RCODE, reply } from "./zone-answers.js";
import type { Zone } from "./zone-file.js";

// A member's cluster DNS for the zones it serves (a simulated member's, as CoreDNS's file plugin
// serves a zone mounted from a ConfigMap): UDP and TCP on one port of 127.0.0.1, so `dig` and any
// resolver can ask it. Queries are untrusted: UDP datagrams past 512 bytes without EDNS are
// answered truncated, a TCP message is at most 65,535 bytes, at most MAX_CONNECTIONS TCP clients at
// once, each closed after IDLE_MS without a query; a packet that does not decode gets FORMERR.

const MAX_CONNECTIONS = 64;
const IDLE_MS = 10_000;
const MAX_UDP_PAYLOAD = 4096;
const EDNS_PAYLOAD = 1232;
const TRUNCATED = 0x0200;

export interface ClusterDns {
  /** The port on 127.0.0.1, for UDP and TCP. */
  readonly port: number;
  close(): Promise<void>;
}

/** Starts answering for the zones `zones()` gives at the time of each query. */
export async function startClusterDns(options: {
  readonly zones: () => readonly Zone[];
  readonly port?: number;
}): Promise<ClusterDns> {
  const respond = (bytes: Buffer, transport: "udp" | "tcp"): Buffer | undefined =>
    answerBytes(bytes, options.zones, transport);
  const open = new Set<TcpSocket>();
  const tcp = createServer((socket) => {
    open.add(socket);
    socket.on("close", () => open.delete(socket));
    serveTcp(socket, respond);
  });
  tcp.maxConnections = MAX_CONNECTIONS;
  await listen(tcp, options.port ?? 0);
  const port = (tcp.address() as { port: number }).port;
  const udp = createSocket("udp4");
  udp.on("message", (message, from) => {
    const answer = respond(message, "udp");
    if (answer) udp.send(answer, from.port, from.address);
  });
  await new Promise<void>((resolve, reject) => {
    udp.once("error", reject);
    udp.bind(port, "127.0.0.1", () => resolve());
  });
  return {
    port,
    close: () => {
      for (const socket of open) socket.destroy();
      return close(tcp, udp);
    },
  };
}

/** The bytes of the answer to the bytes of a query; undefined when not even a header came. */
export function answerBytes(
  bytes: Buffer,
  zones: () => readonly Zone[],
  transport: "udp" | "tcp",
): Buffer | undefined {
  if (bytes.length < 12) return undefined;
  let query: DecodedPacket;
  try {
    query = dnsPacket.decode(bytes);
  } catch {
    // The header alone is readable: the id and flags a FORMERR needs.
    return dnsPacket.encode(
      reply({ id: bytes.readUInt16BE(0), flags: bytes.readUInt16BE(2) }, RCODE.FORMERR, []),
    );
  }
  if (query.type !== "query") return undefined;
  let answer: Packet;
  try {
    answer = answerQuery(query, zones());
  } catch {
    answer = reply(query, RCODE.SERVFAIL, query.questions ?? []);
  }
  const edns = (query.additionals ?? []).find((a) => a.type === "OPT");
  const opt = edns ? [optRecord()] : [];
  const withOpt = { ...answer, additionals: [...(answer.additionals ?? []), ...opt] };
  const limit =
    transport === "tcp"
      ? 65_535
      : edns && edns.type === "OPT"
        ? Math.min(Math.max(512, edns.udpPayloadSize), MAX_UDP_PAYLOAD)
        : 512;
  const encoded = dnsPacket.encode(withOpt);
  if (encoded.length <= limit) return encoded;
  // Too large for the datagram: the header and question, truncated, so the client asks over TCP.
  return dnsPacket.encode({
    ...answer,
    flags: (answer.flags ?? 0) | TRUNCATED,
    answers: [],
    authorities: [],
    additionals: opt,
  });
}

function optRecord(): Answer {
  return {
    type: "OPT",
    name: ".",
    udpPayloadSize: EDNS_PAYLOAD,
    extendedRcode: 0,
    ednsVersion: 0,
    flags: 0,
    flag_do: false,
    options: [],
  };
}

// DNS over TCP: each message after its two-byte length.
function serveTcp(socket: TcpSocket, respond: (bytes: Buffer, transport: "tcp") => Buffer | undefined): void {
  let pending = Buffer.alloc(0);
  socket.setTimeout(IDLE_MS, () => socket.destroy());
  socket.on("error", () => socket.destroy());
  socket.on("data", (chunk: Buffer) => {
    pending = Buffer.concat([pending, chunk]);
    while (pending.length >= 2) {
      const length = pending.readUInt16BE(0);
      if (pending.length < 2 + length) break;
      const message = pending.subarray(2, 2 + length);
      pending = pending.subarray(2 + length);
      const answer = respond(message, "tcp");
      if (!answer) {
        socket.destroy();
        return;
      }
      const framed = Buffer.alloc(2 + answer.length);
      framed.writeUInt16BE(answer.length, 0);
      answer.copy(framed, 2);
      socket.write(framed);
    }
  });
}

function listen(server: Server, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve());
  });
}

function close(tcp: Server, udp: Socket): Promise<void> {
  return new Promise((resolve) => {
    udp.close(() => {
      tcp.close(() => resolve());
    });
  });
}
