import { readdir } from "node:fs/promises";
import { join } from "node:path";
import type { S3Location } from "../objectstore/s3-client.js";
import type { AccessKey } from "../objectstore/sigv4.js";
import { readBoundedFile } from "../util/bounded-file.js";

/**
 * An operator's backup store: an S3-compatible bucket, the key pair that writes it, and the age
 * recipients every backup is encrypted to. It is written as a directory of files — a mounted Secret
 * — never in the fleet repository: the repository names a store, the operator says where it is.
 */
export interface BackupStore {
  readonly location: S3Location;
  /** Put before every key: "" or a path ending in '/'. */
  readonly prefix: string;
  readonly key: AccessKey;
  readonly recipients: readonly string[];
}

/** The files of a store's directory, each what it holds. */
export const STORE_FILES = {
  endpoint: "the store's URL: https://s3.eu-west-1.amazonaws.com (http:// only where the network is private)",
  bucket: "the bucket (3–63 characters: a–z, 0–9, '.', '-')",
  region: "optional: the region requests are signed for (default us-east-1)",
  prefix: "optional: a path every key starts with (default none)",
  "access-key-id": "the access key ID",
  "secret-access-key": "the secret access key",
  recipients: "the age recipients (age1…) backups are encrypted to, one per line ('#' starts a comment)",
} as const;

type StoreFile = keyof typeof STORE_FILES;
const REQUIRED: readonly StoreFile[] = [
  "endpoint",
  "bucket",
  "access-key-id",
  "secret-access-key",
  "recipients",
];
/** The largest store file read: a file of recipients is the largest, a few KiB. */
const MAX_FILE_BYTES = 16 * 1024;
const MAX_RECIPIENTS = 16;
const RECIPIENT = /^age1[02-9ac-hj-np-z]{58}$/;

/**
 * A store from its files' contents, validated: an error names the file and what is wrong with it,
 * never what a credential file holds.
 */
export function parseBackupStore(files: Readonly<Partial<Record<string, string>>>): BackupStore {
  for (const name of REQUIRED)
    if (!files[name]?.trim()) throw new Error(`${name} is missing: ${STORE_FILES[name]}`);
  const text = (name: StoreFile) => (files[name] ?? "").trim();
  const bucket = text("bucket");
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket) || bucket.includes(".."))
    throw new Error(
      `bucket ${JSON.stringify(bucket.slice(0, 80))} is not a bucket name: ${STORE_FILES.bucket}`,
    );
  const region = text("region") || "us-east-1";
  if (!/^[a-z0-9-]{1,64}$/.test(region)) throw new Error("region is not a region name (a–z, 0–9, '-')");
  return {
    location: { endpoint: parseEndpoint(text("endpoint")), region, bucket },
    prefix: parsePrefix(text("prefix")),
    key: {
      accessKeyId: word(text("access-key-id"), "access-key-id"),
      secretAccessKey: word(text("secret-access-key"), "secret-access-key"),
    },
    recipients: parseRecipients(files.recipients ?? ""),
  };
}

// A credential: one word of printable ASCII. The error never says what the file held.
function word(value: string, name: StoreFile): string {
  if (!/^[\x21-\x7e]{1,256}$/.test(value)) throw new Error(`${name} is not one printable word`);
  return value;
}

function parseRecipients(text: string): string[] {
  const recipients = text
    .split("\n")
    .map((line, index) => ({ line: index + 1, text: line.replace(/#.*$/, "").trim() }))
    .filter((entry) => entry.text !== "");
  for (const entry of recipients)
    if (!RECIPIENT.test(entry.text))
      throw new Error(`recipients line ${entry.line}: not an age X25519 recipient (age1 and 58 characters)`);
  if (recipients.length === 0) throw new Error("recipients names no recipient");
  if (recipients.length > MAX_RECIPIENTS) throw new Error(`recipients names more than ${MAX_RECIPIENTS}`);
  return [...new Set(recipients.map((entry) => entry.text))];
}

function parseEndpoint(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new Error(`endpoint is not a URL: ${STORE_FILES.endpoint}`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:")
    throw new Error("endpoint is not an http(s) URL");
  if (url.username || url.password)
    throw new Error("endpoint holds credentials: they go in access-key-id and secret-access-key");
  if (url.search || url.hash) throw new Error("endpoint has a query or fragment");
  return url;
}

function parsePrefix(text: string): string {
  if (text === "") return "";
  if (text.length > 200) throw new Error("prefix is longer than 200 characters");
  const segments = text.replace(/\/+$/, "").split("/");
  if (segments.some((s) => s === "" || s === "." || s === ".." || !/^[A-Za-z0-9._-]+$/.test(s)))
    throw new Error("prefix is not a path of plain names (A–Z, a–z, 0–9, '.', '_', '-' between '/')");
  return `${segments.join("/")}/`;
}

/**
 * The store in `dir` (a mounted Secret: its keys are files; Kubernetes' own `..data` entries are
 * skipped): each file read bounded, then parsed. Only the files STORE_FILES names are read.
 */
export async function readBackupStore(dir: string): Promise<BackupStore> {
  return parseBackupStore(await readStoreFiles(dir));
}

/** The store files in `dir`, as text (each at most 16 KiB). */
export async function readStoreFiles(dir: string): Promise<Record<string, string>> {
  const present = new Set(
    await readdir(dir).catch(() => {
      throw new Error("the directory cannot be read");
    }),
  );
  const files: Record<string, string> = {};
  for (const name of Object.keys(STORE_FILES)) {
    if (!present.has(name)) continue;
    const read = await readBoundedFile(join(dir, name), MAX_FILE_BYTES, { within: dir });
    if (!read.ok) throw new Error(`${name}: the file ${read.reason}`);
    files[name] = new TextDecoder("utf-8").decode(read.bytes);
  }
  return files;
}

/** The file of a store's directory holding the age identities that open its backups (gitfleet's alone). */
export const IDENTITY_FILE = "identity";
/** The largest identity file read. */
const MAX_IDENTITY_BYTES = 16 * 1024;

/**
 * The text of the store's identity file (AGE-SECRET-KEY-1… lines), read bounded from inside `dir`;
 * an error says why without what it holds. Never among the files a host is given.
 */
export async function readStoreIdentityFile(dir: string): Promise<string> {
  const read = await readBoundedFile(join(dir, IDENTITY_FILE), MAX_IDENTITY_BYTES, { within: dir });
  if (!read.ok)
    throw new Error(`${IDENTITY_FILE}: the file ${read.reason} (gitfleet needs it to bring a backup back)`);
  return new TextDecoder("utf-8").decode(read.bytes);
}
