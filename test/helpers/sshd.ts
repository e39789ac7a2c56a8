import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { userInfo } from "node:os";
import { join } from "node:path";
import { freePort } from "./free-port.js";

const SSHD = "/usr/sbin/sshd";

/** A real OpenSSH server on loopback whose one authorized key may only run git-shell. */
export interface GitSshServer {
  readonly port: number;
  /** The user to log in as (the one running the tests). */
  readonly user: string;
  /** known_hosts text naming this server's host key. */
  readonly knownHosts: string;
  /** The client key's private half (a deploy key), as a file. */
  readonly clientKeyFile: string;
  /** ssh://user@127.0.0.1:port + an absolute path. */
  urlOf(path: string): string;
  close(): Promise<void>;
}

/**
 * Starts Debian's sshd (openssh-server) with a configuration of its own in `dir`: loopback only, a
 * fresh ed25519 host key, public-key login only, and the client key's authorized_keys entry forced
 * to git-shell — a deploy key that can fetch and push and do nothing else.
 */
export async function startGitSshServer(dir: string): Promise<GitSshServer> {
  if (!existsSync(SSHD))
    throw new Error(
      `${SSHD} is missing: install Debian's openssh-server (.ci/run does) to run the SSH tests`,
    );
  mkdirSync(dir, { recursive: true });
  const keygen = (file: string) =>
    execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "gitfleet-test", "-f", file]);
  keygen(join(dir, "host_key"));
  keygen(join(dir, "client_key"));
  const clientPublic = readFileSync(join(dir, "client_key.pub"), "utf8").trim();
  writeFileSync(
    join(dir, "authorized_keys"),
    `command="git-shell -c \\"$SSH_ORIGINAL_COMMAND\\"",no-port-forwarding,no-agent-forwarding,no-X11-forwarding,no-pty ${clientPublic}\n`,
  );
  const port = await freePort();
  const user = userInfo().username;
  writeFileSync(
    join(dir, "sshd_config"),
    [
      `Port ${port}`,
      "ListenAddress 127.0.0.1",
      `HostKey ${join(dir, "host_key")}`,
      `PidFile ${join(dir, "sshd.pid")}`,
      `AuthorizedKeysFile ${join(dir, "authorized_keys")}`,
      "StrictModes no",
      "PubkeyAuthentication yes",
      "PasswordAuthentication no",
      "KbdInteractiveAuthentication no",
      "UsePAM no",
      "PermitRootLogin prohibit-password",
      `AllowUsers ${user}`,
      "LogLevel ERROR",
      "",
    ].join("\n"),
  );
  // sshd running as root wants its privilege separation directory.
  if (process.getuid?.() === 0) mkdirSync("/run/sshd", { recursive: true });
  const child: ChildProcess = spawn(SSHD, ["-D", "-e", "-f", join(dir, "sshd_config")], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  await waitForPort(port, child, () => stderr);
  const hostPublic = readFileSync(join(dir, "host_key.pub"), "utf8").trim().split(" ").slice(0, 2).join(" ");
  return {
    port,
    user,
    knownHosts: `[127.0.0.1]:${port} ${hostPublic}\n`,
    clientKeyFile: join(dir, "client_key"),
    urlOf: (path) => `ssh://${user}@127.0.0.1:${port}${path}`,
    close: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}

async function waitForPort(port: number, child: ChildProcess, stderr: () => string): Promise<void> {
  const { connect } = await import("node:net");
  for (let i = 0; i < 200; i++) {
    if (child.exitCode !== null) throw new Error(`sshd exited ${child.exitCode}: ${stderr()}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, "127.0.0.1");
      socket.once("connect", () => {
        socket.destroy();
        resolve(true);
      });
      socket.once("error", () => resolve(false));
    });
    if (open) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`sshd did not listen on ${port}: ${stderr()}`);
}
