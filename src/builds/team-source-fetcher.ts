import { createHash } from "node:crypto";
import fs, { existsSync, mkdirSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import isomorphicGit from "isomorphic-git";
import type { FetchedSource, TeamSourcePin } from "../load/team-sources.js";
import { sourceKey } from "../load/team-sources.js";
import type { TeamSource } from "../model/team-types.js";
import { readBoundedFile } from "../util/bounded-file.js";
import { ownEnvironment, type ProgramResult, runProgram } from "../util/run-program.js";

/** One repository location teams may pin, as the operator allowed it, and the token file for it. */
export interface AllowedTeamSource {
  /** A repository URL, or a prefix ending in `/` (every repository under it). */
  readonly prefix: string;
  /** A file holding a token for HTTP basic auth (read at each fetch, so a rotated token is used). */
  readonly tokenFile?: string;
}

/** A repository's files at a pinned commit: at most this many, each at most MAX_FILE_BYTES. */
export const MAX_SOURCE_FILES = 10_000;
/** The largest fleet repo file (the loader refuses larger ones anyway). */
export const MAX_FILE_BYTES = 8 * 2 ** 20;
/** All of a pin's files together. */
export const MAX_SOURCE_BYTES = 256 * 2 ** 20;
const GIT_TIMEOUT_MS = 120_000;
const GIT_MEMORY_BYTES = 2 ** 31;

/**
 * Parses the operator's --team-source entries: `<URL or prefix/>` or `<URL or prefix/>=<token file>`,
 * http(s) only, without credentials, query or fragment in the URL. Throws naming the entry.
 */
export function parseTeamSources(entries: readonly string[]): AllowedTeamSource[] {
  return entries.map((entry) => {
    const at = entry.indexOf("=");
    const prefix = at < 0 ? entry : entry.slice(0, at);
    const tokenFile = at < 0 ? undefined : entry.slice(at + 1);
    let url: URL;
    try {
      url = new URL(prefix);
    } catch {
      throw new Error(`--team-source ${prefix}: not a URL`);
    }
    if (!/^https?:$/.test(url.protocol) || url.username || url.password || url.search || url.hash)
      throw new Error(`--team-source ${prefix}: an http(s) URL without credentials, query or fragment`);
    if (tokenFile === "") throw new Error(`--team-source ${prefix}=: the token file is empty`);
    return { prefix, ...(tokenFile ? { tokenFile } : {}) };
  });
}

/**
 * Fetches the commits Teams pin from their own repositories — only from URLs the operator allows,
 * with the token the operator gave for each — into a cache repository per URL (`git fetch --depth 1`
 * of the commit itself; a commit already there is not fetched again), then reads the pin's files:
 * regular files only (no symlinks, no submodules), within MAX_SOURCE_FILES, MAX_FILE_BYTES each and
 * MAX_SOURCE_BYTES together. git runs bounded (util/run-program.ts), with no configuration but
 * gitfleet's, no prompt, no redirect, and the token in its environment, never its arguments. What a
 * server says is never repeated (only git's own words).
 */
export class TeamSourceFetcher {
  private readonly fetched = new Map<string, Promise<FetchedSource>>();

  constructor(
    private readonly allowed: readonly AllowedTeamSource[],
    private readonly cacheDir: string = join(homedir(), ".cache", "gitfleet", "team-sources"),
  ) {}

  /** Each pin's files (by sourceKey), or why not; a commit fetched once is kept for the process. */
  async fetchAll(pins: readonly TeamSourcePin[]): Promise<Map<string, FetchedSource>> {
    const results = new Map<string, FetchedSource>();
    for (const pin of pins) {
      const key = sourceKey(pin.source);
      let result = this.fetched.get(key);
      if (!result) {
        result = this.fetchOne(pin.source);
        this.fetched.set(key, result);
      }
      const answer = await result;
      // A failure is tried again at the next load (a server that was down, a token rotated late).
      if ("error" in answer) this.fetched.delete(key);
      results.set(key, answer);
    }
    return results;
  }

  private async fetchOne(source: TeamSource): Promise<FetchedSource> {
    const allowed = this.allowed.find((entry) => allows(entry.prefix, source.url));
    if (!allowed)
      return { error: `${source.url} is not among the team sources the operator allows (--team-source)` };
    const gitdir = join(this.cacheDir, createHash("sha256").update(source.url).digest("hex").slice(0, 24));
    if (!existsSync(join(gitdir, "HEAD"))) {
      mkdirSync(gitdir, { recursive: true });
      const made = await git(["init", "--quiet", "--bare", gitdir], gitdir, {});
      if (made.code !== 0)
        return { error: `the cache repository for ${source.url} could not be made`, transient: true };
    }
    if (!(await hasCommit(gitdir, source.commit))) {
      const auth = allowed.tokenFile ? await authorization(allowed.tokenFile) : undefined;
      if (auth && "error" in auth) return { ...auth, transient: true };
      const fetched = await fetchCommit(gitdir, source, auth?.header);
      if (fetched.code !== 0 || !(await hasCommit(gitdir, source.commit)))
        return {
          error: `fetching ${source.commit} from ${source.url}: ${gitError(fetched)}`,
          transient: true,
        };
    }
    return readFiles(gitdir, source);
  }
}

// Whether an allowed entry covers a URL: the URL itself, or one under a prefix that ends in "/".
function allows(prefix: string, url: string): boolean {
  return prefix.endsWith("/") ? url.startsWith(prefix) : url === prefix || url === `${prefix}.git`;
}

async function authorization(file: string): Promise<{ header: string } | { error: string }> {
  const read = await readBoundedFile(file, 64 * 1024);
  if (!read.ok) return { error: `the token file for this team source ${read.reason}` };
  const token = new TextDecoder().decode(read.bytes).trim();
  if (token === "" || /[\r\n]/.test(token))
    return { error: "the token file for this team source holds no token" };
  return { header: `Basic ${Buffer.from(`x-access-token:${token}`).toString("base64")}` };
}

// `git fetch --depth 1` of the commit itself; once more after a moment when another fetch into the
// same cache (a plan's worker) held its lock.
async function fetchCommit(
  gitdir: string,
  source: TeamSource,
  header: string | undefined,
): Promise<ProgramResult> {
  const args = [
    "fetch",
    "--quiet",
    "--no-tags",
    "--no-write-fetch-head",
    "--depth=1",
    "--",
    source.url,
    source.commit,
  ];
  const settings = header ? { "http.extraHeader": `Authorization: ${header}` } : {};
  const first = await git(args, gitdir, settings);
  if (first.code === 0 || !/\.lock\b/.test(first.stderr)) return first;
  await new Promise((resolve) => setTimeout(resolve, 500));
  return git(args, gitdir, settings);
}

async function hasCommit(gitdir: string, commit: string): Promise<boolean> {
  return (await git(["cat-file", "-e", `${commit}^{commit}`], gitdir, {})).code === 0;
}

// The pin's regular files under its path, keyed relative to it, within the bounds.
async function readFiles(gitdir: string, source: TeamSource): Promise<FetchedSource> {
  const base = source.path ? `${source.path}/` : "";
  const listed = await git(
    ["ls-tree", "-r", "-l", "-z", "--full-tree", source.commit, ...(base ? ["--", base] : [])],
    gitdir,
    {},
  );
  if (listed.code !== 0) return { error: `reading ${source.commit} of ${source.url}: ${gitError(listed)}` };
  const blobs = regularFiles(listed.stdout);
  if (blobs.length > MAX_SOURCE_FILES)
    return {
      error: `${source.url} at ${source.commit} has more than ${MAX_SOURCE_FILES} files under ${base || "its root"}`,
    };
  const large = blobs.find((blob) => blob.size > MAX_FILE_BYTES);
  if (large)
    return { error: `${large.path} in ${source.url} is larger than ${MAX_FILE_BYTES / 2 ** 20} MiB` };
  if (blobs.reduce((sum, blob) => sum + blob.size, 0) > MAX_SOURCE_BYTES)
    return { error: `${source.url} at ${source.commit} holds more than ${MAX_SOURCE_BYTES / 2 ** 20} MiB` };
  const cache = {};
  const files = new Map<string, Uint8Array>();
  for (const { oid, path } of blobs) {
    const blob = await isomorphicGit.readBlob({ fs, gitdir, oid, cache }).catch(() => undefined);
    if (!blob) return { error: `reading ${path} of ${source.url}: the object ${oid} is missing` };
    files.set(path.slice(base.length), blob.blob);
  }
  return { files };
}

// The regular files of `git ls-tree -r -l -z` (symlinks, 120000, and submodules, 160000, bring nothing).
function regularFiles(
  listing: string,
): { readonly oid: string; readonly size: number; readonly path: string }[] {
  return listing
    .split("\0")
    .map((entry) => /^(100644|100755) blob ([0-9a-f]{40}) +(\d+)\t(.+)$/s.exec(entry))
    .filter((match): match is RegExpExecArray => match !== null)
    .map(([, , oid = "", size = "0", path = ""]) => ({ oid, size: Number(size), path }));
}

// git with gitfleet's settings only: no system or user configuration, no prompt, no redirect, no
// protocol but http(s), the given settings through the environment (never the arguments).
async function git(
  args: readonly string[],
  gitdir: string,
  settings: Readonly<Record<string, string>>,
): Promise<ProgramResult> {
  const all: Record<string, string> = {
    "protocol.allow": "never",
    "protocol.https.allow": "always",
    "protocol.http.allow": "always",
    "protocol.version": "2",
    "http.followRedirects": "false",
    // A tree with `..`, `.git` or malformed entries is refused as it arrives.
    "fetch.fsckObjects": "true",
    "gc.auto": "0",
    "maintenance.auto": "false",
    ...settings,
  };
  const env = ownEnvironment();
  env.GIT_CONFIG_NOSYSTEM = "1";
  env.GIT_CONFIG_GLOBAL = "/dev/null";
  env.GIT_TERMINAL_PROMPT = "0";
  env.GIT_ASKPASS = "";
  env.SSH_ASKPASS = "";
  env.GIT_CONFIG_COUNT = String(Object.keys(all).length);
  Object.entries(all).forEach(([key, value], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = key;
    env[`GIT_CONFIG_VALUE_${i}`] = value;
  });
  const full = args[0] === "init" ? args : ["--git-dir", gitdir, ...args];
  return runProgram("git", full, "", {
    env,
    timeoutMs: GIT_TIMEOUT_MS,
    maxOutput: 16 * 2 ** 20,
    memoryBytes: GIT_MEMORY_BYTES,
  });
}

// git's own last words, without what the server said (lines it prefixes "remote:").
function gitError(run: ProgramResult): string {
  if (run.timedOut) return "timed out";
  const lines = run.stderr
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("remote:"));
  return (lines.slice(-2).join("; ") || `git exited ${run.code}`).slice(0, 300);
}
