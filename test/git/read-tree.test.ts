import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readTreeAtRevision } from "../../src/git/read-tree.js";

/** Reading a fleet repo at a revision, straight from Git objects, in a repository made with the git CLI. */
let dir: string;
let bare: string;
const git = (cwd: string, ...args: string[]) =>
  execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], {
    cwd,
    encoding: "utf8",
  }).trim();
const text = (tree: Map<string, Uint8Array> | ReadonlyMap<string, Uint8Array>, path: string) =>
  new TextDecoder().decode(tree.get(path));

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "gitfleet-read-"));
  git(dir, "init", "-q", "-b", "main");
  for (const version of ["1", "2", "3"]) {
    execFileSync("mkdir", ["-p", join(dir, "clusters")]);
    writeFileSync(join(dir, "clusters/a.yaml"), `version: ${version}\n`);
    git(dir, "add", "-A");
    git(dir, "commit", "-q", "-m", `v${version}`);
  }
  git(dir, "tag", "v2", "HEAD~1");
  bare = `${dir}-bare.git`;
  execFileSync("git", ["clone", "-q", "--bare", dir, bare]);
  git(dir, "remote", "add", "origin", bare);
  git(dir, "fetch", "-q", "origin");
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  rmSync(bare, { recursive: true, force: true });
});

describe("reading a revision's tree", () => {
  it.each([
    ["main", "3"],
    ["HEAD", "3"],
    ["HEAD~1", "2"],
    ["main~2", "1"],
    ["HEAD^^", "1"],
    ["v2", "2"],
    ["origin/main", "3"],
  ])("%s", async (revision, version) => {
    expect(text(await readTreeAtRevision(dir, revision), "clusters/a.yaml")).toBe(`version: ${version}\n`);
  });

  it("reads abbreviated and full commit ids, and bare repositories", async () => {
    const first = git(dir, "rev-parse", "main~2");
    expect(text(await readTreeAtRevision(dir, first.slice(0, 8)), "clusters/a.yaml")).toBe("version: 1\n");
    expect(text(await readTreeAtRevision(bare, first), "clusters/a.yaml")).toBe("version: 1\n");
  });

  it.each([
    ["no-such-branch", 'unknown revision "no-such-branch"'],
    ["main~5", 'revision "main~5" goes past the first commit'],
  ])("refuses %s", async (revision, message) => {
    await expect(readTreeAtRevision(dir, revision)).rejects.toThrow(message);
  });
});
