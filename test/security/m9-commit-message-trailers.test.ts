import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { fileTreeFromText } from "../../src/model/file-tree.js";
import { hasStatusTrailers, trailerBlock } from "../../src/model/trailers.js";
import { gitfleetCli } from "../helpers/cli.js";
import { commitTree, createRepo, gitIn, tempDir } from "../helpers/git-repo.js";
import { MINIMAL_FLEET, webDeployment } from "../helpers/minimal-fleet.js";

/**
 * M9 (security audit): a source commit whose message contained `Source-Commit:` and
 * `Gitfleet-Controller:` lines anywhere was refused as "a gitfleet status commit", stopping the loop
 * until the next commit — a squash merge of a PR quoting a status commit was enough. A status
 * commit is now recognised by its trailer block (the last paragraph) and a tree of gitfleet's own
 * directories only.
 */

const QUOTED =
  "web: bump replicas\n\nAs discussed, see the status commit:\nSource-Commit: 1234567\nGitfleet-Controller: gitfleet@ctrl-0\n\nThanks.";
const ENDING = `web: bump replicas\n\nCopied from a status commit.\n\nSource-Commit: ${"a".repeat(40)}\nGitfleet-Controller: gitfleet@ctrl-0`;

describe("M9: trailer-like lines in a person's commit", () => {
  it("reads trailers from the last paragraph only", () => {
    expect(trailerBlock(QUOTED)).toBeUndefined();
    expect(hasStatusTrailers(QUOTED)).toBe(false);
    expect(hasStatusTrailers(ENDING)).toBe(true);
    expect(trailerBlock("sync: east Healthy\n\neast: 0 applied, 0 pruned; Healthy")).toBeUndefined();
  });

  let dir: string;
  let cleanup: () => void;
  beforeEach(() => {
    ({ dir, cleanup } = tempDir("gitfleet-m9-"));
    mkdirSync(join(dir, "repo"));
  });
  afterEach(() => cleanup());

  const reconcile = () =>
    gitfleetCli(["reconcile", "--repo", join(dir, "repo"), "--once", "--no-sync", "--log-level", "error"]);

  it.each([
    ["quoting them in the body (the audit's message)", QUOTED],
    ["ending in them, with the fleet's files in its tree", ENDING],
  ])("a commit %s is reconciled as usual", (_name, message) => {
    const repo = join(dir, "repo");
    createRepo(repo, fileTreeFromText(MINIMAL_FLEET));
    expect(reconcile().code).toBe(0);
    commitTree(
      repo,
      fileTreeFromText({ ...MINIMAL_FLEET, "apps/web/deployment.yaml": webDeployment(7) }),
      message,
    );
    const result = reconcile();
    expect(result.stderr).toBe("");
    expect(result.stdout).toMatch(/committed \(valid/);
    expect(result.code).toBe(0);
  });

  it("a source branch whose tip is a real status commit is still refused", () => {
    const repo = join(dir, "repo");
    createRepo(repo, fileTreeFromText(MINIMAL_FLEET));
    expect(reconcile().code).toBe(0);
    gitIn(repo, "update-ref", "refs/heads/main", gitIn(repo, "rev-parse", "gitfleet/status"));
    const result = reconcile();
    expect(result.stderr).toMatch(/is a gitfleet status commit; point --branch at the branch people write/);
    expect(result.code).not.toBe(0);
  });
});
