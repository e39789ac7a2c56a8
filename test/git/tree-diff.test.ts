import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { diffTrees } from "../../src/git/tree-diff.js";
import { fileTreeFromText } from "../../src/model/file-tree.js";
import { commitTree, createRepo, gitIn, tempDir } from "../helpers/git-repo.js";

/** Tree diffs by object id, checked against `git diff --name-status` on the same commits. */
let dir: string;
let cleanup: () => void;
beforeEach(() => ({ dir, cleanup } = tempDir("gitfleet-diff-")));
afterEach(() => cleanup());

const tree = (commit: string) => gitIn(dir, "rev-parse", `${commit}^{tree}`);

describe("tree diff", () => {
  it("finds added, changed and removed files at any depth, and files that became directories", async () => {
    const first = createRepo(
      dir,
      fileTreeFromText({
        "apps/web/deployment.yaml": "a",
        "apps/web/config.yaml": "b",
        "apps/api/deployment.yaml": "c",
        "placements/web.yaml": "d",
        "README.md": "e",
        notes: "a file first",
      }),
    );
    const second = commitTree(
      dir,
      fileTreeFromText({
        "apps/web/deployment.yaml": "a2",
        "apps/web/config.yaml": "b",
        "apps/new/deep/er/x.yaml": "f",
        "placements/web.yaml": "d",
        "README.md": "e",
        "notes/now-a-directory.md": "g",
      }),
      "second",
    );
    const changes = await diffTrees(join(dir, ".git"), {}, tree(first), tree(second));
    const kind = (c: (typeof changes)[number]) => (c.oid === null ? "D" : c.previous === null ? "A" : "M");
    const ours = changes.map((c) => `${kind(c)} ${c.path}`).sort();
    const gits = gitIn(dir, "diff", "--name-status", "--no-renames", first, second)
      .split("\n")
      .map((line) => line.replace("\t", " "))
      .sort();
    expect(ours).toEqual(gits);
    expect(ours).toEqual([
      "A apps/new/deep/er/x.yaml",
      "A notes/now-a-directory.md",
      "D apps/api/deployment.yaml",
      "D notes",
      "M apps/web/deployment.yaml",
    ]);
    // Blob ids are the new content's and the old one's.
    const web = changes.find((c) => c.path === "apps/web/deployment.yaml");
    expect(web?.oid).toBe(gitIn(dir, "rev-parse", `${second}:apps/web/deployment.yaml`));
    expect(web?.previous).toBe(gitIn(dir, "rev-parse", `${first}:apps/web/deployment.yaml`));
  });

  it("lists everything from the empty tree, and nothing between equal trees", async () => {
    const only = createRepo(dir, fileTreeFromText({ "a/b.yaml": "1", "c.yaml": "2" }));
    expect((await diffTrees(join(dir, ".git"), {}, undefined, tree(only))).map((c) => c.path).sort()).toEqual(
      ["a/b.yaml", "c.yaml"],
    );
    expect(await diffTrees(join(dir, ".git"), {}, tree(only), tree(only))).toEqual([]);
  });
});
