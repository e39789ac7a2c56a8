import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { freePorts } from "./free-port.js";

const root = fileURLToPath(new URL("../..", import.meta.url));

/** A real Gitea on loopback with a throwaway SQLite database, an admin user and its API token. */
export interface Gitea {
  /** http://127.0.0.1:PORT */
  readonly url: string;
  readonly user: string;
  /** An access token of the admin user (repository, issue, user, organization and admin scopes). */
  readonly token: string;
  /** Gitea's own SSH server (git@127.0.0.1:PORT): its port, and its host key as a known_hosts line. */
  readonly ssh: { readonly port: number; readonly knownHosts: string };
  /** The REST API: `path` under /api/v1; throws on an answer that is not 2xx. */
  api<T>(method: string, path: string, body?: unknown): Promise<T>;
  close(): Promise<void>;
}

/** The pinned Gitea, built from Go modules by scripts/build-gitea.sh (cached after the first build). */
export function giteaBuild(): { binary: string; moduleDir: string } {
  const out = execFileSync("bash", [join(root, "scripts/build-gitea.sh")], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
    timeout: 30 * 60_000,
  });
  const [binary = "", moduleDir = ""] = out.trim().split("\n").slice(-2);
  return { binary, moduleDir };
}

const PASSWORD = "gitea-admin-password-for-tests";

/**
 * Starts Gitea in `dir`: an app.ini of its own (loopback, SQLite, no SSH server, no registration),
 * the database migrated, an admin user made with Gitea's CLI, the web server and Gitea's built-in SSH
 * server started (on loopback, as user git), and a token made through the API.
 */
export async function startGitea(dir: string): Promise<Gitea> {
  const { binary, moduleDir } = giteaBuild();
  for (const sub of ["data", "log", "repos", "custom"]) mkdirSync(join(dir, sub), { recursive: true });
  const [port, sshPort] = (await freePorts(2)) as [number, number];
  const url = `http://127.0.0.1:${port}`;
  const config = join(dir, "app.ini");
  writeFileSync(
    config,
    [
      // The tests may run as root (CI containers do); Gitea refuses that unless told.
      "I_AM_BEING_UNSAFE_RUNNING_AS_ROOT = true",
      `WORK_PATH = ${dir}`,
      "[server]",
      "HTTP_ADDR = 127.0.0.1",
      `HTTP_PORT = ${port}`,
      `ROOT_URL = ${url}/`,
      `STATIC_ROOT_PATH = ${moduleDir}`,
      "DISABLE_SSH = false",
      "START_SSH_SERVER = true",
      "BUILTIN_SSH_SERVER_USER = git",
      "SSH_DOMAIN = 127.0.0.1",
      "SSH_LISTEN_HOST = 127.0.0.1",
      `SSH_PORT = ${sshPort}`,
      `SSH_LISTEN_PORT = ${sshPort}`,
      "OFFLINE_MODE = true",
      "[database]",
      "DB_TYPE = sqlite3",
      `PATH = ${join(dir, "data", "gitea.db")}`,
      "[repository]",
      `ROOT = ${join(dir, "repos")}`,
      "[security]",
      "INSTALL_LOCK = true",
      "SECRET_KEY = gitea-secret-key-for-tests",
      "[service]",
      "DISABLE_REGISTRATION = true",
      "[log]",
      "MODE = file",
      `ROOT_PATH = ${join(dir, "log")}`,
      "LEVEL = Warn",
      "",
    ].join("\n"),
  );
  const env = { ...process.env, GITEA_WORK_DIR: dir, HOME: dir };
  execFileSync(binary, ["migrate", "-c", config], { env, stdio: "ignore" });
  const user = "fleetadmin";
  execFileSync(
    binary,
    ["admin", "user", "create", "-c", config, "--admin", "--username", user, "--password", PASSWORD].concat([
      "--email",
      "fleetadmin@example.com",
      "--must-change-password=false",
    ]),
    { env, stdio: "ignore" },
  );
  const child: ChildProcess = spawn(binary, ["web", "-c", config], { env, stdio: "ignore" });
  await waitForApi(url, child);
  const basic = `Basic ${Buffer.from(`${user}:${PASSWORD}`).toString("base64")}`;
  const made = await call<{ sha1: string }>(url, basic, "POST", `/users/${user}/tokens`, {
    name: "gitfleet-tests",
    scopes: ["write:repository", "write:issue", "write:user", "write:admin", "write:organization"],
  });
  const token = made.sha1;
  return {
    url,
    user,
    token,
    ssh: { port: sshPort, knownHosts: await hostKey(sshPort) },
    api: (method, path, body) => call(url, `token ${token}`, method, path, body),
    close: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}

async function call<T>(url: string, authorization: string, method: string, path: string, body?: unknown) {
  const response = await fetch(`${url}/api/v1${path}`, {
    method,
    headers: { authorization, "content-type": "application/json", accept: "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`Gitea ${method} ${path}: HTTP ${response.status} ${text.slice(0, 300)}`);
  return (text ? JSON.parse(text) : undefined) as T;
}

async function waitForApi(url: string, child: ChildProcess): Promise<void> {
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null) throw new Error(`gitea web exited ${child.exitCode}`);
    const up = await fetch(`${url}/api/v1/version`).then(
      (r) => r.ok,
      () => false,
    );
    if (up) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`gitea did not answer on ${url}`);
}

// The SSH server's host key as known_hosts names it, once it answers.
async function hostKey(port: number): Promise<string> {
  for (let i = 0; i < 200; i++) {
    try {
      const line = execFileSync("ssh-keyscan", ["-p", String(port), "-t", "ed25519,rsa", "127.0.0.1"], {
        encoding: "utf8",
        stdio: ["ignore", "pipe", "ignore"],
        timeout: 10_000,
      }).trim();
      if (line !== "") return `${line}\n`;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`Gitea's SSH server did not answer on port ${port}`);
}
