import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";

// `-o yaml` says what `-o json` says, as YAML, for every command that prints a structure a machine
// reads (validate, plan); `-o` is `--format`.

const root = fileURLToPath(new URL("../..", import.meta.url));
let repo: string;

beforeAll(() => {
  repo = mkdtempSync(join(tmpdir(), "gitfleet-formats-"));
  cpSync(join(root, "example-repo"), repo, { recursive: true });
  const git = (...args: string[]) =>
    execFileSync("git", ["-c", "user.name=T", "-c", "user.email=t@example.com", ...args], { cwd: repo });
  git("init", "-q", "-b", "main");
  git("add", "-A");
  git("commit", "-q", "-m", "fleet");
  git("checkout", "-q", "-b", "more");
  const web = join(repo, "apps/web/deployment.yaml");
  writeFileSync(web, readFileSync(web, "utf8").replace(/replicas: \d+/, "replicas: 7"));
  git("commit", "-q", "-am", "web: 7");
  git("checkout", "-q", "main");
});
afterAll(() => rmSync(repo, { recursive: true, force: true }));

function gitfleet(...args: string[]) {
  const run = spawnSync(process.execPath, [join(root, "bin/gitfleet.js"), ...args], { encoding: "utf8" });
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

describe("machine-readable output", () => {
  it.each([
    ["validate", () => ["validate", repo]],
    ["plan", () => ["plan", "--repo", repo, "--base", "main", "--head", "more"]],
  ])("%s -o yaml is -o json as YAML", (_, args) => {
    const json = gitfleet(...args(), "-o", "json");
    const yaml = gitfleet(...args(), "--format", "yaml");
    expect(yaml.stderr).toBe(json.stderr);
    expect(yaml.code).toBe(json.code);
    expect(parse(yaml.stdout)).toEqual(JSON.parse(json.stdout));
    expect(Object.keys(JSON.parse(json.stdout)).length).toBeGreaterThan(0);
  });
});
