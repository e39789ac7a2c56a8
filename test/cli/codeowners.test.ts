import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

// `gitfleet codeowners` writes the CODEOWNERS file the teams give; the example's is kept current.

const root = fileURLToPath(new URL("../..", import.meta.url));
const gitfleet = (...args: string[]) =>
  spawnSync(process.execPath, [join(root, "bin/gitfleet.js"), "codeowners", ...args], { encoding: "utf8" });
const EXAMPLE = join(root, "example-repo");
const CURRENT = join(EXAMPLE, ".github/CODEOWNERS");

describe("gitfleet codeowners", () => {
  it("keeps the example fleet's CODEOWNERS current", () => {
    const checked = gitfleet(EXAMPLE, "--check", CURRENT);
    expect(checked.stderr).toBe("");
    expect(checked.status).toBe(0);
    const printed = gitfleet(EXAMPLE).stdout;
    expect(printed).toBe(readFileSync(CURRENT, "utf8"));
    // The platform owns everything first; each team's paths follow, so they take precedence.
    const lines = printed.split("\n").filter((l) => l && !l.startsWith("#"));
    expect(lines[0]).toBe("* @example-shop/platform");
    expect(lines).toContain("/apps/arena/** @example-shop/games @example-shop/sre-oncall");
  });

  it("fails the check, naming the command to run, when a team changes", () => {
    const dir = mkdtempSync(join(tmpdir(), "gitfleet-codeowners-"));
    try {
      cpSync(EXAMPLE, dir, { recursive: true });
      const team = join(dir, "teams/games.yaml");
      writeFileSync(
        team,
        readFileSync(team, "utf8").replace("placements/arena.yaml", "placements/arena*.yaml"),
      );
      const checked = gitfleet(dir, "--check", join(dir, ".github/CODEOWNERS"));
      expect(checked.status).toBe(1);
      expect(checked.stderr).toContain("differs from what the teams give: run gitfleet codeowners --output");
      expect(gitfleet(dir, "--output", join(dir, ".github/CODEOWNERS")).status).toBe(0);
      expect(gitfleet(dir, "--check", join(dir, ".github/CODEOWNERS")).status).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("refuses an invalid fleet with its problems", () => {
    const dir = mkdtempSync(join(tmpdir(), "gitfleet-codeowners-"));
    try {
      cpSync(EXAMPLE, dir, { recursive: true });
      writeFileSync(
        join(dir, "teams/games.yaml"),
        readFileSync(join(dir, "teams/games.yaml"), "utf8").replace(
          "namespaces: [games]",
          "namespaces: [arena]",
        ),
      );
      const result = gitfleet(dir);
      expect(result.status).toBe(1);
      expect(result.stderr).toContain(
        "namespace games is outside team games's namespaces (arena; teams/games.yaml) [OUTSIDE_TEAM_BOUNDS]",
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
