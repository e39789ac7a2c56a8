import { rmSync } from "node:fs";
import { Writable } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { TerminalError } from "../../src/controller/errors.js";
import { Reconciler, type ReconcilerOptions } from "../../src/controller/reconciler.js";
import { FleetRepo } from "../../src/git/fleet-repo.js";
import { writeStatusCommit } from "../../src/git/status-writer.js";
import { createLogger } from "../../src/log/logger.js";
import { appOfStatusPath, appStatusPath, unbucketedApp } from "../../src/status/status-files.js";
import { BASE_SPEC, type FleetSpec, fleetFiles } from "../helpers/fleet-spec.js";
import { branchFiles, commitTree, createRepo, gitIn, tempDir } from "../helpers/git-repo.js";

/** The reconcile loop against a real repository: commits by the git CLI, gitfleet through isomorphic-git. */
let dir: string;
let cleanup: () => void;
let logLines: Record<string, unknown>[];

beforeEach(() => {
  ({ dir, cleanup } = tempDir("gitfleet-reconcile-"));
  logLines = [];
});
afterEach(() => cleanup());

async function reconciler(location = dir, extra: Partial<ReconcilerOptions> = {}): Promise<Reconciler> {
  const destination = new Writable({
    write(chunk, _encoding, done) {
      logLines.push(JSON.parse(String(chunk)) as Record<string, unknown>);
      done();
    },
  });
  return new Reconciler({
    repo: await FleetRepo.open({ location }),
    branch: "main",
    statusBranch: "gitfleet/status",
    author: { name: "gitfleet", email: "gitfleet@example.com" },
    controllerId: "test-controller",
    logger: createLogger({ destination }),
    ...extra,
  });
}

const withApp = (spec: FleetSpec, name: string, change: Partial<FleetSpec["apps"][number]>): FleetSpec => ({
  ...spec,
  apps: spec.apps.map((a) => (a.name === name ? { ...a, ...change } : a)),
});

describe("reconciling a local repository", () => {
  it("writes rendered/ and status/ in one commit naming its source commit, and nothing on an unchanged source", async () => {
    const source = createRepo(dir, fleetFiles(BASE_SPEC));
    const loop = await reconciler();
    const report = await loop.reconcile();
    expect(report).toMatchObject({ result: "committed", sourceCommit: source, valid: true, attempts: 1 });
    const files = branchFiles(dir, "gitfleet/status");
    expect(files.get("rendered/east/shop/apps.Deployment.web.yaml")).toContain("replicas: 2");
    expect(files.get(appStatusPath("web"))).toContain(`sourceCommit: ${source}`);
    expect(files.get("status/source.yaml")).toContain("valid: true");
    expect([...files.keys()].every((p) => p.startsWith("rendered/") || p.startsWith("status/"))).toBe(true);
    const message = gitIn(dir, "log", "-1", "--format=%B", "gitfleet/status");
    expect(message).toContain(`Source-Commit: ${source}`);
    expect(message).toContain("Gitfleet-Controller: test-controller");
    expect(
      gitIn(dir, "log", "-1", "--format=%(trailers:key=Gitfleet-Event,valueonly)", "gitfleet/status"),
    ).toBe("reconcile");
    expect(gitIn(dir, "fsck", "--strict", "--no-dangling")).toBe("");
    // Nothing changed in the source: no new status commit, from the same process or a new one.
    expect((await loop.reconcile()).result).toBe("up-to-date");
    expect((await (await reconciler()).reconcile()).result).toBe("up-to-date");
    expect(gitIn(dir, "rev-list", "--count", "gitfleet/status")).toBe("1");
    // The work tree and the source branch are untouched.
    expect(gitIn(dir, "status", "--porcelain")).toBe("");
    expect(gitIn(dir, "rev-parse", "main")).toBe(source);
  });

  it("makes a small commit for a one-app change, saying how the replicas moved", async () => {
    createRepo(dir, fleetFiles(BASE_SPEC));
    const loop = await reconciler();
    await loop.reconcile();
    const changed = commitTree(
      dir,
      fleetFiles(withApp(BASE_SPEC, "web", { replicas: 9 })),
      "web: 9 replicas",
    );
    const report = await loop.reconcile();
    expect(report).toMatchObject({ result: "committed", sourceCommit: changed });
    expect(gitIn(dir, "log", "-1", "--format=%s", "gitfleet/status")).toBe(
      "web: Deployment shop/web 9 replicas east=2 south=2 west=2 → east=3 south=3 west=3",
    );
    expect(gitIn(dir, "diff", "--name-only", "gitfleet/status~1", "gitfleet/status").split("\n")).toEqual([
      "rendered/east/shop/apps.Deployment.web.yaml",
      "rendered/south/shop/apps.Deployment.web.yaml",
      "rendered/west/shop/apps.Deployment.web.yaml",
      appStatusPath("web"),
      "status/source.yaml",
    ]);
    const record = logLines.find((l) => l.sourceCommit === changed && l.statusCommit);
    expect(record).toMatchObject({ valid: true, scope: 1, clusters: { east: { changed: 1 } } });
    expect(Object.keys(record?.durationsMs as object)).toEqual(
      expect.arrayContaining(["fetch", "restore", "read", "reconcile", "write", "publish"]),
    );
  });

  it("records an invalid commit's errors with file, line and column and keeps the last good render", async () => {
    const good = createRepo(dir, fleetFiles(BASE_SPEC));
    const loop = await reconciler();
    await loop.reconcile();
    const before = branchFiles(dir, "gitfleet/status");
    const bad = commitTree(
      dir,
      fleetFiles({ ...withApp(BASE_SPEC, "web", { replicas: 7 }), broken: "web" }),
      "oops",
    );
    expect(await loop.reconcile()).toMatchObject({ result: "committed", valid: false, errors: 1 });
    const after = branchFiles(dir, "gitfleet/status");
    for (const [path, text] of before) if (path !== "status/source.yaml") expect(after.get(path)).toBe(text);
    const status = after.get("status/source.yaml") ?? "";
    expect(status).toContain(`sourceCommit: ${bad}`);
    expect(status).toContain(`renderedCommit: ${good}`);
    expect(status).toMatch(/file: apps\/web\/deployment\.yaml\n\s+line: \d+\n\s+column: \d+/);
    expect(gitIn(dir, "log", "-1", "--format=%s", "gitfleet/status")).toMatch(
      /^Source \w{7} is invalid: 1 error; rendered\/ stays at /,
    );
    // Fixed on top of the broken commit: the render continues from the last good one, in a new process too.
    commitTree(dir, fleetFiles(withApp(BASE_SPEC, "web", { replicas: 7 })), "fix");
    expect(await (await reconciler()).reconcile()).toMatchObject({ result: "committed", valid: true });
    expect(branchFiles(dir, "gitfleet/status").get("rendered/west/shop/apps.Deployment.web.yaml")).toMatch(
      /replicas: [23]\n/,
    );
  });

  it("rolls back with git revert: the rendered tree comes back byte-identical", async () => {
    createRepo(dir, fleetFiles(BASE_SPEC));
    const loop = await reconciler();
    await loop.reconcile();
    const before = branchFiles(dir, "gitfleet/status");
    commitTree(dir, fleetFiles(withApp(BASE_SPEC, "web", { clusters: ["east", "north"] })), "move web");
    await loop.reconcile();
    const moved = branchFiles(dir, "gitfleet/status");
    expect(moved.has("rendered/north/shop/apps.Deployment.web.yaml")).toBe(true);
    gitIn(dir, "revert", "--no-edit", "HEAD");
    await loop.reconcile();
    const after = branchFiles(dir, "gitfleet/status");
    const rendered = (files: Map<string, string>) => [...files].filter(([p]) => p.startsWith("rendered/"));
    expect(rendered(after)).toEqual(rendered(before));
    // Only the app's source commit and the loop's position moved.
    for (const [path, text] of before)
      if (!["status/source.yaml", appStatusPath("web")].includes(path)) expect(after.get(path)).toBe(text);
  });

  it("two controllers on one repository: the compare-and-swap lets one win and the other regenerate", async () => {
    createRepo(dir, fleetFiles(BASE_SPEC));
    let second: Reconciler | undefined;
    const first = await reconciler(dir, {
      sleep: async () => undefined,
      onStage: async (stage) => {
        if (stage === "written" && second) {
          const other = second;
          second = undefined;
          commitTree(dir, fleetFiles(withApp(BASE_SPEC, "api", { replicas: 1 })), "api: 1");
          expect((await other.reconcile()).result).toBe("committed");
        }
      },
    });
    second = await reconciler();
    expect(await first.reconcile()).toMatchObject({ result: "up-to-date", attempts: 2 });
    expect(gitIn(dir, "rev-list", "--count", "gitfleet/status")).toBe("1");
    expect(branchFiles(dir, "gitfleet/status").get("rendered/east/shop/apps.Deployment.api.yaml")).toContain(
      "replicas: 1",
    );
    const moved = commitTree(dir, fleetFiles(withApp(BASE_SPEC, "api", { replicas: 2 })), "api: 2");
    expect(await first.reconcile()).toMatchObject({ result: "committed", sourceCommit: moved, attempts: 1 });
  });

  it("rebuilds its state from a foreign commit on the status branch by rendering again, and repairs what differs", async () => {
    createRepo(dir, fleetFiles(BASE_SPEC));
    const loop = await reconciler();
    await loop.reconcile();
    const rebuilds = () => logLines.filter((l) => String(l.msg).startsWith("rebuilt state")).length;
    const clean = branchFiles(dir, "gitfleet/status");
    // Someone else writes the status branch: an edited status file, a changed object, an added one.
    const tip = gitIn(dir, "rev-parse", "gitfleet/status");
    const written = await writeStatusCommit({
      gitdir: `${dir}/.git`,
      cache: {},
      parent: tip,
      changes: new Map([
        [appStatusPath("api"), "edited by hand\n"],
        ["rendered/east/shop/apps.Deployment.web.yaml", "apiVersion: apps/v1\nkind: Deployment\n"],
        ["rendered/east/kube-system/core.ConfigMap.injected.yaml", "apiVersion: v1\nkind: ConfigMap\n"],
        ["status/extra.yaml", "x: 1\n"],
      ]),
      message: "someone else",
      trailers: [],
      author: { name: "other", email: "other@example.com", timestamp: 0, timezoneOffset: 0 },
    });
    if (written.status !== "written") throw new Error("nothing written");
    gitIn(dir, "update-ref", "refs/heads/gitfleet/status", written.oid, tip);
    const report = await loop.reconcile();
    expect(report).toMatchObject({ result: "committed", attempts: 1 });
    expect(rebuilds()).toBe(1);
    expect(gitIn(dir, "log", "-1", "--format=%B", "gitfleet/status")).toMatch(
      /^repair: the status branch held what gitfleet does not render from source commit [0-9a-f]{7}; 2 files written again, 2 removed/,
    );
    // The branch holds exactly what gitfleet renders again.
    expect(branchFiles(dir, "gitfleet/status")).toEqual(clean);
    // The rendered objects in the state are its own render, never the branch's.
    const web = loop
      .snapshot()
      .state.render.objects.find((o) => o.path === "rendered/east/shop/apps.Deployment.web.yaml");
    expect(web?.text).toBe(clean.get("rendered/east/shop/apps.Deployment.web.yaml"));
    expect(loop.snapshot().trusted).toBe(false);
  });

  it("moves app status files written before buckets into their buckets, observed blocks and all", async () => {
    createRepo(dir, fleetFiles(BASE_SPEC));
    const first = await reconciler();
    await first.reconcile();
    const bucketed = branchFiles(dir, "gitfleet/status");
    const apps = [...bucketed.keys()].flatMap((path) => {
      const app = appOfStatusPath(path);
      return app === undefined ? [] : [app];
    });
    expect(apps.length).toBeGreaterThan(1);
    // The branch as gitfleet wrote it before buckets: status/apps/<app>.yaml, with the sync's block.
    const observed = "observed:\n  east:\n    health: Healthy\n";
    const changes = new Map<string, string | null>();
    for (const app of apps) {
      changes.set(appStatusPath(app), null);
      changes.set(`status/apps/${app}.yaml`, (bucketed.get(appStatusPath(app)) ?? "") + observed);
    }
    const tip = gitIn(dir, "rev-parse", "gitfleet/status");
    const written = await writeStatusCommit({
      gitdir: `${dir}/.git`,
      cache: {},
      parent: tip,
      changes,
      message: gitIn(dir, "log", "-1", "--format=%B", "gitfleet/status"),
      trailers: [],
      author: { name: "gitfleet", email: "gitfleet@example.com", timestamp: 0, timezoneOffset: 0 },
    });
    if (written.status !== "written") throw new Error("nothing written");
    gitIn(dir, "update-ref", "refs/heads/gitfleet/status", written.oid, tip);
    // A restarted controller reads that layout and its next commit moves every file into its bucket.
    const restarted = await reconciler();
    expect(await restarted.reconcile()).toMatchObject({ result: "committed" });
    const moved = branchFiles(dir, "gitfleet/status");
    expect([...moved.keys()].filter((path) => unbucketedApp(path) !== undefined)).toEqual([]);
    for (const app of apps)
      expect(moved.get(appStatusPath(app))).toBe(bucketed.get(appStatusPath(app)) + observed);
    expect(restarted.snapshot().state.render.decisions).toEqual(first.snapshot().state.render.decisions);
    expect(restarted.snapshot().state.appCommits).toEqual(first.snapshot().state.appCommits);
  });

  it("reads a bare repository in place and refuses a source branch that is a status branch", async () => {
    createRepo(dir, fleetFiles(BASE_SPEC));
    const bare = `${dir}-bare.git`;
    gitIn(dir, "clone", "-q", "--bare", dir, bare);
    try {
      expect((await (await reconciler(bare)).reconcile()).result).toBe("committed");
      expect(gitIn(bare, "rev-list", "--count", "gitfleet/status")).toBe("1");
      // Both are configuration errors: terminal, never retried.
      await expect(
        (await reconciler(bare, { branch: "gitfleet/status", statusBranch: "gitfleet/status" })).reconcile(),
      ).rejects.toThrow(
        new TerminalError(
          'the status branch must differ from the source branch (both are "gitfleet/status"): gitfleet never writes to people\'s branch',
        ),
      );
      await expect(
        (await reconciler(bare, { branch: "gitfleet/status", statusBranch: "other" })).reconcile(),
      ).rejects.toBeInstanceOf(TerminalError);
    } finally {
      tempCleanup(bare);
    }
  });
});

function tempCleanup(path: string): void {
  rmSync(path, { recursive: true, force: true });
}
