import { runProgram } from "../util/run-program.js";

/** How status commits are signed: with an SSH key (ssh-keygen) or an OpenPGP key (gpg). */
export type SigningFormat = "ssh" | "openpgp";

/**
 * A signer for isomorphic-git's onSign: `ssh-keygen -Y sign -n git` with an SSH private key file, or
 * `gpg --detach-sign --armor` with a key id — the programs git itself uses, so `git verify-commit`
 * (with `gpg.ssh.allowedSignersFile` for SSH) checks the status branch's commits. The key stays where
 * it is; only the commit text goes to the program.
 */
export function commitSigner(format: SigningFormat, key: string): (payload: string) => Promise<string> {
  const [program, args] =
    format === "ssh"
      ? ["ssh-keygen", ["-Y", "sign", "-n", "git", "-f", key]]
      : ["gpg", ["--batch", "--yes", "--local-user", key, "--detach-sign", "--armor"]];
  return async (payload) => {
    const result = await runProgram(program, args, payload).catch((error: Error) => {
      throw new Error(`signing a status commit: cannot run ${program}: ${error.message}`);
    });
    if (result.code === 0 && result.stdout.includes("-----BEGIN")) return result.stdout;
    throw new Error(`signing a status commit: ${program} exited ${result.code}: ${result.stderr.trim()}`);
  };
}
