import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/** These tests run the real `gitfleet` command as a user would (npm test builds dist/ first). */
const root = fileURLToPath(new URL("../..", import.meta.url));

function gitfleet(...args: string[]) {
  const result = spawnSync(process.execPath, [join(root, "bin/gitfleet.js"), ...args], {
    cwd: root,
    encoding: "utf8",
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe("gitfleet validate", () => {
  it("accepts the example fleet with no problems and exits 0", () => {
    const { code, stdout } = gitfleet("validate", "example-repo");
    expect(stdout).toBe(
      "example-repo: valid: 7 clusters, 11 apps (52 resources), 10 placements, 4 overrides, 1 interpreter, 3 autoscalers, 1 migration, 2 teams in 79 files\n",
    );
    expect(code).toBe(0);
  });

  it("prints every problem compiler-style and exits 1 (golden)", async () => {
    const { code, stdout, stderr } = gitfleet("validate", "test/fixtures/broken-fleet");
    await expect(stdout).toMatchFileSnapshot("../golden/validate-broken-fleet.txt");
    expect(stderr).toBe("");
    expect(code).toBe(1);
  });

  it("prints machine-readable problems with --format json (golden)", async () => {
    const { code, stdout } = gitfleet("validate", "test/fixtures/broken-fleet", "--format", "json");
    const report = JSON.parse(stdout) as {
      valid: boolean;
      errors: number;
      problems: { file: string; line: number; column: number; code: string }[];
    };
    expect(report.valid).toBe(false);
    expect(report.errors).toBe(
      report.problems.filter((p) => (p as { severity?: string }).severity === "error").length,
    );
    await expect(stdout).toMatchFileSnapshot("../golden/validate-broken-fleet.json");
    expect(code).toBe(1);
  });

  it("fails on warnings only with --strict", () => {
    const dir = mkdtempSync(join(tmpdir(), "gitfleet-strict-"));
    try {
      writeFileSync(
        join(dir, "fleet.yaml"),
        "apiVersion: gitfleet.io/v1alpha1\nkind: Fleet\nmetadata:\n  name: f\n",
      );
      spawnSync("mkdir", ["-p", join(dir, "apps/web")]);
      writeFileSync(
        join(dir, "apps/web/cm.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\n",
      );
      const relaxed = gitfleet("validate", dir);
      expect(relaxed.stdout).toContain('warning: app "web" is selected by no Placement');
      expect(relaxed.code).toBe(0);
      expect(gitfleet("validate", dir, "--strict").code).toBe(1);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.each([
    ["an unknown command", ["deploy"], 64, "unknown command 'deploy'"],
    ["an unknown flag", ["validate", "--colour"], 64, "unknown option '--colour'"],
    ["a bad format", ["validate", "--format", "xml"], 64, "Allowed choices are text, json"],
    [
      "a missing directory",
      ["validate", "no/such/dir"],
      1,
      "gitfleet: cannot read fleet repo no/such/dir: ENOENT",
    ],
  ])("reports %s with exit code %i", (_name, args, exitCode, message) => {
    const { code, stderr } = gitfleet(...args);
    expect(stderr).toContain(message);
    expect(code).toBe(exitCode);
  });

  it("has --help for every command", () => {
    expect(gitfleet("--help").stdout).toContain("validate [options] [dir]");
    expect(gitfleet("validate", "--help").stdout).toContain("--format <format>");
    expect(gitfleet("--version").stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });
});
