import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { fileTreeFromText } from "../../src/model/file-tree.js";
import { gitfleetAsync, gitfleetCli } from "../helpers/cli.js";
import { createRepo, gitIn, tempDir } from "../helpers/git-repo.js";
import { MINIMAL_FLEET } from "../helpers/minimal-fleet.js";
import { pushController } from "../helpers/sync-fleet.js";

/**
 * L1 (security audit): `reconcile --once` said an invalid source commit was valid, and exited 0,
 * once the commit was already recorded — on a second run, and for the losers of a race between
 * controllers — so CI that relies on the exit code passed. Now every run says invalid and exits 1.
 */

let dir: string;
let cleanup: () => void;
let repo: string;

beforeEach(() => {
  ({ dir, cleanup } = tempDir("gitfleet-l1-"));
  repo = join(dir, "fleet");
  mkdirSync(repo);
  // A Placement naming a cluster that does not exist.
  createRepo(
    repo,
    fileTreeFromText({
      ...MINIMAL_FLEET,
      "placements/web.yaml":
        "apiVersion: gitfleet.io/v1alpha1\nkind: Placement\nmetadata:\n  name: web\nspec:\n  apps: [web]\n  clusterAffinity:\n    clusterNames: [wets]\n",
    }),
  );
});
afterEach(() => cleanup());

const reconcile = ["reconcile", "--once", "--no-sync", "--log-level", "error"];

describe("L1: an invalid commit is invalid however often it is reconciled", () => {
  it("a second reconcile --once of the recorded commit says invalid and exits 1", () => {
    const first = gitfleetCli([...reconcile, "--repo", repo]);
    expect(first.stdout).toMatch(/committed \(invalid, \d+ errors? recorded/);
    expect(first.code).toBe(1);
    const second = gitfleetCli([...reconcile, "--repo", repo]);
    expect(second.stdout).toMatch(/(up-to-date|unchanged) \(invalid, \d+ errors? recorded/);
    expect(second.stdout).not.toMatch(/\(valid/);
    expect(second.code).toBe(1);
  });

  it("a long-running controller asked again (the up-to-date path) says invalid, with the recorded errors", async () => {
    const { reconciler } = await pushController(repo, join(dir, "none.kubeconfig"));
    const first = await reconciler.reconcile();
    expect(first).toMatchObject({ result: "committed", valid: false });
    for (let i = 0; i < 2; i++)
      expect(await reconciler.reconcile()).toMatchObject({
        result: "up-to-date",
        valid: false,
        errors: first.errors,
      });
  });

  it("four controllers racing on it all say invalid and exit 1; one commit is made", async () => {
    const results = await Promise.all([1, 2, 3, 4].map(() => gitfleetAsync([...reconcile, "--repo", repo])));
    for (const result of results) {
      expect(result.stdout).toMatch(/\(invalid, \d+ errors? recorded/);
      expect(result.code).toBe(1);
    }
    expect(gitIn(repo, "rev-list", "--count", "gitfleet/status")).toBe("1");
  });
});
