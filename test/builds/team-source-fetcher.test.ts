import { execFileSync } from "node:child_process";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseTeamSources, TeamSourceFetcher } from "../../src/builds/team-source-fetcher.js";
import { sourceKey, type TeamSourcePin } from "../../src/load/team-sources.js";
import { type GitHttpServer, startGitHttpServer } from "../helpers/git-http-server.js";
import { gitIn, tempDir } from "../helpers/git-repo.js";

// Fetching a Team's pinned repository from a real Git server (git http-backend behind a token, as
// forges serve it): by commit, only from a URL the operator allows, with the operator's token, its
// regular files under the pin's path; nothing the server says in an error.

const TOKEN = "team-source-token-for-tests";
const { dir, cleanup } = tempDir("gitfleet-team-sources-");
let server: GitHttpServer;
let first: string;
let second: string;

beforeAll(async () => {
  const work = join(dir, "work");
  mkdirSync(join(work, "deploy", "apps", "arena"), { recursive: true });
  gitIn(dir, "init", "-q", "-b", "main", work);
  writeFileSync(join(work, "deploy", "apps", "arena", "app.yaml"), "kind: App\n");
  writeFileSync(join(work, "README.md"), "not laid over the fleet\n");
  symlinkSync("/etc/passwd", join(work, "deploy", "apps", "arena", "passwd.yaml"));
  gitIn(work, "add", "-A");
  gitIn(work, "commit", "-q", "-m", "arena");
  first = gitIn(work, "rev-parse", "HEAD").trim();
  writeFileSync(join(work, "deploy", "apps", "arena", "app.yaml"), "kind: App\nspec: {}\n");
  gitIn(work, "commit", "-q", "-am", "arena, again");
  second = gitIn(work, "rev-parse", "HEAD").trim();
  mkdirSync(join(dir, "srv"));
  execFileSync("git", ["clone", "-q", "--bare", work, join(dir, "srv", "games.git")]);
  server = await startGitHttpServer(join(dir, "srv"), TOKEN);
  writeFileSync(join(dir, "token"), `${TOKEN}\n`);
  writeFileSync(join(dir, "wrong-token"), "not-the-token\n");
});
afterAll(async () => {
  await server?.close();
  cleanup();
});

const pin = (commit: string, path?: string, url = `${server.url}/games.git`): TeamSourcePin => ({
  team: "games",
  file: "teams/games.yaml",
  paths: ["apps/arena/**"],
  source: { url, commit, ...(path ? { path } : {}) },
});
const fetcher = (entries: string[], cache = join(dir, `cache-${Math.random()}`)) =>
  new TeamSourceFetcher(parseTeamSources(entries), cache);
async function fetchOne(f: TeamSourceFetcher, p: TeamSourcePin) {
  return (await f.fetchAll([p])).get(sourceKey(p.source));
}
const text = (files: ReadonlyMap<string, Uint8Array>) =>
  Object.fromEntries([...files].map(([path, bytes]) => [path, new TextDecoder().decode(bytes)]));

describe("fetching a team's repository", () => {
  it("brings the regular files under the pin's path at the pinned commit, not its symlinks", async () => {
    const f = fetcher([`${server.url}/games.git=${join(dir, "token")}`]);
    const got = await fetchOne(f, pin(first, "deploy"));
    expect(got && "files" in got ? text(got.files) : got).toEqual({ "apps/arena/app.yaml": "kind: App\n" });
    // An older commit than the branch's tip, fetched by its id.
    const tip = await fetchOne(f, pin(second, "deploy"));
    expect(tip && "files" in tip ? text(tip.files) : tip).toEqual({
      "apps/arena/app.yaml": "kind: App\nspec: {}\n",
    });
  });

  it("asks the server nothing for a commit it already has", async () => {
    const cache = join(dir, "cache-kept");
    await fetchOne(fetcher([`${server.url}/=${join(dir, "token")}`], cache), pin(first));
    const before = server.requests.length;
    const again = await fetchOne(fetcher([`${server.url}/=${join(dir, "token")}`], cache), pin(first));
    expect(again && "files" in again ? [...again.files.keys()].sort() : again).toEqual([
      "README.md",
      "deploy/apps/arena/app.yaml",
    ]);
    expect(server.requests.length).toBe(before);
  });

  it.each([
    [
      "a URL the operator does not allow",
      () => [`${server.url}/other.git`],
      () => pin(first),
      /not among the team sources the operator allows/,
      false,
    ],
    ["no token", () => [`${server.url}/games.git`], () => pin(first), /fetching [0-9a-f]{40} from/, true],
    [
      "the wrong token",
      () => [`${server.url}/games.git=${join(dir, "wrong-token")}`],
      () => pin(first),
      /fetching [0-9a-f]{40} from/,
      true,
    ],
    [
      "a token file that is not there",
      () => [`${server.url}/games.git=${join(dir, "absent")}`],
      () => pin(first),
      /token file for this team source does not exist/,
      true,
    ],
    [
      "a commit the repository does not have",
      () => [`${server.url}/games.git=${join(dir, "token")}`],
      () => pin("f".repeat(40)),
      /fetching f{40} from/,
      true,
    ],
  ])("refuses %s (to be tried again: %s)", async (_, entries, p, message, transient) => {
    const got = await fetchOne(fetcher(entries()), p());
    // What trying again may cure is marked so: the controller retries it instead of recording it.
    expect(got && "error" in got ? (got.transient ?? false) : got).toBe(transient);
    expect(got && "error" in got ? got.error : got).toMatch(message);
    expect(got && "error" in got ? got.error : "").not.toContain(TOKEN);
    expect(got && "error" in got ? got.error : "").not.toContain("unauthorized");
  });

  it.each([
    ["ftp://git.example.com/x.git", /an http\(s\) URL/],
    ["https://user:pw@git.example.com/x.git", /without credentials/],
    ["not a url", /not a URL/],
    ["https://git.example.com/x.git=", /token file is empty/],
  ])("refuses the operator's entry %s", (entry, message) => {
    expect(() => parseTeamSources([entry])).toThrow(message);
  });
});
