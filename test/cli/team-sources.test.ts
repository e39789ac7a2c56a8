import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fileTreeFromText } from "../../src/model/file-tree.js";
import { gitfleetAsync } from "../helpers/cli.js";
import { type GitHttpServer, startGitHttpServer } from "../helpers/git-http-server.js";
import { commitTree, createRepo, gitIn, tempDir } from "../helpers/git-repo.js";
import { until } from "../helpers/member.js";
import { MINIMAL_FLEET } from "../helpers/minimal-fleet.js";
import {
  dashboardFleet,
  getJson,
  type RunningController,
  runController,
} from "../helpers/running-controller.js";

// A team keeps its apps in its own repository, pinned by commit from the fleet repo's Team file:
// `gitfleet validate` and `gitfleet run` fetch it (from a real Git server, with the operator's token)
// only with --team-source; a member then runs what the pinned commit holds, and a pull request that
// bumps the pin is what changes it.

const TOKEN = "games-repo-token-for-tests";
const { dir, cleanup } = tempDir("gitfleet-team-sources-cli-");
let server: GitHttpServer;
let commits: string[];
let tokenFile: string;
let gamesWork: string;

const arena = (mode: string) => ({
  "fleet/apps/arena/app.yaml":
    "apiVersion: gitfleet.io/v1alpha1\nkind: App\nmetadata:\n  name: arena\nspec:\n  namespace: games\n",
  "fleet/apps/arena/config.yaml": `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: arena\ndata:\n  MODE: ${mode}\n`,
});
const teamFile = (url: string, commit: string) => `apiVersion: gitfleet.io/v1alpha1
kind: Team
metadata:
  name: games
spec:
  paths: [apps/arena/**]
  owners: ["@example/games"]
  namespaces: [games]
  source:
    url: ${url}
    commit: ${commit}
    path: fleet
`;
const PLACEMENT =
  "apiVersion: gitfleet.io/v1alpha1\nkind: Placement\nmetadata:\n  name: arena\nspec:\n  apps: [arena]\n";

beforeAll(async () => {
  const games = join(dir, "games");
  mkdirSync(games);
  createRepo(games, fileTreeFromText(arena("casual")));
  commits = [gitIn(games, "rev-parse", "HEAD").trim()];
  commits.push(commitTree(games, fileTreeFromText(arena("ranked")), "ranked").trim());
  mkdirSync(join(dir, "srv"));
  // The server has the first commit only, until a test pushes the second.
  execFileSync("git", ["clone", "-q", "--bare", games, join(dir, "srv", "games.git")]);
  execFileSync("git", [
    "--git-dir",
    join(dir, "srv", "games.git"),
    "update-ref",
    "refs/heads/main",
    commits[0] as string,
  ]);
  execFileSync("git", [
    "--git-dir",
    join(dir, "srv", "games.git"),
    "reflog",
    "expire",
    "--expire=now",
    "--all",
  ]);
  execFileSync("git", ["--git-dir", join(dir, "srv", "games.git"), "gc", "-q", "--prune=now"]);
  gamesWork = games;
  server = await startGitHttpServer(join(dir, "srv"), TOKEN);
  tokenFile = join(dir, "token");
  writeFileSync(tokenFile, TOKEN);
});
afterAll(async () => {
  await server?.close();
  cleanup();
});

function fleetDir(files: Record<string, string>): string {
  const path = join(dir, `fleet-${Math.random().toString(36).slice(2)}`);
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(join(path, name, ".."), { recursive: true });
    writeFileSync(join(path, name), text);
  }
  return path;
}

describe("a team's repository, pinned from the fleet repo", () => {
  it("is validated only when fetched: without --team-source the Team's pin is the error", async () => {
    const url = `${server.url}/games.git`;
    const repo = fleetDir({
      ...MINIMAL_FLEET,
      "teams/games.yaml": teamFile(url, commits[0] as string),
      "placements/arena.yaml": PLACEMENT,
    });
    const without = await gitfleetAsync(["validate", repo]);
    expect(without.code).toBe(1);
    expect(without.stdout + without.stderr).toContain(
      `teams/games.yaml:10:10: error: /spec/source/url: ${url} is not among the team sources the operator allows (--team-source) [TEAM_SOURCE]`,
    );
    const fetched = await gitfleetAsync(["validate", repo, "--team-source", `${url}=${tokenFile}`]);
    expect(fetched.stderr).toBe("");
    expect(fetched.code).toBe(0);
    expect(fetched.stdout).toMatch(/valid: 2 clusters, 2 apps/);
  }, 60_000);

  describe("in the controller", () => {
    let controller: RunningController;
    const url = () => `${server.url}/games.git`;
    beforeAll(async () => {
      controller = await runController(
        {
          ...dashboardFleet(),
          "teams/games.yaml": teamFile(url(), commits[0] as string),
          "placements/arena.yaml": PLACEMENT,
        },
        "gitfleet-team-sources-run-",
        ["--team-source", `${server.url}/=${tokenFile}`],
      );
    }, 60_000);
    afterAll(() => controller?.stop());

    // The arena ConfigMap's MODE in a member, as its API answers it.
    const mode = async (cluster: string) => {
      const answer = await fetch(
        `${controller.member(cluster).url}/api/v1/namespaces/games/configmaps/arena`,
      );
      if (!answer.ok) return undefined;
      return ((await answer.json()) as { data?: Record<string, string> }).data?.MODE;
    };

    it("runs what the pinned commit holds, and what a bumped pin holds after the fleet repo's commit", async () => {
      await until(async () => ((await mode("east")) === "casual" ? true : undefined), 30_000);
      const { body } = await getJson<{ apps: { name: string }[] }>(`${controller.url}/api/apps`);
      expect(body.apps.map((a) => a.name).sort()).toEqual(["arena", "web"]);
      // A pull request to the fleet repo bumps the pin to a commit the team has not pushed yet: the
      // controller tries again (and says why) rather than record the fleet's commit as invalid.
      commitTree(
        controller.repo,
        fileTreeFromText({
          ...dashboardFleet(),
          "teams/games.yaml": teamFile(url(), commits[1] as string),
          "placements/arena.yaml": PLACEMENT,
        }),
        "games: arena at its ranked commit",
      );
      await until(
        async () =>
          controller.records.some((r) => JSON.stringify(r).includes("a team's repository is unavailable"))
            ? true
            : undefined,
        30_000,
      );
      const fleet = await getJson<{ source: { valid: boolean } }>(`${controller.url}/api/fleet`);
      expect(fleet.body.source.valid).toBe(true);
      expect(await mode("east")).toBe("casual");
      execFileSync("git", ["-C", gamesWork, "push", "-q", join(dir, "srv", "games.git"), "main"]);
      await until(async () => ((await mode("east")) === "ranked" ? true : undefined), 30_000);
      // The pull request's plan shows what the bump changes in each member, as for any commit.
      const plan = await gitfleetAsync([
        "plan",
        "--repo",
        controller.repo,
        "--base",
        "HEAD~1",
        "--head",
        "HEAD",
        "--team-source",
        `${server.url}/=${tokenFile}`,
      ]);
      expect(plan.stderr).toBe("");
      expect(plan.stdout).toContain("~ ConfigMap games/arena");
      expect(plan.stdout).toContain("+  MODE: ranked");
    }, 90_000);
  });
});
