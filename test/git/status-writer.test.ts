import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { commitStatus, type StatusCommitRequest } from "../../src/git/status-writer.js";

/** The status branch writer against a real repository; the git CLI checks what it wrote. */
let dir: string;
const git = (...args: string[]) => execFileSync("git", args, { cwd: dir, encoding: "utf8" }).trim();

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "gitfleet-status-"));
  git("init", "-q", "-b", "main");
  execFileSync(
    "git",
    ["-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "source"],
    { cwd: dir },
  );
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function request(files: Record<string, string>, timestamp = 1_700_000_000): StatusCommitRequest {
  return {
    gitdir: join(dir, ".git"),
    branch: "gitfleet/status",
    owned: ["rendered", "status"],
    files: new Map(Object.entries(files)),
    sourceCommit: git("rev-parse", "main"),
    message: "web: 12 replicas a=6 b=6",
    author: { name: "gitfleet", email: "gitfleet@example.com", timestamp },
  };
}

const FLEET = {
  "rendered/a/shop/apps.Deployment.web.yaml": "replicas: 6\n",
  "rendered/b/shop/apps.Deployment.web.yaml": "replicas: 6\n",
  "status/apps/web.yaml": "ready: true\n",
};

describe("status branch writer", () => {
  it("commits the tree with trailers, readable by git", async () => {
    const result = await commitStatus(request(FLEET));
    expect(result.status).toBe("committed");
    expect(git("show", "gitfleet/status:rendered/a/shop/apps.Deployment.web.yaml")).toBe("replicas: 6");
    const message = git("log", "-1", "--format=%B", "gitfleet/status");
    expect(message).toBe(
      `web: 12 replicas a=6 b=6\n\nSource-Commit: ${git("rev-parse", "main")}\nGitfleet-Status: true`,
    );
    expect(git("fsck", "--strict")).toBe("");
  });

  it("makes no commit when the desired tree is unchanged", async () => {
    const first = await commitStatus(request(FLEET));
    const second = await commitStatus(request(FLEET, 1_700_000_500));
    expect(second).toEqual({ status: "unchanged", oid: first.status === "committed" ? first.oid : "" });
    expect(git("rev-list", "--count", "gitfleet/status")).toBe("1");
  });

  it("reuses unchanged subtrees: a change in one cluster leaves the other's tree as it was", async () => {
    await commitStatus(request(FLEET));
    const before = git("rev-parse", "gitfleet/status:rendered/b");
    const result = await commitStatus(
      request({ ...FLEET, "rendered/a/shop/apps.Deployment.web.yaml": "replicas: 7\n" }),
    );
    expect(result.status).toBe("committed");
    expect(git("rev-parse", "gitfleet/status:rendered/b")).toBe(before);
    expect(git("diff", "--name-only", "gitfleet/status~1", "gitfleet/status")).toBe(
      "rendered/a/shop/apps.Deployment.web.yaml",
    );
  });

  it("removes files that left the desired state and keeps what gitfleet does not own", async () => {
    await commitStatus(request(FLEET));
    // Someone put a README on the status branch by hand.
    git("checkout", "-q", "gitfleet/status");
    execFileSync(
      "sh",
      [
        "-c",
        "echo hello > README.md && git add README.md && git -c user.name=t -c user.email=t@example.com commit -q -m readme",
      ],
      { cwd: dir },
    );
    git("checkout", "-q", "main");
    const { "rendered/b/shop/apps.Deployment.web.yaml": _removed, ...rest } = FLEET;
    await commitStatus(request(rest));
    expect(git("ls-tree", "-r", "--name-only", "gitfleet/status").split("\n")).toEqual([
      "README.md",
      "rendered/a/shop/apps.Deployment.web.yaml",
      "status/apps/web.yaml",
    ]);
  });

  it("reports a conflict instead of overwriting a branch that moved since the caller read it", async () => {
    const first = await commitStatus(request(FLEET));
    const readTip = first.status === "committed" ? first.oid : "";
    // Another controller commits on top first.
    await commitStatus(request({ ...FLEET, "status/apps/web.yaml": "ready: maybe\n" }));
    const movedTo = git("rev-parse", "gitfleet/status");
    const stale = await commitStatus({
      ...request({ ...FLEET, "status/apps/web.yaml": "ready: false\n" }),
      expectedParent: readTip,
    });
    expect(stale).toEqual({ status: "conflict", expected: readTip, found: movedTo });
    expect(git("rev-parse", "gitfleet/status")).toBe(movedTo);
    // Regenerated on the new tip, it goes through.
    const retried = await commitStatus({
      ...request({ ...FLEET, "status/apps/web.yaml": "ready: false\n" }),
      expectedParent: movedTo,
    });
    expect(retried.status).toBe("committed");
  });

  it("creates the branch only when the caller expected none", async () => {
    expect(await commitStatus({ ...request(FLEET), expectedParent: null })).toMatchObject({
      status: "committed",
      parent: undefined,
    });
    const tip = git("rev-parse", "gitfleet/status");
    expect(await commitStatus({ ...request(FLEET), expectedParent: null })).toEqual({
      status: "conflict",
      expected: undefined,
      found: tip,
    });
  });

  it("refuses paths outside the directories it owns", async () => {
    await expect(commitStatus(request({ "README.md": "x" }))).rejects.toThrow(
      "status path README.md is outside rendered, status",
    );
  });
});
