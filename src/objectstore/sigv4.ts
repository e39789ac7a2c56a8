import { createHash, createHmac } from "node:crypto";

/** An access key pair of an S3-compatible store. */
export interface AccessKey {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
}

/** One request to sign: its method, path and query as sent, the headers to sign, the payload's hash. */
export interface RequestToSign {
  readonly method: string;
  /** The path as it goes on the wire, each segment already percent-encoded once (S3 does not encode twice). */
  readonly path: string;
  readonly query?: ReadonlyArray<readonly [string, string]>;
  /** Every header to sign, host and x-amz-date among them (names in any case). */
  readonly headers: Readonly<Record<string, string>>;
  /** Lower-case hex SHA-256 of the payload (the x-amz-content-sha256 value for S3). */
  readonly payloadHash: string;
}

/** Where and when a request is signed. */
export interface SigningScope {
  readonly region: string;
  readonly service: string;
  /** The request's x-amz-date: yyyymmddThhmmssZ. */
  readonly amzDate: string;
}

/** The SHA-256 of bytes, as lower-case hex. */
export function sha256Hex(data: string | Uint8Array): string {
  return createHash("sha256").update(data).digest("hex");
}

/** A time as x-amz-date writes it: 20150830T123600Z. */
export function amzDate(at: Date): string {
  return at
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d{3}/, "");
}

/**
 * RFC 3986 percent-encoding as AWS Signature Version 4 wants it: every byte but the unreserved
 * characters (A–Z a–z 0–9 - . _ ~), '/' too unless `keepSlash`.
 */
export function uriEncode(text: string, keepSlash = false): string {
  let out = "";
  for (const byte of Buffer.from(text, "utf8")) {
    const char = String.fromCharCode(byte);
    if (/[A-Za-z0-9\-._~]/.test(char) || (keepSlash && char === "/")) out += char;
    else out += `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

/**
 * The Authorization header of AWS Signature Version 4 for a request: the canonical request (method,
 * path, sorted query, sorted lower-case headers with trimmed values, the signed header list, the
 * payload hash) hashed into the string to sign, signed with the key derived from the secret through
 * the date, region, service and "aws4_request".
 */
export function authorization(request: RequestToSign, scope: SigningScope, key: AccessKey): string {
  const headers = Object.entries(request.headers)
    .map(([name, value]) => [name.toLowerCase(), value.trim().replace(/\s+/g, " ")] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const signedHeaders = headers.map(([name]) => name).join(";");
  const query = [...(request.query ?? [])]
    .map(([name, value]) => [uriEncode(name), uriEncode(value)] as const)
    .sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0))
    .map(([name, value]) => `${name}=${value}`)
    .join("&");
  const canonical = [
    request.method,
    request.path,
    query,
    ...headers.map(([name, value]) => `${name}:${value}`),
    "",
    signedHeaders,
    request.payloadHash,
  ].join("\n");
  const day = scope.amzDate.slice(0, 8);
  const credentialScope = `${day}/${scope.region}/${scope.service}/aws4_request`;
  const toSign = ["AWS4-HMAC-SHA256", scope.amzDate, credentialScope, sha256Hex(canonical)].join("\n");
  const hmac = (k: string | Buffer, data: string) => createHmac("sha256", k).update(data).digest();
  const signingKey = hmac(
    hmac(hmac(hmac(`AWS4${key.secretAccessKey}`, day), scope.region), scope.service),
    "aws4_request",
  );
  const signature = createHmac("sha256", signingKey).update(toSign).digest("hex");
  return `AWS4-HMAC-SHA256 Credential=${key.accessKeyId}/${credentialScope}, SignedHeaders=${signedHeaders}, Signature=${signature}`;
}
