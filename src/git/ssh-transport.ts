import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readConfiguredFile } from "../util/bounded-file.js";
import { type ProgramResult, runProgram } from "../util/run-program.js";
import type { PushResult } from "./http-push.js";

/**
 * Fetch and push over SSH with the git CLI (isomorphic-git has no SSH transport; docs/adr/0015):
 * only the network part runs in git — the objects land in the same cache repository isomorphic-git
 * reads — with the deploy key and known_hosts the operator gave, host key checking always on, no
 * user or system Git configuration, and no transport but SSH.
 */

/** An SSH remote's credentials: a private key (a deploy key) and the known_hosts naming its host key. */
export interface SshAccess {
  /** The private key file, read at each fetch and push (a rotated Secret is used next time). */
  readonly keyFile: string;
  /** known_hosts lines for the remote's host; a host not in it is refused. */
  readonly knownHostsFile: string;
}

/** Whether a repository location is an SSH remote: `ssh://…` or scp-style `user@host:path`. */
export function isSshLocation(location: string): boolean {
  return /^ssh:\/\//i.test(location) || /^[^/:@\s]+@[^/:\s]+:/.test(location);
}

/**
 * The URL when it is one gitfleet reaches over SSH, else an error saying what is wrong: a host or
 * user starting with "-" (which ssh would take as an option), spaces or control characters, or no
 * repository path.
 */
export function checkSshUrl(url: string): string {
  const scp = /^([A-Za-z0-9._-]+)@([A-Za-z0-9.-]+):([^\s]+)$/.exec(url);
  const full =
    /^ssh:\/\/(?:([A-Za-z0-9._-]+)@)?([A-Za-z0-9.-]+|\[[0-9a-fA-F:]+\])(?::(\d{1,5}))?\/([^\s]+)$/.exec(url);
  const parts = scp
    ? { user: scp[1], host: scp[2], path: scp[3] }
    : full && { user: full[1], host: full[2], path: full[4] };
  if (!parts?.host || !parts.path)
    throw new Error(
      `${url}: not an SSH remote gitfleet can use (ssh://[user@]host[:port]/path or user@host:path)`,
    );
  if (parts.host.startsWith("-") || parts.user?.startsWith("-") || parts.path.startsWith("-"))
    throw new Error(`${url}: a host, user or path may not start with "-"`);
  return url;
}

/** How long one git fetch or push over SSH may take. */
const GIT_TIMEOUT_MS = 120_000;
/** The memory one git run may allocate: index-pack of a shallow fetch, with room. */
const GIT_MEMORY_BYTES = 2 * 2 ** 30;
/** Output of git kept, at most. */
const MAX_OUTPUT = 1024 * 1024;
/** Bytes a private key file may hold. */
const MAX_KEY_FILE = 64 * 1024;
/** Bytes a known_hosts file may hold. */
const MAX_KNOWN_HOSTS = 1024 * 1024;

/**
 * Fetches the tips of `branches` (shallow, no tags) into `refs/remotes/origin/<branch>` of the cache
 * repository at `gitdir`; a branch the remote does not have loses its remote-tracking ref.
 */
export async function sshFetch(
  gitdir: string,
  url: string,
  access: SshAccess,
  branches: readonly string[],
): Promise<void> {
  await withSsh(access, async (env) => {
    const present = await remoteTips(
      gitdir,
      url,
      branches.map((b) => `refs/heads/${b}`),
      env,
    );
    const wanted = branches.filter((b) => present.has(`refs/heads/${b}`));
    const missing = branches.filter((b) => !present.has(`refs/heads/${b}`));
    if (wanted.length > 0) {
      const refspecs = wanted.map((b) => `+refs/heads/${b}:refs/remotes/origin/${b}`);
      const fetched = await runGit(
        ["fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--depth=1", "--", url, ...refspecs],
        gitdir,
        env,
      );
      if (fetched.code !== 0)
        throw new Error(`fetching ${wanted.join(", ")} from ${url}: ${gitError(fetched)}`);
    }
    for (const branch of missing)
      await runGit(["update-ref", "-d", `refs/remotes/origin/${branch}`], gitdir, env);
  });
}

/**
 * Moves `ref` on the remote from `expected` to `value` (a compare-and-swap: --force-with-lease with
 * the expected value, so a ref another writer moved is refused, never overwritten). A refusal for
 * another reason (a hook, a protected branch) is an error.
 */
export async function sshPush(
  gitdir: string,
  url: string,
  access: SshAccess,
  ref: string,
  expected: string | undefined,
  value: string,
): Promise<PushResult> {
  return withSsh(access, async (env) => {
    const pushed = await runGit(
      ["push", "--porcelain", `--force-with-lease=${ref}:${expected ?? ""}`, "--", url, `${value}:${ref}`],
      gitdir,
      env,
    );
    const line = pushed.stdout.split("\n").find((l) => l.includes(`:${ref}\t`));
    if (pushed.code === 0 && line && !line.startsWith("!")) return { status: "pushed" } as const;
    const summary = line?.split("\t")[2] ?? "";
    // The lease named a tip another writer has moved: a lost race, as over HTTPS.
    if (summary.includes("stale info")) return { status: "rejected", reason: summary } as const;
    if (line?.startsWith("!")) {
      // Moved between the lease's check and the server's update ("failed to update ref"): a lost race
      // too. Refused with the ref where it was (a hook, a protected branch): an error.
      if ((await remoteTips(gitdir, url, [ref], env)).get(ref) !== expected)
        return { status: "rejected", reason: summary } as const;
      throw new Error(`${url} refused to update ${ref}: ${summary}`);
    }
    throw new Error(`pushing ${ref} to ${url}: ${gitError(pushed)}`);
  });
}

// Where each of `refs` points on the remote now; a ref it does not have is not in the map.
async function remoteTips(
  gitdir: string,
  url: string,
  refs: readonly string[],
  env: NodeJS.ProcessEnv,
): Promise<Map<string, string>> {
  const listed = await runGit(["ls-remote", "--", url, ...refs], gitdir, env);
  if (listed.code !== 0) throw new Error(`listing ${refs.join(", ")} of ${url}: ${gitError(listed)}`);
  const tips = new Map<string, string>();
  for (const line of listed.stdout.split("\n")) {
    const [oid, ref] = line.split("\t");
    if (oid && ref && refs.includes(ref)) tips.set(ref, oid);
  }
  return tips;
}

// The key is copied (mode 0600, as ssh demands; a mounted Secret's file is often group-readable)
// with the known_hosts into a private directory for one operation, and removed after it.
async function withSsh<T>(access: SshAccess, run: (env: NodeJS.ProcessEnv) => Promise<T>): Promise<T> {
  const key = await readConfiguredFile(access.keyFile, `the SSH key file ${access.keyFile}`, MAX_KEY_FILE);
  if (!Buffer.from(key).toString("latin1").includes("PRIVATE KEY"))
    throw new Error(`the SSH key file ${access.keyFile} holds no private key`);
  const knownHosts = await readConfiguredFile(
    access.knownHostsFile,
    `the known_hosts file ${access.knownHostsFile}`,
    MAX_KNOWN_HOSTS,
  );
  const dir = await mkdtemp(join(tmpdir(), "gitfleet-ssh-"));
  if (dir.includes("'")) throw new Error(`the temporary directory ${dir} cannot be quoted for ssh`);
  try {
    await writeFile(join(dir, "key"), key, { mode: 0o600 });
    await writeFile(join(dir, "known_hosts"), knownHosts, { mode: 0o600 });
    const ssh = [
      "ssh",
      "-F /dev/null",
      `-i '${dir}/key'`,
      "-o IdentitiesOnly=yes",
      `-o UserKnownHostsFile='${dir}/known_hosts'`,
      "-o GlobalKnownHostsFile=/dev/null",
      "-o StrictHostKeyChecking=yes",
      "-o BatchMode=yes",
      "-o ConnectTimeout=30",
    ].join(" ");
    // On an object without a prototype: nothing a polluted Object.prototype holds reaches git.
    const env: NodeJS.ProcessEnv = Object.assign(Object.create(null), {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: dir,
      LC_ALL: "C",
      GIT_SSH_COMMAND: ssh,
      GIT_TERMINAL_PROMPT: "0",
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_CONFIG_GLOBAL: "/dev/null",
      GIT_PROTOCOL_FROM_USER: "0",
    });
    return await run(env);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

// git with SSH the only protocol, and no garbage collection or maintenance behind isomorphic-git's
// back (it reads the same packs); bounded in time and output by runProgram.
async function runGit(
  args: readonly string[],
  gitdir: string,
  env: NodeJS.ProcessEnv,
): Promise<ProgramResult> {
  const settings = [
    "protocol.allow=never",
    "protocol.ssh.allow=always",
    "gc.auto=0",
    "maintenance.auto=false",
  ];
  const full = [...settings.flatMap((setting) => ["-c", setting]), "--git-dir", gitdir, ...args];
  const result = await runProgram("git", full, "", {
    env,
    timeoutMs: GIT_TIMEOUT_MS,
    maxOutput: MAX_OUTPUT,
    memoryBytes: GIT_MEMORY_BYTES,
  });
  if (result.timedOut) return { ...result, stderr: "timed out" };
  if (result.limit) return { ...result, stderr: `ran past its ${boundName(result.limit)}` };
  return result;
}

/** What a bound a child hit is called in messages. */
function boundName(limit: NonNullable<ProgramResult["limit"]>): string {
  if (limit === "memory") return `memory bound (${GIT_MEMORY_BYTES / 2 ** 20} MiB)`;
  if (limit === "cpu") return `CPU-time bound (${GIT_TIMEOUT_MS / 1000} s)`;
  return "bounds (it was killed)";
}

// git's own last lines (ssh's "Host key verification failed." among them), bounded.
function gitError(run: ProgramResult): string {
  const lines = run.stderr
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);
  // git's closing "Could not read from remote repository" lines say less than what came before them.
  const said = lines.filter(
    (l) => !/^fatal: Could not read from remote|^Please make sure|^and the repository/.test(l),
  );
  return ((said.length > 0 ? said : lines).slice(-3).join("; ") || `git exited ${run.code}`).slice(0, 500);
}
