import { createHash } from "node:crypto";
import nodeFs from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import git from "isomorphic-git";
import http from "isomorphic-git/http/node";
import { type GitCredentials, staticToken } from "./git-credentials.js";
import { gitFs as fs } from "./git-fs.js";
import { pushRef, redactUrl } from "./http-push.js";
import { checkSshUrl, isSshLocation, type SshAccess, sshFetch, sshPush } from "./ssh-transport.js";
import { compareAndSwapRef } from "./update-ref.js";

/** Where the fleet repo is and how to reach it. */
export interface RepoLocation {
  /** A local path (work tree or bare repository), an http(s) URL, or an SSH remote (ssh://… or user@host:path). */
  readonly location: string;
  /** For a URL: where the local cache repository lives. Default ~/.cache/gitfleet/repos/<hash of URL>. */
  readonly cacheDir?: string;
  /** For a URL: how to authenticate, asked before every fetch and push (see git-credentials.ts). */
  readonly credentials?: GitCredentials;
  /** For a URL: a fixed token for HTTP basic auth (from the environment), when `credentials` is not given. */
  readonly token?: string;
  readonly username?: string;
  /** For an SSH remote: the private key and known_hosts files (required; host keys are always checked). */
  readonly ssh?: SshAccess;
  /** For a URL: packfiles the cache repository may hold before it is started afresh. Default MAX_CACHE_PACKS. */
  readonly maxCachePacks?: number;
}

/** Told about every fetch and push, for metrics: "rejected" is a lost race on the branch. */
export type GitObserver = (operation: "fetch" | "push", result: "ok" | "error" | "rejected") => void;

/**
 * One fleet repository, opened once and kept for the life of the controller (isomorphic-git's cache
 * object holds the parsed pack indexes; opening it per reconcile would reload them). A local path is
 * used in place: branches are read and the status branch is written in it. A URL is fetched —
 * shallow, one branch at a time — into a cache repository, and the status branch is pushed back.
 */
export class FleetRepo {
  /** isomorphic-git's cache, shared by every read of this repository. */
  readonly cache: object = {};
  /** Told about fetches and pushes (the controller's metrics). */
  observer: GitObserver | undefined;

  private constructor(
    readonly gitdir: string,
    /** The remote URL, for a remote repository. */
    readonly url: string | undefined,
    /** How fetch and push authenticate (also a forge API's token, when no other is given). */
    readonly credentials: GitCredentials | undefined,
    private readonly maxCachePacks = MAX_CACHE_PACKS,
    /** For an SSH remote: fetch and push go through the git CLI (ssh-transport.ts). */
    private readonly ssh?: SshAccess,
  ) {}

  static async open(location: RepoLocation): Promise<FleetRepo> {
    if (/^https?:\/\//.test(location.location)) return FleetRepo.openRemote(location);
    if (isSshLocation(location.location)) return FleetRepo.openSsh(location);
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(location.location))
      throw new Error(
        `${location.location}: only local paths, http(s) URLs and SSH remotes are supported; clone it and pass the path`,
      );
    const path = resolve(location.location);
    const gitdir = nodeFs.existsSync(join(path, ".git")) ? join(path, ".git") : path;
    if (!nodeFs.existsSync(join(gitdir, "HEAD")) || !nodeFs.existsSync(join(gitdir, "objects")))
      throw new Error(`${location.location} is not a Git repository (no HEAD and objects/ in ${gitdir})`);
    return new FleetRepo(gitdir, undefined, undefined);
  }

  private static async openRemote(location: RepoLocation): Promise<FleetRepo> {
    const url = location.location;
    const { gitdir, maxPacks } = await openCache(location);

    const credentials =
      location.credentials ?? (location.token ? staticToken(location.token, location.username) : undefined);
    return new FleetRepo(gitdir, url, credentials, maxPacks);
  }

  private static async openSsh(location: RepoLocation): Promise<FleetRepo> {
    const url = checkSshUrl(location.location);
    if (!location.ssh)
      throw new Error(
        `${url}: an SSH remote needs a private key and a known_hosts file (--ssh-key-file, --ssh-known-hosts); host keys are always checked`,
      );
    const { gitdir, maxPacks } = await openCache(location);
    return new FleetRepo(gitdir, url, undefined, maxPacks, location.ssh);
  }

  /** For a remote: fetches the tips of the branches (shallow, one branch each); missing branches are skipped. */
  async fetch(branches: readonly string[]): Promise<void> {
    if (!this.url) return;
    try {
      await this.fetchBranches(branches);
      this.observer?.("fetch", "ok");
    } catch (error) {
      this.observer?.("fetch", "error");
      throw error;
    }
  }

  // The Authorization header, asked for at each use so that a rotated credential is taken up.
  private async headers(): Promise<Record<string, string>> {
    const authorization = await this.credentials?.authorization();
    return authorization ? { authorization } : {};
  }

  private async fetchBranches(branches: readonly string[]): Promise<void> {
    if (!this.url) return;
    if (this.ssh) return sshFetch(this.gitdir, this.url, this.ssh, branches);
    const headers = await this.headers();
    for (const branch of branches) {
      try {
        await git.fetch({
          fs,
          http,
          gitdir: this.gitdir,
          cache: this.cache,
          url: this.url,
          remote: "origin",
          ref: branch,
          remoteRef: branch,
          singleBranch: true,
          depth: 1,
          tags: false,
          headers,
        });
      } catch (error) {
        if (isMissingBranch(error)) {
          await git.deleteRef({ fs, gitdir: this.gitdir, ref: this.refOf(branch) }).catch(() => undefined);
          continue;
        }
        throw new Error(`fetching ${branch} from ${redactUrl(this.url)}: ${(error as Error).message}`);
      }
    }
  }

  /** The commit a branch points at (as last fetched, for a remote), or undefined when there is none. */
  async branchTip(branch: string): Promise<string | undefined> {
    return git.resolveRef({ fs, gitdir: this.gitdir, ref: this.refOf(branch) }).catch(() => undefined);
  }

  /** The tree of a commit. */
  async treeOf(commit: string): Promise<string> {
    return (await git.readCommit({ fs, gitdir: this.gitdir, cache: this.cache, oid: commit })).commit.tree;
  }

  /** A commit's message. */
  async commitMessage(commit: string): Promise<string> {
    return (await git.readCommit({ fs, gitdir: this.gitdir, cache: this.cache, oid: commit })).commit.message;
  }

  /** A commit's parents. */
  async parentsOf(commit: string): Promise<string[]> {
    return (await git.readCommit({ fs, gitdir: this.gitdir, cache: this.cache, oid: commit })).commit.parent;
  }

  /** A blob's bytes. */
  async readBlob(oid: string): Promise<Uint8Array> {
    return (await git.readBlob({ fs, gitdir: this.gitdir, cache: this.cache, oid })).blob;
  }

  /**
   * Moves a branch from `expected` to `commit` if nobody moved it since: a compare-and-swap on the
   * local ref, or a push to the remote naming the old value. `objects` are what the commit added.
   */
  async publish(
    branch: string,
    expected: string | undefined,
    commit: string,
    objects: readonly string[],
  ): Promise<boolean> {
    try {
      const moved = await this.publishOnce(branch, expected, commit, objects);
      this.observer?.("push", moved ? "ok" : "rejected");
      return moved;
    } catch (error) {
      this.observer?.("push", "error");
      throw error;
    }
  }

  private async publishOnce(
    branch: string,
    expected: string | undefined,
    commit: string,
    objects: readonly string[],
  ): Promise<boolean> {
    if (!this.url) return compareAndSwapRef(this.gitdir, `refs/heads/${branch}`, expected, commit);
    if (this.ssh) {
      const pushed = await sshPush(this.gitdir, this.url, this.ssh, `refs/heads/${branch}`, expected, commit);
      if (pushed.status === "rejected") return false;
      await git.writeRef({ fs, gitdir: this.gitdir, ref: this.refOf(branch), value: commit, force: true });
      return true;
    }
    const headers = await this.headers();
    const result = await pushRef({
      gitdir: this.gitdir,
      cache: this.cache,
      url: this.url,
      headers,
      ref: `refs/heads/${branch}`,
      expected,
      value: commit,
      objects,
    });
    if (result.status === "rejected") {
      // Lost a race, or refused for another reason (a protected branch, a hook): only a moved ref is a race.
      const refs = await git.listServerRefs({
        http,
        url: this.url,
        prefix: `refs/heads/${branch}`,
        headers,
      });
      const moved = refs.find((r) => r.ref === `refs/heads/${branch}`)?.oid !== expected;
      if (moved) return false;
      throw new Error(`${redactUrl(this.url)} refused to update ${branch}: ${result.reason}`);
    }
    await git.writeRef({ fs, gitdir: this.gitdir, ref: this.refOf(branch), value: commit, force: true });
    return true;
  }

  /**
   * Every fetch adds a packfile to the cache repository, and isomorphic-git looks through the pack
   * directory on every object it reads, so a controller that runs for weeks slows down. Past
   * MAX_CACHE_PACKS the cache is emptied and started afresh; returns true when it was, and the caller
   * must then rebuild what it knows from the remote (the next fetch brings the tips back).
   */
  async compactCache(): Promise<boolean> {
    if (!this.url || packCount(this.gitdir) <= this.maxCachePacks) return false;
    nodeFs.rmSync(this.gitdir, { recursive: true, force: true });
    await initCache(this.gitdir, this.url);
    for (const key of Object.keys(this.cache)) delete (this.cache as Record<string, unknown>)[key];
    return true;
  }

  /** A description safe for logs. */
  describe(): string {
    return this.url ? shownUrl(this.url) : this.gitdir;
  }

  private refOf(branch: string): string {
    return this.url ? `refs/remotes/origin/${branch}` : `refs/heads/${branch}`;
  }
}

/** Packfiles a remote's cache repository may hold before it is started afresh. */
export const MAX_CACHE_PACKS = 500;

// A remote's URL as logs and the cache's name may show it: an http(s) URL without credentials; an
// SSH remote as it is (it names a user, never a secret, and scp-style ones are no URL to parse).
function shownUrl(url: string): string {
  return isSshLocation(url) ? url : redactUrl(url);
}

function packCount(gitdir: string): number {
  try {
    return nodeFs.readdirSync(join(gitdir, "objects", "pack")).filter((name) => name.endsWith(".pack"))
      .length;
  } catch {
    return 0;
  }
}

// The cache repository of a remote (~/.cache/gitfleet/repos/<hash of the URL>.git unless given); the
// cache holds nothing the remote does not, so one that grew many packs is started afresh.
async function openCache(location: RepoLocation): Promise<{ gitdir: string; maxPacks: number }> {
  const url = location.location;
  const root =
    location.cacheDir ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "gitfleet", "repos");
  const key = createHash("sha256").update(shownUrl(url)).digest("hex").slice(0, 16);
  const gitdir = join(root, `${key}.git`);
  const maxPacks = location.maxCachePacks ?? MAX_CACHE_PACKS;
  if (packCount(gitdir) > maxPacks / 10) nodeFs.rmSync(gitdir, { recursive: true, force: true });
  await initCache(gitdir, url);
  return { gitdir, maxPacks };
}

async function initCache(gitdir: string, url: string): Promise<void> {
  if (!nodeFs.existsSync(join(gitdir, "HEAD"))) {
    nodeFs.mkdirSync(gitdir, { recursive: true });
    await git.init({ fs, gitdir, bare: true, defaultBranch: "main" });
  }
  await git.setConfig({ fs, gitdir, path: "remote.origin.url", value: shownUrl(url) });
  await git.setConfig({
    fs,
    gitdir,
    path: "remote.origin.fetch",
    value: "+refs/heads/*:refs/remotes/origin/*",
  });
}

function isMissingBranch(error: unknown): boolean {
  return (error as { code?: string }).code === "NotFoundError";
}
