import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { generateIdentity, identityToRecipient } from "age-encryption";
import { builtBinary } from "./built-binary.js";

/**
 * The pinned sops: the one `npm test` brought (GITFLEET_SOPS), or built from Go modules by
 * scripts/build-sops.sh (cached after the first build).
 */
export function sopsBinary(): string {
  return process.env.GITFLEET_SOPS ?? builtBinary("build-sops.sh");
}

/** A fresh age key pair for one test: the identity (secret) and its recipient (public). */
export interface AgeKey {
  readonly identity: string;
  readonly recipient: string;
}

export async function ageKey(): Promise<AgeKey> {
  const identity = await generateIdentity();
  return { identity, recipient: await identityToRecipient(identity) };
}

/** An age key file as age-keygen writes it. */
export function ageKeyFile(keys: readonly AgeKey[]): string {
  return keys.map((k) => `# created: for a test\n# public key: ${k.recipient}\n${k.identity}\n`).join("");
}

/**
 * Encrypts YAML as an operator's sops does: `sops encrypt` with the recipients and flags given
 * (default: only data and stringData, as gitfleet asks), reading nothing of the user's configuration
 * but the creation rules `config` gives.
 */
export function sopsEncrypt(
  plain: string,
  recipients: readonly string[],
  flags: readonly string[] = ["--encrypted-regex", "^(data|stringData)$"],
  config?: string,
): string {
  const dir = mkdtempSync(join(tmpdir(), "gitfleet-sops-"));
  try {
    const file = join(dir, "secret.yaml");
    writeFileSync(file, plain);
    // A creation rule's settings that have no flag (mac_only_encrypted) come from a .sops.yaml.
    if (config) writeFileSync(join(dir, ".sops.yaml"), config);
    const configFlag = config ? ["--config", join(dir, ".sops.yaml")] : [];
    return execFileSync(
      sopsBinary(),
      [
        ...configFlag,
        "encrypt",
        "--age",
        recipients.join(","),
        ...flags,
        "--input-type",
        "yaml",
        "--output-type",
        "yaml",
        file,
      ],
      { encoding: "utf8", env: { PATH: process.env.PATH, HOME: dir }, stdio: ["ignore", "pipe", "pipe"] },
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** What the real sops decrypts a file to, with the given identities. */
export function sopsDecrypt(encrypted: string, keys: readonly AgeKey[]): string {
  const dir = mkdtempSync(join(tmpdir(), "gitfleet-sops-"));
  try {
    const file = join(dir, "secret.yaml");
    writeFileSync(file, encrypted);
    writeFileSync(join(dir, "keys.txt"), ageKeyFile(keys));
    return execFileSync(sopsBinary(), ["decrypt", "--input-type", "yaml", "--output-type", "yaml", file], {
      encoding: "utf8",
      env: { PATH: process.env.PATH, HOME: dir, SOPS_AGE_KEY_FILE: join(dir, "keys.txt") },
      stdio: ["ignore", "pipe", "pipe"],
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `sops set`: one value of an encrypted file changed as an operator changes it (the others keep their ciphertexts). */
export function sopsSet(encrypted: string, keys: readonly AgeKey[], index: string, value: string): string {
  const dir = mkdtempSync(join(tmpdir(), "gitfleet-sops-"));
  try {
    const file = join(dir, "secret.yaml");
    writeFileSync(file, encrypted);
    writeFileSync(join(dir, "keys.txt"), ageKeyFile(keys));
    execFileSync(
      sopsBinary(),
      ["set", "--input-type", "yaml", "--output-type", "yaml", file, index, JSON.stringify(value)],
      {
        env: { PATH: process.env.PATH, HOME: dir, SOPS_AGE_KEY_FILE: join(dir, "keys.txt") },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    return readFileSync(file, "utf8");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
