import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import git from "isomorphic-git";
import { runProgram } from "../util/run-program.js";
import type { SigningFormat } from "./commit-signer.js";
import { gitFs as fs } from "./git-fs.js";

/** Keys whose signatures on status commits gitfleet trusts. */
export interface TrustedKeys {
  readonly format: SigningFormat;
  /** ssh: an allowed-signers file (git's gpg.ssh.allowedSignersFile format); openpgp: a keyring of public keys (`gpg --export`). */
  readonly file: string;
}

/** Whether a commit carries a good signature by a trusted key, and if not, why. */
export type Verdict = { readonly ok: true } | { readonly ok: false; readonly reason: string };

/** Checks one commit of a repository. */
export type CommitVerifier = (gitdir: string, cache: object, commit: string) => Promise<Verdict>;

/**
 * A verifier of status commits' signatures, with the programs git uses: `ssh-keygen -Y verify`
 * against an allowed-signers file (the trusted keys given, plus the public half of the controller's
 * own SSH signing key), or `gpgv` against a keyring. The signature must cover the commit exactly as
 * stored — its tree, parents, author and message — so a verified tip vouches for every file of it.
 */
export async function commitVerifier(options: {
  readonly trusted?: TrustedKeys | undefined;
  readonly signingKey?: { readonly format: SigningFormat; readonly key: string } | undefined;
}): Promise<CommitVerifier | undefined> {
  const { trusted, signingKey } = options;
  if (!trusted && !signingKey) return undefined;
  const format = trusted?.format ?? signingKey?.format ?? "ssh";
  const material = await trustedKeyMaterial(format, trusted, signingKey);
  // A signing key whose public half cannot be read signs nothing either: the first status commit
  // fails and says so. Until then there is nothing to trust, and nothing is.
  if (material.length === 0) return undefined;
  const dir = await mkdtemp(join(tmpdir(), "gitfleet-verify-"));
  const keys = join(dir, format === "ssh" ? "allowed_signers" : "trusted.gpg");
  await writeFile(keys, material, { mode: 0o600 });
  return async (gitdir, cache, commit) => {
    const { signature, payload } = await signedPayload(gitdir, cache, commit);
    if (!signature) return { ok: false, reason: "it is not signed" };
    const sigfile = join(dir, `${commit}.sig`);
    await writeFile(sigfile, signature, { mode: 0o600 });
    try {
      return format === "ssh"
        ? await verifySsh(keys, sigfile, payload)
        : await verifyOpenPgp(keys, sigfile, payload);
    } finally {
      await rm(sigfile, { force: true });
    }
  };
}

/**
 * A commit's signature and the text it signs, as git takes them apart: the raw object with its
 * `gpgsig` header (and the header's continuation lines) removed. (isomorphic-git's readCommit gives
 * a payload that is not the signed text.)
 */
async function signedPayload(
  gitdir: string,
  cache: object,
  commit: string,
): Promise<{ signature: string | undefined; payload: string }> {
  const { object } = await git.readObject({ fs, gitdir, cache, oid: commit, format: "content" });
  const text = new TextDecoder().decode(object as Uint8Array);
  const end = text.indexOf("\n\n");
  const headers = (end < 0 ? text : text.slice(0, end)).split("\n");
  const kept: string[] = [];
  const signature: string[] = [];
  let inSignature = false;
  for (const line of headers) {
    if (line.startsWith("gpgsig ")) {
      inSignature = true;
      signature.push(line.slice("gpgsig ".length));
    } else if (inSignature && line.startsWith(" ")) signature.push(line.slice(1));
    else {
      inSignature = false;
      kept.push(line);
    }
  }
  const body = end < 0 ? "" : text.slice(end);
  return {
    signature: signature.length > 0 ? `${signature.join("\n")}\n` : undefined,
    payload: `${kept.join("\n")}${body}`,
  };
}

// The allowed signers (ssh) or keyring (openpgp) a verifier checks against.
async function trustedKeyMaterial(
  format: SigningFormat,
  trusted: TrustedKeys | undefined,
  signingKey: { readonly format: SigningFormat; readonly key: string } | undefined,
): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  if (trusted) parts.push(await readFile(trusted.file));
  if (signingKey?.format === format)
    parts.push(
      format === "ssh" ? await sshPublicHalf(signingKey.key) : await exportedKeyring(signingKey.key),
    );
  return Buffer.concat(parts);
}

// The signing key's public half as an allowed-signers line; nothing when it cannot be read.
async function sshPublicHalf(key: string): Promise<Uint8Array> {
  const derived = await runProgram("ssh-keygen", ["-y", "-f", key], "");
  const line = derived.stdout.trim();
  if (derived.code !== 0 || line === "") return new Uint8Array();
  return new TextEncoder().encode(`\ngitfleet-controller namespaces="git" ${line}\n`);
}

// gpg --export writes binary packets; read them as bytes, not through a string. Nothing when the key
// cannot be exported.
async function exportedKeyring(key: string): Promise<Uint8Array> {
  const dir = await mkdtemp(join(tmpdir(), "gitfleet-gpg-"));
  try {
    const out = join(dir, "key.gpg");
    // An unknown key exports nothing (gpg still exits 0): nothing is trusted for it.
    const result = await runProgram("gpg", ["--batch", "--yes", "--output", out, "--export", key], "");
    if (result.code !== 0) return new Uint8Array();
    return await readFile(out).catch(() => new Uint8Array());
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function verifySsh(allowed: string, sigfile: string, payload: string): Promise<Verdict> {
  const found = await runProgram("ssh-keygen", ["-Y", "find-principals", "-s", sigfile, "-f", allowed], "");
  const principal = found.stdout
    .split("\n")
    .find((line) => line.trim() !== "")
    ?.trim();
  if (found.code !== 0 || !principal) return { ok: false, reason: "its signature is not by a trusted key" };
  const verified = await runProgram(
    "ssh-keygen",
    ["-Y", "verify", "-f", allowed, "-I", principal, "-n", "git", "-s", sigfile],
    payload,
  );
  return verified.code === 0 ? { ok: true } : { ok: false, reason: "its signature does not verify" };
}

async function verifyOpenPgp(keyring: string, sigfile: string, payload: string): Promise<Verdict> {
  const verified = await runProgram("gpgv", ["--keyring", keyring, sigfile, "-"], payload);
  return verified.code === 0 ? { ok: true } : { ok: false, reason: "its signature is not by a trusted key" };
}
