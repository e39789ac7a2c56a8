import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { gitfleetCli } from "../helpers/cli.js";
import { createRepo, gitIn, tempDir } from "../helpers/git-repo.js";
import { offsiteExample } from "../helpers/hosted-example.js";

// `gitfleet move-host`: one change that moves every control plane of a host to another, each with an
// EtcdRestore of its newest off-host backup; validated, committed or printed as a patch; nothing
// written when any of them could not come back that way.
const encoder = new TextEncoder();
const CLUSTER = (name: string, host: string, cls: string, hostLine = `host: ${host}`) =>
  `apiVersion: gitfleet.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: ${name}\n  labels: { tier: hosted } # kept as written\nspec:\n  controlPlane:\n    ${hostLine}\n    class: ${cls}\n    expose: { type: LoadBalancer }\n`;

let repo: { dir: string; cleanup: () => void };
// The off-host example without pc-1 and pc-2 (they share an etcd, which no backup brings back), with
// pc-3 and pc-4 of the class offsite on meta-1 and a second host, meta-2.
async function fleet(extra: Record<string, string> = {}): Promise<void> {
  const tree = await offsiteExample();
  tree.delete("clusters/pc-1.yaml");
  tree.delete("clusters/pc-2.yaml");
  for (const path of [...tree.keys()])
    if (path.startsWith("apps/") || path.startsWith("placements/")) tree.delete(path);
  const files: Record<string, string> = {
    "clusters/pc-3.yaml": CLUSTER("pc-3", "meta-1", "offsite"),
    "clusters/pc-4.yaml": CLUSTER("pc-4", "meta-1", "offsite", `host: "meta-1" # quoted`),
    "clusters/meta-2.yaml":
      "apiVersion: gitfleet.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: meta-2\nspec: {}\n",
    ...extra,
  };
  for (const [path, text] of Object.entries(files)) tree.set(path, encoder.encode(text));
  createRepo(repo.dir, tree);
  gitIn(repo.dir, "config", "user.name", "Pat Platform");
  gitIn(repo.dir, "config", "user.email", "pat@example.com");
}
beforeEach(() => {
  repo = tempDir("gitfleet-move-host-");
});
afterEach(() => repo.cleanup());

const move = (...extra: string[]) =>
  gitfleetCli(["move-host", "--from", "meta-1", "--to", "meta-2", "--repo", repo.dir, ...extra]);

describe("gitfleet move-host", () => {
  it("commits every moved Cluster's host, edited in place, and an EtcdRestore of backup: latest each; the repo stays valid", async () => {
    await fleet();
    const head = gitIn(repo.dir, "rev-parse", "HEAD");
    const run = move();
    expect(run.stderr).toContain("committed 4 file(s)");
    expect(run.code).toBe(0);
    expect(gitIn(repo.dir, "rev-parse", "HEAD^")).toBe(head);
    expect(gitIn(repo.dir, "log", "-1", "--format=%B")).toContain(
      "Move the control planes of meta-1 to meta-2: pc-3, pc-4",
    );
    // Only the host changed in each Cluster file, as it was written (comments and quoting kept).
    expect(readFileSync(join(repo.dir, "clusters/pc-3.yaml"), "utf8")).toBe(
      CLUSTER("pc-3", "meta-2", "offsite"),
    );
    expect(readFileSync(join(repo.dir, "clusters/pc-4.yaml"), "utf8")).toBe(
      CLUSTER("pc-4", "meta-2", "offsite", `host: "meta-2" # quoted`),
    );
    expect(readFileSync(join(repo.dir, "controlplanes/pc-3-to-meta-2.yaml"), "utf8")).toContain(
      "kind: EtcdRestore\nmetadata:\n  name: pc-3-to-meta-2\nspec:\n  cluster: pc-3\n  backup: latest",
    );
    expect(gitIn(repo.dir, "status", "--porcelain")).toBe("");
    const valid = gitfleetCli(["validate", repo.dir]);
    expect(valid.code, valid.stdout + valid.stderr).toBe(0);
  });

  it("prints the same change as a patch with --patch, changing nothing", async () => {
    await fleet();
    const run = move("--patch");
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("+    host: meta-2");
    expect(run.stdout).toContain("+++ b/controlplanes/pc-4-to-meta-2.yaml");
    expect(gitIn(repo.dir, "status", "--porcelain")).toBe("");
    expect(readFileSync(join(repo.dir, "clusters/pc-3.yaml"), "utf8")).toContain("host: meta-1");
  });

  it.each([
    [
      "a cluster whose class keeps its backups in the host",
      { "clusters/pc-5.yaml": CLUSTER("pc-5", "meta-1", "standard") },
      "pc-5: its class standard sends no backup off the host (etcd.backup.offHost)",
    ],
    [
      "a cluster with an EtcdRestore still in the repo",
      {
        "controlplanes/r1.yaml":
          "apiVersion: gitfleet.io/v1alpha1\nkind: EtcdRestore\nmetadata: { name: r1 }\nspec: { cluster: pc-3, snapshot: s.db }\n",
      },
      "pc-3: EtcdRestore r1 (controlplanes/r1.yaml) is still in the repo: remove it first",
    ],
  ])("refuses, writing nothing, with %s", async (_name, extra, reason) => {
    await fleet(extra);
    const head = gitIn(repo.dir, "rev-parse", "HEAD");
    const run = move();
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("nothing moved: 1 of ");
    expect(run.stderr).toContain(reason);
    expect(gitIn(repo.dir, "rev-parse", "HEAD")).toBe(head);
    expect(gitIn(repo.dir, "status", "--porcelain")).toBe("");
  });

  it.each([
    [["--to", "meta-3"], 1, "meta-3 is not a cluster of the fleet"],
    [["--to", "meta-1"], 1, "--from and --to are both meta-1"],
    [["--to", "Meta-2"], 64, '--to "Meta-2"'],
    [["--from", "meta-9"], 1, "meta-9 hosts no control plane"],
  ])("refuses %j with exit %i", async (args, code, message) => {
    await fleet();
    const flags = ["--from", "meta-1", "--to", "meta-2"];
    for (let i = 0; i < args.length; i += 2) flags[flags.indexOf(String(args[i])) + 1] = String(args[i + 1]);
    const run = gitfleetCli(["move-host", ...flags, "--repo", repo.dir]);
    expect(run.code).toBe(code);
    expect(run.stderr).toContain(message);
  });
});
