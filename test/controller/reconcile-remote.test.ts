import { chmodSync, readdirSync, writeFileSync } from "node:fs";
import { Writable } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ReconcilerOptions } from "../../src/controller/reconciler.js";
import type { RepoLocation } from "../../src/git/fleet-repo.js";
import { tokenFile } from "../../src/git/git-credentials.js";
import { createLogger } from "../../src/log/logger.js";
import type { FleetSpec } from "../helpers/fleet-spec.js";
import { type GitHttpServer, startGitHttpServer } from "../helpers/git-http-server.js";
import { branchFiles, gitIn, tempDir } from "../helpers/git-repo.js";
import { expectRaceResolved, remoteFleet, remoteReconciler, webReplicas } from "../helpers/remote-fleet.js";

/**
 * The reconcile loop against a remote over HTTP, served by real Git (`git http-backend`): people push
 * to a bare repository with the git CLI, gitfleet fetches and pushes with isomorphic-git.
 */
const TOKEN = "test-token-not-a-real-credential";
let root: string;
let cleanup: () => void;
let server: GitHttpServer;
let fleet: ReturnType<typeof remoteFleet>;
let bare: string;

beforeEach(async () => {
  ({ dir: root, cleanup } = tempDir("gitfleet-remote-"));
  fleet = remoteFleet(root);
  bare = fleet.bare;
  server = await startGitHttpServer(`${root}/srv`, TOKEN);
});
afterEach(async () => {
  await server.close();
  cleanup();
});

function controller(
  name: string,
  extra: Partial<ReconcilerOptions> = {},
  location: Partial<RepoLocation> = {},
) {
  const at = {
    location: `${server.url}/fleet.git`,
    cacheDir: `${root}/cache-${name}`,
    token: TOKEN,
    ...location,
  };
  return remoteReconciler(name, at, extra);
}

const push = (spec: FleetSpec, message: string) => fleet.push(spec, message);

describe("reconciling a remote over smart HTTP", () => {
  it("fetches shallow, pushes the status branch back, and pushes only what a change adds", async () => {
    const loop = await controller("a");
    const first = await loop.reconcile();
    expect(first.result).toBe("committed");
    expect(gitIn(bare, "rev-parse", "gitfleet/status")).toBe(first.statusCommit);
    expect(gitIn(bare, "fsck", "--strict", "--no-dangling")).toBe("");
    expect(branchFiles(bare, "gitfleet/status").get("rendered/east/shop/apps.Deployment.web.yaml")).toContain(
      "replicas: 2",
    );
    // The cache repository is shallow: it holds the tip, not the history.
    expect(
      gitIn(root, "--git-dir", readCacheDir(`${root}/cache-a`), "rev-parse", "--is-shallow-repository"),
    ).toBe("true");
    const source = push(webReplicas(9), "web: 9 replicas");
    const objectsBefore = countObjects(bare);
    const second = await loop.reconcile();
    expect(second).toMatchObject({ result: "committed", sourceCommit: source });
    expect(gitIn(bare, "log", "-1", "--format=%s", "gitfleet/status")).toMatch(
      /^web: Deployment shop\/web 9 replicas/,
    );
    // 5 changed files: 4 new blobs (3 deployments are identical) + their trees + the commit, nothing more.
    const added = countObjects(bare) - objectsBefore;
    expect(added).toBeGreaterThan(5);
    expect(added).toBeLessThan(20);
    expect(server.requests.filter((r) => r.startsWith("POST /fleet.git/git-receive-pack"))).toHaveLength(2);
    expect((await loop.reconcile()).result).toBe("up-to-date");
  });

  it("a new controller whose shallow cache lacks the rendered commit renders in full and gets the same tree", async () => {
    await (await controller("a")).reconcile();
    push(webReplicas(4), "web: 4");
    // The same repository, status branch included, served twice: one controller carries on, a fresh one starts.
    gitIn(root, "clone", "-q", "--mirror", bare, `${root}/srv/copy.git`);
    const carryingOn = await controller("a");
    const fresh = await controller("fresh", {}, { location: `${server.url}/copy.git` });
    expect((await carryingOn.reconcile()).result).toBe("committed");
    expect((await fresh.reconcile()).result).toBe("committed");
    expect(gitIn(`${root}/srv/copy.git`, "rev-parse", "gitfleet/status^{tree}")).toBe(
      gitIn(bare, "rev-parse", "gitfleet/status^{tree}"),
    );
  });

  it("starts its cache afresh when fetches piled up packfiles, and carries on to the same trees", async () => {
    gitIn(root, "clone", "-q", "--mirror", bare, `${root}/srv/copy.git`);
    gitIn(fleet.work, "remote", "add", "copy", `${root}/srv/copy.git`);
    const messages: string[] = [];
    const recording = createLogger({
      destination: new Writable({
        write: (chunk, _e, done) => {
          messages.push(String(JSON.parse(String(chunk)).msg));
          done();
        },
      }),
    });
    const compacting = await controller("small", { logger: recording }, { maxCachePacks: 2 });
    const plain = await controller("plain", {}, { location: `${server.url}/copy.git` });
    for (const replicas of [2, 3, 5, 7, 9]) {
      push(webReplicas(replicas), `web: ${replicas}`);
      gitIn(fleet.work, "push", "-q", "copy", "main");
      expect((await compacting.reconcile()).result).toBe("committed");
      expect((await plain.reconcile()).result).toBe("committed");
      expect(gitIn(bare, "rev-parse", "gitfleet/status^{tree}")).toBe(
        gitIn(`${root}/srv/copy.git`, "rev-parse", "gitfleet/status^{tree}"),
      );
      const packs = readdirSync(`${readCacheDir(`${root}/cache-small`)}/objects/pack`).filter((f) =>
        f.endsWith(".pack"),
      );
      expect(packs.length).toBeLessThanOrEqual(3);
    }
    expect(
      messages.filter((m) => m.startsWith("cache repository started afresh")).length,
    ).toBeGreaterThanOrEqual(2);
    expect(gitIn(bare, "rev-list", "--count", "gitfleet/status")).toBe("5");
  });

  it("reports a push the remote refuses (a hook, a protected branch) instead of retrying it as a race", async () => {
    writeFileSync(
      `${bare}/hooks/pre-receive`,
      '#!/bin/sh\nwhile read old new ref; do [ "$ref" = refs/heads/gitfleet/status ] && { echo "status branch is frozen" >&2; exit 1; }; done\nexit 0\n',
    );
    chmodSync(`${bare}/hooks/pre-receive`, 0o755);
    const loop = await controller("a");
    await expect(loop.reconcile()).rejects.toThrow(
      /refused to update gitfleet\/status: pre-receive hook declined/,
    );
    expect(() => gitIn(bare, "rev-parse", "--verify", "-q", "gitfleet/status")).toThrow();
  });

  it("fails with a clear error, changing nothing, when the token is wrong", async () => {
    const loop = await controller("a", {}, { token: "wrong-token" });
    await expect(loop.reconcile()).rejects.toThrow(
      /fetching main from http:\/\/127\.0\.0\.1:\d+\/fleet\.git: .*401/,
    );
    expect(() => gitIn(bare, "rev-parse", "--verify", "-q", "gitfleet/status")).toThrow();
  });

  it("takes up a rotated token file on the next fetch and push, without being opened again", async () => {
    let accepted = "rotation-one-not-a-real-credential";
    const rotating = await startGitHttpServer(`${root}/srv`, () => accepted);
    const tokenPath = `${root}/token`;
    writeFileSync(tokenPath, `${accepted}\n`);
    try {
      const loop = await controller(
        "rotating",
        {},
        { location: `${rotating.url}/fleet.git`, credentials: tokenFile(tokenPath) },
      );
      expect((await loop.reconcile()).result).toBe("committed");
      // The forge rotates the token and the Secret's file follows: the next fetch and push use it.
      accepted = "rotation-two-not-a-real-credential";
      writeFileSync(tokenPath, accepted);
      const source = push(webReplicas(7), "web: 7 replicas");
      expect(await loop.reconcile()).toMatchObject({ result: "committed", sourceCommit: source });
      expect(gitIn(bare, "log", "-1", "--format=%s", "gitfleet/status")).toMatch(
        /^web: Deployment shop\/web 7/,
      );
      // A file still holding the old token fails the fetch, and the error does not repeat the token.
      writeFileSync(tokenPath, "rotation-one-not-a-real-credential");
      push(webReplicas(8), "web: 8 replicas");
      const failure = await loop.reconcile().catch((error: Error) => error.message);
      expect(failure).toMatch(/401/);
      expect(failure).not.toContain("rotation-");
    } finally {
      await rotating.close();
    }
  });

  it("two controllers racing: one wins, the other regenerates on the new tip, no status is lost", async () => {
    await expectRaceResolved((name, onStage) => controller(name, onStage ? { onStage } : {}), fleet);
  });
});

function countObjects(gitdir: string): number {
  return gitIn(gitdir, "rev-list", "--objects", "--all").split("\n").length;
}

// The one cache repository under a cache directory.
function readCacheDir(cache: string): string {
  return `${cache}/${readdirSync(cache).find((name) => name.endsWith(".git"))}`;
}
