import { spawnSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { fileTreeFromText } from "../../src/model/file-tree.js";
import { BASE_SPEC, fleetFiles } from "../helpers/fleet-spec.js";
import { commitTree, createRepo, gitIn, tempDir } from "../helpers/git-repo.js";

/** `gitfleet reconcile --once` as users run it: settings from fleet.yaml, exit codes, refusals. */
const BIN = fileURLToPath(new URL("../../bin/gitfleet.js", import.meta.url));
let dir: string;
let cleanup: () => void;
beforeEach(() => {
  ({ dir, cleanup } = tempDir("gitfleet-cli-reconcile-"));
  mkdirSync(`${dir}/fleet`);
});
afterEach(() => cleanup());

// The status branch only: sync is tested with members in sync.test.ts.
const run = (...args: string[]) =>
  spawnSync(
    process.execPath,
    [BIN, "reconcile", "--repo", `${dir}/fleet`, "--log-level", "error", "--no-sync", ...args],
    { encoding: "utf8" },
  );

const FLEET_YAML = `apiVersion: gitfleet.io/v1alpha1
kind: Fleet
metadata:
  name: fleet
spec:
  statusBranch: fleet/rendered
  commitAuthor:
    name: Fleet Bot
    email: fleet-bot@example.com
`;

function withFleetYaml(extra: Record<string, string> = {}) {
  const files = new Map(fleetFiles(BASE_SPEC));
  for (const [path, bytes] of fileTreeFromText({ "fleet.yaml": FLEET_YAML, ...extra }))
    files.set(path, bytes);
  return files;
}

describe("gitfleet reconcile --once", () => {
  it("takes the status branch and the author from fleet.yaml, and prints what it did", () => {
    const source = createRepo(`${dir}/fleet`, withFleetYaml());
    const result = run("--once");
    expect(result.stderr).toBe("");
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(
      new RegExp(
        `^${source.slice(0, 7)} → status [0-9a-f]{7}: committed \\(valid; \\d+ files changed\\)\\n$`,
      ),
    );
    expect(gitIn(`${dir}/fleet`, "log", "-1", "--format=%an <%ae>", "fleet/rendered")).toBe(
      "Fleet Bot <fleet-bot@example.com>",
    );
    expect(run("--once").stdout).toMatch(/: up-to-date \(valid; 0 files changed\)/);
    // Flags win over fleet.yaml.
    expect(run("--once", "--status-branch", "other", "--author", "Ops <ops@example.com>").status).toBe(0);
    expect(gitIn(`${dir}/fleet`, "log", "-1", "--format=%an <%ae>", "other")).toBe("Ops <ops@example.com>");
  });

  it("exits 1 for an invalid source commit, after recording its problems", () => {
    createRepo(`${dir}/fleet`, withFleetYaml());
    expect(run("--once").status).toBe(0);
    commitTree(
      `${dir}/fleet`,
      withFleetYaml({ "placements/web.yaml": "kind: Placement\nspec: [\n" }),
      "broken",
    );
    const result = run("--once");
    expect(result.status).toBe(1);
    expect(result.stdout).toMatch(/committed \(invalid, \d+ errors? recorded in status\/source\.yaml/);
    expect(gitIn(`${dir}/fleet`, "show", "fleet/rendered:status/source.yaml")).toMatch(
      /file: placements\/web\.yaml/,
    );
  });

  it.each([
    [["--once", "--author", "nobody"], /--author nobody: expected "Name <email>"/],
    [["--interval", "soon"], /--interval soon: expected a duration/],
  ])("refuses %j with a usage error", (args, message) => {
    createRepo(`${dir}/fleet`, fleetFiles(BASE_SPEC));
    const result = run(...args);
    expect(result.status).toBe(64);
    expect(result.stderr).toMatch(message);
  });

  // Configuration errors are terminal: one attempt, exit 1, one line naming what to change.
  it.each([
    [
      "the status branch equals the source branch",
      ["--branch", "gitfleet/status"],
      'the status branch must differ from the source branch (both are "gitfleet/status")',
    ],
    ["a missing source branch", ["--branch", "nope"], "branch nope not found in"],
    [
      "a source tip that is a status commit",
      ["--branch", "gitfleet/status", "--status-branch", "other"],
      "is a gitfleet status commit; point --branch at the branch people write",
    ],
  ])("ends at once on %s: exit 1 and one line, no retry", (_case, args, message) => {
    createRepo(`${dir}/fleet`, fleetFiles(BASE_SPEC));
    if (args.includes("other")) expect(run("--once").status).toBe(0);
    const result = spawnSync(
      process.execPath,
      [BIN, "reconcile", "--repo", `${dir}/fleet`, "--log-level", "warn", "--no-sync", "--once", ...args],
      { encoding: "utf8" },
    );
    expect(result.status).toBe(1);
    expect(result.stdout).toBe("");
    const lines = result.stderr
      .split("\n")
      .filter((line) => line !== "" && !line.includes("secret digest key"));
    expect(lines).toEqual([expect.stringContaining(message)]);
    expect(lines[0]).toMatch(/^gitfleet: /);
  });

  it("fails clearly on a path that is not a repository", () => {
    const notRepo = spawnSync(process.execPath, [BIN, "reconcile", "--repo", dir, "--once"], {
      encoding: "utf8",
    });
    expect(notRepo).toMatchObject({ status: 1, stderr: expect.stringMatching(/is not a Git repository/) });
  });
});

describe("gitfleet run --leader-elect", () => {
  const runElected = (...args: string[]) =>
    spawnSync(
      process.execPath,
      [BIN, "run", "--repo", `${dir}/fleet`, "--log-level", "error", "--no-sync", "--leader-elect", ...args],
      { encoding: "utf8", env: { ...process.env, KUBERNETES_SERVICE_HOST: "" }, timeout: 20_000 },
    );

  it.each([
    [[], /--leader-elect outside a cluster \(no KUBERNETES_SERVICE_HOST\) needs --management-kubeconfig/],
    [["--management-kubeconfig", "/nonexistent/kubeconfig"], /cannot read --management-kubeconfig/],
    [["--leader-elect-renew-deadline", "20s"], /the lease duration must be longer than the renew deadline/],
    [["--leader-elect-retry-period", "9s"], /the renew deadline must be longer than 1.2 × the retry period/],
    [["--leader-elect-lease-duration", "soon"], /--leader-elect-lease-duration soon: expected a duration/],
    [["--standby-follow-interval", "often"], /--standby-follow-interval often: expected a duration/],
    [["--shards", "2"], /--shards divides the members' sync: it cannot go with --no-sync/],
    [["--shards", "65"], /--shards 65: expected a whole number from 0 to 64/],
    [["--shards", "1.5"], /--shards 1.5: expected a whole number from 0 to 64/],
  ])("refuses %j before it campaigns", (args, message) => {
    createRepo(`${dir}/fleet`, fleetFiles(BASE_SPEC));
    const result = runElected(...args);
    expect(result.stderr).toMatch(message);
    expect(result.status).toBe(args[0] === "--management-kubeconfig" ? 1 : 64);
    // Nothing was written: no status branch.
    expect(() => gitIn(`${dir}/fleet`, "rev-parse", "--verify", "-q", "gitfleet/status")).toThrow();
  });
});

describe("gitfleet run --shards", () => {
  it("refuses shards without leader election: each shard is a Lease", () => {
    createRepo(`${dir}/fleet`, fleetFiles(BASE_SPEC));
    const result = spawnSync(
      process.execPath,
      [BIN, "run", "--repo", `${dir}/fleet`, "--log-level", "error", "--shards", "2"],
      { encoding: "utf8", timeout: 20_000 },
    );
    expect(result.stderr).toMatch(/--shards needs --leader-elect: each shard is a Lease/);
    expect(result.status).toBe(64);
    expect(() => gitIn(`${dir}/fleet`, "rev-parse", "--verify", "-q", "gitfleet/status")).toThrow();
  });
});
