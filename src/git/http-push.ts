import git from "isomorphic-git";
import { gitFs as fs } from "./git-fs.js";

/** The outcome of pushing one ref: accepted, or refused because the remote ref is no longer `expected`. */
export type PushResult =
  | { readonly status: "pushed" }
  | { readonly status: "rejected"; readonly reason: string };

export interface PushRequest {
  readonly gitdir: string;
  readonly cache: object;
  /** The repository URL, e.g. https://git.example.com/platform/fleet.git */
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  /** Full ref name, e.g. refs/heads/gitfleet/status. */
  readonly ref: string;
  /** What the remote ref must point at now (undefined: it must not exist). */
  readonly expected: string | undefined;
  readonly value: string;
  /** Every object the remote lacks: the status writer's list of what it wrote. */
  readonly objects: readonly string[];
}

const ZERO = "0".repeat(40);

/**
 * Pushes one ref over Git's smart HTTP protocol with exactly the objects given, and with the remote's
 * old value stated, so the server refuses the update if another writer moved the ref in the meantime —
 * a compare-and-swap, never a force. isomorphic-git's own push walks every tree of both commits to
 * find what to send, which costs the size of the repository; the status writer already knows the
 * handful of objects a commit added.
 */
export async function pushRef(request: PushRequest): Promise<PushResult> {
  const { packfile } = await git.packObjects({
    fs,
    gitdir: request.gitdir,
    cache: request.cache,
    oids: [...new Set(request.objects)],
    write: false,
  });
  const command = `${request.expected ?? ZERO} ${request.value} ${request.ref}\0report-status agent=gitfleet\n`;
  const body = Buffer.concat([
    pktLine(command),
    Buffer.from("0000"),
    Buffer.from(packfile ?? new Uint8Array()),
  ]);
  const response = await fetch(`${request.url.replace(/\/+$/, "")}/git-receive-pack`, {
    method: "POST",
    headers: {
      ...request.headers,
      "content-type": "application/x-git-receive-pack-request",
      accept: "application/x-git-receive-pack-result",
    },
    body,
  });
  if (!response.ok)
    throw new Error(`push to ${redactUrl(request.url)}: HTTP ${response.status} ${response.statusText}`);
  return readReport(Buffer.from(await response.arrayBuffer()), request.ref);
}

function pktLine(text: string): Buffer {
  const payload = Buffer.from(text, "utf8");
  return Buffer.concat([Buffer.from((payload.length + 4).toString(16).padStart(4, "0")), payload]);
}

// report-status: "unpack ok", then "ok <ref>" or "ng <ref> <reason>" per command.
function readReport(data: Buffer, ref: string): PushResult {
  const lines: string[] = [];
  for (let at = 0; at + 4 <= data.length; ) {
    const length = Number.parseInt(data.subarray(at, at + 4).toString(), 16);
    if (!Number.isFinite(length)) break;
    if (length === 0) {
      at += 4;
      continue;
    }
    lines.push(
      data
        .subarray(at + 4, at + length)
        .toString("utf8")
        .replace(/\n$/, ""),
    );
    at += length;
  }
  const unpack = lines.find((l) => l.startsWith("unpack "));
  if (unpack !== "unpack ok")
    throw new Error(`push of ${ref}: the server could not unpack the objects (${unpack ?? "no report"})`);
  if (lines.includes(`ok ${ref}`)) return { status: "pushed" };
  const refused = lines.find((l) => l.startsWith(`ng ${ref} `));
  if (refused) return { status: "rejected", reason: refused.slice(`ng ${ref} `.length) };
  throw new Error(`push of ${ref}: the server did not report on the ref (${lines.join("; ")})`);
}

/** A URL without any credentials in it, for messages and logs. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = "";
    parsed.password = "";
    return parsed.toString();
  } catch {
    return "<unparseable URL>";
  }
}
