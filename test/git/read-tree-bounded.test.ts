import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempDir } from "../helpers/git-repo.js";

/**
 * Reading a tree of many directories of loose objects within a low limit of open files (a fleet of
 * 50,000 apps has 50,000 directories under apps/): every directory is read, none at once. The read runs
 * in a child process whose limit is set by `ulimit -n`.
 */
const READ_TREE = fileURLToPath(new URL("../../dist/src/git/read-tree.js", import.meta.url));
const DIRECTORIES = 3000;
let repo: { dir: string; cleanup: () => void };

beforeAll(() => {
  repo = tempDir("gitfleet-read-tree-");
  for (let i = 0; i < DIRECTORIES; i++) {
    const dir = join(repo.dir, "apps", `app-${String(i).padStart(5, "0")}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "app.yaml"), `name: app-${i}\n`);
  }
  const git = (...args: string[]) => execFileSync("git", args, { cwd: repo.dir, stdio: "pipe" });
  git("init", "-q", "-b", "main");
  git("add", ".");
  git("-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "apps");
  // Loose objects only: one file per tree and blob.
  expect(execFileSync("git", ["count-objects"], { cwd: repo.dir, encoding: "utf8" })).toMatch(
    /^6\d{3} objects/,
  );
}, 60_000);
afterAll(() => repo.cleanup());

describe("reading a tree of loose objects", () => {
  it("reads every file of 3,000 directories with 256 files open at most", () => {
    const script = `const { readTreeAtRevision } = await import(${JSON.stringify(READ_TREE)}); const tree = await readTreeAtRevision(${JSON.stringify(repo.dir)}, "main"); console.log(tree.size, new TextDecoder().decode(tree.get("apps/app-02999/app.yaml")).trim());`;
    const result = spawnSync(
      "bash",
      ["-c", `ulimit -n 256 && exec "${process.execPath}" --input-type=module -e '${script}'`],
      {
        encoding: "utf8",
      },
    );
    expect(result.stderr).toBe("");
    expect(result.stdout.trim()).toBe(`${DIRECTORIES} name: app-2999`);
  });
});
