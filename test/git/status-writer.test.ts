import { execFileSync } from "node:child_process";
import fs, { existsSync, mkdirSync, readdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import git from "isomorphic-git";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { commitPayload, type StatusCommitResult, writeStatusCommit } from "../../src/git/status-writer.js";
import { compareAndSwapRef } from "../../src/git/update-ref.js";
import { gitIn, tempDir } from "../helpers/git-repo.js";

/** The status branch writer and the ref compare-and-swap against a real repository; the git CLI checks them. */
let dir: string;
let cleanup: () => void;
const gitCli = (...args: string[]) => gitIn(dir, ...args);
const BRANCH = "refs/heads/gitfleet/status";

beforeEach(() => {
  ({ dir, cleanup } = tempDir("gitfleet-status-"));
  gitCli("init", "-q", "-b", "main");
  gitCli("commit", "-q", "--allow-empty", "-m", "source");
});
afterEach(() => cleanup());

const FLEET = {
  "rendered/a/shop/apps.Deployment.web.yaml": "replicas: 6\n",
  "rendered/b/shop/apps.Deployment.web.yaml": "replicas: 6\n",
  "status/apps/web.yaml": "ready: true\n",
};

async function commit(changes: Record<string, string | null>, parent = tip()): Promise<StatusCommitResult> {
  const result = await writeStatusCommit({
    gitdir: join(dir, ".git"),
    parent,
    changes: new Map(Object.entries(changes)),
    message: "web: 12 replicas a=6 b=6",
    trailers: [
      ["Source-Commit", gitCli("rev-parse", "main")],
      ["Gitfleet-Controller", "test"],
    ],
    author: { name: "gitfleet", email: "gitfleet@example.com", timestamp: 1_700_000_000 },
  });
  if (result.status === "written")
    expect(await compareAndSwapRef(join(dir, ".git"), BRANCH, parent, result.oid)).toBe(true);
  return result;
}

function tip(): string | undefined {
  try {
    return gitCli("rev-parse", "--verify", "-q", "gitfleet/status");
  } catch {
    return undefined;
  }
}

describe("status commit writer", () => {
  it("commits the files with trailers, readable by git, and lists every object it added", async () => {
    const result = await commit(FLEET);
    expect(gitCli("show", "gitfleet/status:rendered/a/shop/apps.Deployment.web.yaml")).toBe("replicas: 6");
    expect(gitCli("log", "-1", "--format=%B", "gitfleet/status")).toBe(
      `web: 12 replicas a=6 b=6\n\nSource-Commit: ${gitCli("rev-parse", "main")}\nGitfleet-Controller: test`,
    );
    expect(gitCli("fsck", "--strict", "--no-dangling")).toBe("");
    // Objects: 2 distinct blobs, trees rendered/a/shop, rendered/a, rendered/b/shop, rendered/b, rendered, status/apps, status, root; the commit.
    const all = gitCli("rev-list", "--objects", "gitfleet/status")
      .split("\n")
      .map((l) => l.split(" ")[0]);
    expect(result.status === "written" && new Set(result.objects)).toEqual(new Set(all));
  });

  it("writes a large commit as one packfile that git verifies, and reads it back through isomorphic-git", async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 400; i++)
      files[`rendered/c${i % 20}/ns${i % 7}/apps.Deployment.app-${i}.yaml`] = `replicas: ${i}\n`;
    const result = await commit(files);
    expect(result.status === "written" && result.objects.length).toBeGreaterThan(500);
    const packs = readdirSync(join(dir, ".git/objects/pack")).filter((f) => f.endsWith(".pack"));
    expect(packs).toHaveLength(1);
    expect(gitCli("verify-pack", join(".git/objects/pack", packs[0] as string))).toBe("");
    expect(gitCli("fsck", "--strict", "--no-dangling")).toBe("");
    expect(gitCli("show", "gitfleet/status:rendered/c3/ns2/apps.Deployment.app-23.yaml")).toBe(
      "replicas: 23",
    );
    // A change on top reads the packed parent trees and writes a few loose objects.
    await commit({ "rendered/c3/ns2/apps.Deployment.app-23.yaml": "replicas: 24\n" });
    expect(gitCli("diff", "--name-only", "gitfleet/status~1", "gitfleet/status")).toBe(
      "rendered/c3/ns2/apps.Deployment.app-23.yaml",
    );
    expect(gitCli("fsck", "--strict", "--no-dangling")).toBe("");
  });

  it("makes no commit when the changes leave the tree as it is", async () => {
    await commit(FLEET);
    expect(await commit({ "status/apps/web.yaml": "ready: true\n" })).toMatchObject({ status: "unchanged" });
    expect(await commit({ "status/apps/gone.yaml": null })).toMatchObject({ status: "unchanged" });
    expect(gitCli("rev-list", "--count", "gitfleet/status")).toBe("1");
  });

  it("writes only the changed blob and the trees on its path; every other subtree is the parent's", async () => {
    await commit(FLEET);
    const before = gitCli("rev-parse", "gitfleet/status:rendered/b");
    const status = gitCli("rev-parse", "gitfleet/status:status");
    const result = await commit({ "rendered/a/shop/apps.Deployment.web.yaml": "replicas: 7\n" });
    expect(gitCli("rev-parse", "gitfleet/status:rendered/b")).toBe(before);
    expect(gitCli("rev-parse", "gitfleet/status:status")).toBe(status);
    expect(gitCli("diff", "--name-only", "gitfleet/status~1", "gitfleet/status")).toBe(
      "rendered/a/shop/apps.Deployment.web.yaml",
    );
    // blob, rendered/a/shop, rendered/a, rendered, root tree, commit.
    expect(result.status === "written" && result.objects.length).toBe(6);
  });

  it("removes files and the directories they leave empty, and keeps what gitfleet does not own", async () => {
    await commit(FLEET);
    gitCli("checkout", "-q", "gitfleet/status");
    writeFileSync(join(dir, "README.md"), "written by a person\n");
    gitCli("add", "README.md");
    gitCli("commit", "-q", "-m", "readme");
    gitCli("checkout", "-q", "main");
    await commit({ "rendered/b/shop/apps.Deployment.web.yaml": null });
    expect(gitCli("ls-tree", "-r", "--name-only", "gitfleet/status").split("\n")).toEqual([
      "README.md",
      "rendered/a/shop/apps.Deployment.web.yaml",
      "status/apps/web.yaml",
    ]);
    expect(gitCli("fsck", "--strict", "--no-dangling")).toBe("");
  });

  it.each([["README.md"], ["rendered"], ["rendered/../x.yaml"], ["status//x.yaml"]])(
    "refuses the path %s",
    async (path) => {
      await expect(commit({ [path]: "x" })).rejects.toThrow(
        `status path ${path} is outside rendered, status`,
      );
    },
  );
});

describe("ref compare-and-swap", () => {
  it("moves a ref only from the value the caller read, and creates it only when the caller saw none", async () => {
    const gitdir = join(dir, ".git");
    const main = gitCli("rev-parse", "main");
    gitCli("commit", "-q", "--allow-empty", "-m", "second");
    const second = gitCli("rev-parse", "main");
    expect(await compareAndSwapRef(gitdir, BRANCH, undefined, main)).toBe(true);
    expect(await compareAndSwapRef(gitdir, BRANCH, undefined, second)).toBe(false);
    expect(await compareAndSwapRef(gitdir, BRANCH, second, main)).toBe(false);
    expect(await compareAndSwapRef(gitdir, BRANCH, main, second)).toBe(true);
    expect(gitCli("rev-parse", "gitfleet/status")).toBe(second);
    // A ref git packed is read and replaced as well.
    gitCli("pack-refs", "--all");
    expect(await compareAndSwapRef(gitdir, BRANCH, second, main)).toBe(true);
    expect(gitCli("rev-parse", "gitfleet/status")).toBe(main);
    expect(existsSync(join(gitdir, `${BRANCH}.lock`))).toBe(false);
  });

  it("respects a lock another writer holds, and breaks a lock left by a dead process", async () => {
    const gitdir = join(dir, ".git");
    const main = gitCli("rev-parse", "main");
    const lock = join(gitdir, `${BRANCH}.lock`);
    mkdirSync(join(gitdir, "refs/heads/gitfleet"), { recursive: true });
    writeFileSync(lock, "");
    // Held for the whole wait: given up, the lock left to its holder.
    expect(await compareAndSwapRef(gitdir, BRANCH, undefined, main, { staleMs: 60_000, waitMs: 200 })).toBe(
      false,
    );
    expect(existsSync(lock)).toBe(true);
    // Released during the wait (its holder renamed it away): taken.
    setTimeout(() => rmSync(lock), 100);
    expect(await compareAndSwapRef(gitdir, BRANCH, undefined, main, { staleMs: 60_000, waitMs: 5_000 })).toBe(
      true,
    );
    gitCli("update-ref", "-d", BRANCH);
    mkdirSync(join(gitdir, "refs/heads/gitfleet"), { recursive: true });
    // Left by a process killed while holding it: broken once untouched for the stale time, even when
    // that comes during the wait (a restart right after the kill must not fail on it).
    writeFileSync(lock, "");
    expect(await compareAndSwapRef(gitdir, BRANCH, undefined, main, { staleMs: 300, waitMs: 5_000 })).toBe(
      true,
    );
    gitCli("update-ref", "-d", BRANCH);
    mkdirSync(join(gitdir, "refs/heads/gitfleet"), { recursive: true });
    writeFileSync(lock, "");
    const old = new Date(Date.now() - 120_000);
    utimesSync(lock, old, old);
    expect(await compareAndSwapRef(gitdir, BRANCH, undefined, main)).toBe(true);
    expect(execFileSync("git", ["rev-parse", "gitfleet/status"], { cwd: dir, encoding: "utf8" }).trim()).toBe(
      main,
    );
  });

  // A signature the same text always gets, standing in for ssh-keygen (test/controller/signing.test.ts
  // has git verify-commit check real ones).
  const fakeSign = async (payload: string) =>
    `-----BEGIN SSH SIGNATURE-----\n${Buffer.from(payload).toString("base64").slice(0, 60)}\r\n-----END SSH SIGNATURE-----\n`;

  it.each([
    { offset: 0, message: "web: 12 replicas" },
    { offset: -0, message: "web: 12 replicas" },
    { offset: -120, message: "\n\nleading blank lines" },
    { offset: 330, message: "carriage\r\nreturns\r\n\n\n" },
    { offset: -345, message: "trailing newlines\n\n" },
  ])(
    "signs and writes a commit as isomorphic-git's commit() does (offset $offset)",
    async ({ offset, message }) => {
      const gitdir = join(dir, ".git");
      const first = await commit(FLEET);
      if (first.status !== "written") throw new Error("no commit");
      const author = {
        name: "gitfleet",
        email: "gitfleet@example.com",
        timestamp: 1_700_000_000,
        timezoneOffset: offset,
      };
      const fields = { tree: first.tree, parent: [first.oid], author, committer: author, message };
      let signed = "";
      const expected = await git.commit({
        fs,
        gitdir,
        ...fields,
        noUpdateBranch: true,
        signingKey: "test",
        onSign: async ({ payload }) => {
          signed = payload;
          return { signature: await fakeSign(payload) };
        },
      });
      expect(commitPayload(fields)).toBe(signed);
      const result = await writeStatusCommit({
        gitdir,
        parent: first.oid,
        changes: new Map([["status/apps/web.yaml", "ready: false\n"]]),
        message,
        trailers: [["Gitfleet-Controller", "test"]],
        author,
        sign: fakeSign,
      });
      if (result.status !== "written") throw new Error("no commit");
      const written = (await git.readCommit({ fs, gitdir, oid: result.oid })).commit;
      const again = await git.commit({
        fs,
        gitdir,
        ...written,
        noUpdateBranch: true,
        signingKey: "test",
        onSign: async ({ payload }) => ({ signature: await fakeSign(payload) }),
      });
      expect(result.oid).toBe(again);
      expect(expected).toMatch(/^[0-9a-f]{40}$/);
      expect(gitCli("cat-file", "-p", result.oid)).toContain("gpgsig -----BEGIN SSH SIGNATURE-----");
      expect(gitCli("fsck", "--strict", "--no-dangling")).toBe("");
    },
  );
});
