import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { open } from "node:fs/promises";
import { Readable } from "node:stream";
import { readBoundedResponse } from "../util/bounded-response.js";
import { type AccessKey, amzDate, authorization, sha256Hex, uriEncode } from "./sigv4.js";

/** Where objects go: the store's endpoint (path-style: <endpoint>/<bucket>/<key>), region and bucket. */
export interface S3Location {
  readonly endpoint: URL;
  readonly region: string;
  readonly bucket: string;
}

/** An object a listing names. */
export interface ListedObject {
  readonly key: string;
  readonly size: number;
  readonly lastModified: string;
}

/** How long one request may take, and how much of an answer is read. */
export interface S3Bounds {
  readonly timeoutMs: number;
  /** The most bytes of an error or listing answer read. */
  readonly maxAnswerBytes: number;
  /** The most pages of one listing (1,000 keys each). */
  readonly maxListPages: number;
}

export const DEFAULT_S3_BOUNDS: S3Bounds = { timeoutMs: 60_000, maxAnswerBytes: 1 << 20, maxListPages: 100 };

/**
 * A client of an S3-compatible store for what gitfleet keeps there: put a file, get an object into a
 * file (bounded), list keys under a prefix (bounded), each request signed with AWS Signature
 * Version 4. It never follows a redirect (the store is the operator's, and an answer cannot send a
 * request elsewhere), and names a failure by the store's error code and the key, never by anything
 * signed.
 */
export class S3Client {
  constructor(
    private readonly location: S3Location,
    private readonly key: AccessKey,
    private readonly bounds: S3Bounds = DEFAULT_S3_BOUNDS,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  /** Puts the file at `path` as `key`; its SHA-256 is computed first and signed. */
  async putFile(key: string, path: string): Promise<{ readonly size: number; readonly sha256: string }> {
    const { size, sha256 } = await fileDigest(path);
    const body = Readable.toWeb(createReadStream(path)) as ReadableStream<Uint8Array>;
    // A large object may take longer than one request's bound: it gets a millisecond more per KiB
    // (as if sent at 1 MiB/s), so a slow but moving transfer of gigabytes is not cut off. So does a get.
    const response = await this.send("PUT", objectPath(this.location.bucket, key), [], sha256, {
      body: { stream: body, contentLength: size },
      timeoutMs: this.bounds.timeoutMs + Math.ceil(size / 1024),
    });
    await this.expectOk(response, `put ${key}`);
    return { size, sha256 };
  }

  /**
   * The object `key`'s bytes, at most `maxBytes`: a larger object is refused by its Content-Length or,
   * when the store does not send one, cut off as it goes past.
   */
  async get(key: string, maxBytes: number): Promise<Uint8Array> {
    const chunks: Uint8Array[] = [];
    await this.read(key, maxBytes, async (chunk) => {
      chunks.push(chunk);
    });
    return Buffer.concat(chunks);
  }

  /** Writes the object `key` into a new file at `path` (mode 0600), at most `maxBytes` of it. */
  async getFile(key: string, path: string, maxBytes: number): Promise<{ readonly size: number }> {
    const file = await open(path, "wx", 0o600);
    let size = 0;
    try {
      await this.read(key, maxBytes, async (chunk) => {
        size += chunk.byteLength;
        await file.write(chunk);
      });
    } finally {
      await file.close();
    }
    return { size };
  }

  // The object's bytes, chunk by chunk, refused past maxBytes: by its Content-Length when the store
  // sends one, else as it goes past.
  private async read(
    key: string,
    maxBytes: number,
    take: (chunk: Uint8Array) => Promise<void>,
  ): Promise<void> {
    const response = await this.send("GET", objectPath(this.location.bucket, key), [], sha256Hex(""), {
      timeoutMs: this.bounds.timeoutMs + Math.ceil(maxBytes / 1024),
    });
    await this.expectOk(response, `get ${key}`);
    const declared = Number(response.headers.get("content-length") ?? "NaN");
    if (Number.isFinite(declared) && declared > maxBytes) {
      await response.body?.cancel();
      throw new Error(`object ${key} is ${declared} bytes, more than the ${maxBytes} read`);
    }
    const reader = response.body?.getReader();
    let size = 0;
    for (;;) {
      const next = await reader?.read();
      if (!next || next.done) break;
      size += next.value.byteLength;
      if (size > maxBytes) {
        await reader?.cancel();
        throw new Error(`object ${key} is more than the ${maxBytes} bytes read`);
      }
      await take(next.value);
    }
  }

  /** Deletes the object `key` (a key that is not there is no error, as S3 answers 204 for it). */
  async delete(key: string): Promise<void> {
    const response = await this.send("DELETE", objectPath(this.location.bucket, key), [], sha256Hex(""));
    await this.expectOk(response, `delete ${key}`);
    await response.body?.cancel();
  }

  /** The objects whose keys start with `prefix`, in key order (ListObjectsV2, page by page). */
  async list(prefix: string): Promise<ListedObject[]> {
    const listed: ListedObject[] = [];
    let token: string | undefined;
    for (let page = 0; page < this.bounds.maxListPages; page++) {
      const query: [string, string][] = [
        ["list-type", "2"],
        ["prefix", prefix],
        ...(token ? [["continuation-token", token] as [string, string]] : []),
      ];
      const response = await this.send("GET", `/${uriEncode(this.location.bucket)}`, query, sha256Hex(""));
      await this.expectOk(response, `list ${prefix}`);
      const xml = await readBoundedResponse(response, this.bounds.maxAnswerBytes);
      listed.push(...listedObjects(xml));
      if (elementText(xml, "IsTruncated") !== "true") return listed;
      token = elementText(xml, "NextContinuationToken");
      if (!token)
        throw new Error(`listing ${prefix}: the store said there is more but gave no continuation token`);
    }
    throw new Error(`listing ${prefix}: more than ${this.bounds.maxListPages} pages`);
  }

  private async send(
    method: string,
    path: string,
    query: ReadonlyArray<readonly [string, string]>,
    payloadHash: string,
    transfer?: {
      readonly body?: { readonly stream: ReadableStream<Uint8Array>; readonly contentLength: number };
      readonly timeoutMs: number;
    },
  ): Promise<Response> {
    const upload = transfer?.body;
    const endpoint = this.location.endpoint;
    const base = endpoint.pathname.replace(/\/+$/, "");
    const date = amzDate(this.clock());
    const headers: Record<string, string> = {
      host: endpoint.host,
      "x-amz-content-sha256": payloadHash,
      "x-amz-date": date,
    };
    const signed = authorization(
      { method, path: `${base}${path}`, query, headers, payloadHash },
      { region: this.location.region, service: "s3", amzDate: date },
      this.key,
    );
    const search = query.map(([name, value]) => `${uriEncode(name)}=${uriEncode(value)}`).join("&");
    const url = `${endpoint.protocol}//${endpoint.host}${base}${path}${search ? `?${search}` : ""}`;
    const { host: _host, ...sent } = headers;
    return await fetch(url, {
      method,
      redirect: "manual",
      signal: AbortSignal.timeout(transfer?.timeoutMs ?? this.bounds.timeoutMs),
      headers: {
        ...sent,
        authorization: signed,
        ...(upload ? { "content-length": String(upload.contentLength) } : {}),
      },
      ...(upload ? { body: upload.stream, duplex: "half" } : {}),
    } as RequestInit);
  }

  private async expectOk(response: Response, what: string): Promise<void> {
    if (response.status >= 200 && response.status < 300) return;
    const text = await readBoundedResponse(response, this.bounds.maxAnswerBytes).catch(() => "");
    const code = elementText(text, "Code");
    const safe = code && /^[A-Za-z0-9.]{1,64}$/.test(code) ? code : undefined;
    throw new Error(`${what}: the store answered ${response.status}${safe ? ` ${safe}` : ""}`);
  }
}

// /<bucket>/<key>, each segment of the key encoded once.
function objectPath(bucket: string, key: string): string {
  return `/${uriEncode(bucket)}/${uriEncode(key, true)}`;
}

async function fileDigest(path: string): Promise<{ size: number; sha256: string }> {
  const handle = await open(path, "r");
  try {
    const hash = createHash("sha256");
    let size = 0;
    for await (const chunk of handle.createReadStream({ autoClose: false })) {
      hash.update(chunk as Buffer);
      size += (chunk as Buffer).byteLength;
    }
    return { size, sha256: hash.digest("hex") };
  } finally {
    await handle.close();
  }
}

const ENTITIES: Readonly<Record<string, string>> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };

function unescapeXml(text: string): string {
  return text.replace(/&(amp|lt|gt|quot|apos|#\d{1,7}|#x[0-9a-fA-F]{1,6});/g, (all, name: string) => {
    if (name.startsWith("#x")) return safeCodePoint(Number.parseInt(name.slice(2), 16)) ?? all;
    if (name.startsWith("#")) return safeCodePoint(Number.parseInt(name.slice(1), 10)) ?? all;
    return ENTITIES[name] ?? all;
  });
}

function safeCodePoint(code: number): string | undefined {
  return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : undefined;
}

// The text of the first <name>…</name> in an answer (no attributes, no nesting: what S3 sends).
function elementText(xml: string, name: string): string | undefined {
  const match = new RegExp(`<${name}>([^<]*)</${name}>`).exec(xml);
  return match?.[1] === undefined ? undefined : unescapeXml(match[1]);
}

function listedObjects(xml: string): ListedObject[] {
  const objects: ListedObject[] = [];
  for (const match of xml.matchAll(/<Contents>([\s\S]*?)<\/Contents>/g)) {
    const entry = match[1] ?? "";
    const key = elementText(entry, "Key");
    const size = Number(elementText(entry, "Size"));
    if (key === undefined || !Number.isSafeInteger(size) || size < 0) continue;
    objects.push({ key, size, lastModified: elementText(entry, "LastModified") ?? "" });
  }
  return objects;
}
