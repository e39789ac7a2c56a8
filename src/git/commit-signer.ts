import { spawn } from "node:child_process";

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
  return (payload) => run(program, args, payload);
}

function run(program: string, args: readonly string[], input: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on("error", (error) =>
      reject(new Error(`signing a status commit: cannot run ${program}: ${error.message}`)),
    );
    child.on("close", (code) => {
      if (code === 0 && stdout.includes("-----BEGIN")) resolve(stdout);
      else reject(new Error(`signing a status commit: ${program} exited ${code}: ${stderr.trim()}`));
    });
    child.stdin.end(input);
  });
}
