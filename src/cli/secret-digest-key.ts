import { randomBytes } from "node:crypto";
import { readBoundedFile } from "../util/bounded-file.js";
import { CliError, ExitCode } from "./exit-codes.js";

/** The environment variable that holds the fleet's secret digest key when no file is given. */
export const SECRET_DIGEST_KEY_ENV = "GITFLEET_SECRET_DIGEST_KEY";

/** The key Secrets' value digests are made with, and where it came from. */
export interface SecretDigestKey {
  readonly key: Uint8Array;
  /** ephemeral: none was configured, so this process made one (digests change when it restarts). */
  readonly source: "file" | "environment" | "ephemeral";
}

const MIN_KEY_BYTES = 16;

/**
 * The operator's secret digest key: the contents of `file` (trailing newline dropped), else the
 * environment variable GITFLEET_SECRET_DIGEST_KEY, else a random key for this process only. Keep it
 * out of Git: with it, a digest on the status branch can be checked against a guessed value.
 */
export async function readSecretDigestKey(options: {
  readonly file?: string | undefined;
  readonly env: Readonly<Record<string, string | undefined>>;
}): Promise<SecretDigestKey> {
  if (options.file) {
    const read = await readBoundedFile(options.file, 4096);
    if (!read.ok) throw new CliError(`--secret-digest-key-file: the key file ${read.reason}`, ExitCode.Usage);
    return { key: checked(trimNewline(read.bytes), "--secret-digest-key-file"), source: "file" };
  }
  const value = options.env[SECRET_DIGEST_KEY_ENV];
  if (value)
    return { key: checked(new TextEncoder().encode(value), SECRET_DIGEST_KEY_ENV), source: "environment" };
  return { key: new Uint8Array(randomBytes(32)), source: "ephemeral" };
}

function checked(key: Uint8Array, where: string): Uint8Array {
  if (key.length < MIN_KEY_BYTES)
    throw new CliError(
      `${where}: the secret digest key must be at least ${MIN_KEY_BYTES} bytes (use 32 random bytes)`,
      ExitCode.Usage,
    );
  return key;
}

function trimNewline(bytes: Uint8Array): Uint8Array {
  let end = bytes.length;
  while (end > 0 && (bytes[end - 1] === 0x0a || bytes[end - 1] === 0x0d)) end--;
  return bytes.subarray(0, end);
}
