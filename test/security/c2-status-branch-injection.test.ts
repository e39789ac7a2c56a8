import type { ChildProcess } from "node:child_process";
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { asList, asMap, type JsonMap } from "../../src/apimachinery/json.js";
import { fileTreeFromText } from "../../src/model/file-tree.js";
import type { SimulatedMember } from "../../src/sim/member-server.js";
import { gitfleetAsync } from "../helpers/cli.js";
import { branchFiles, createRepo, gitIn, tempDir } from "../helpers/git-repo.js";
import { spawnRun } from "../helpers/gitfleet-run.js";
import { until } from "../helpers/member.js";
import { MINIMAL_FLEET } from "../helpers/minimal-fleet.js";
import { liveObject, sshSigningKey, startMembers } from "../helpers/sync-fleet.js";

/**
 * C2 (security audit): one commit to the status branch — by anyone who may push it, such as a
 * pull-mode agent whose token lives in a member — made the controller apply arbitrary objects to
 * every member: it restored rendered/ from the branch and synced it. Desired state now comes from
 * the source branch only: a tip gitfleet did not write is taken as it is only when its signature
 * verifies against trusted keys; otherwise the source is rendered again, the branch's objects are
 * never applied, and the branch is repaired. A pull-mode agent applies only a verified tip.
 */

const WEB = "rendered/west/shop/apps.Deployment.web.yaml";
const INJECTED = "rendered/west/kube-system/core.ConfigMap.injected.yaml";
const EVIL = "evil.example/cryptominer:latest";

let dir: string;
let cleanup: () => void;
let members: SimulatedMember[] = [];
let child: ChildProcess | undefined;
beforeEach(() => {
  ({ dir, cleanup } = tempDir("gitfleet-c2-"));
});
afterEach(async () => {
  child?.kill("SIGKILL");
  child = undefined;
  await Promise.all(members.map((m) => m.close()));
  members = [];
  cleanup();
});

// The audit's tampering, with git's plumbing: west's web runs the attacker's image, and a ConfigMap
// appears in kube-system; a commit on top of the status branch, as an agent's token could push.
// Made again on the new tip when the controller moved the branch in between, as an attacker would.
function tamper(repo: string, signWith?: string): string {
  for (let attempt = 1; ; attempt++) {
    try {
      return tamperOnce(repo, signWith);
    } catch (error) {
      if (attempt >= 10) throw error;
    }
  }
}

function tamperOnce(repo: string, signWith?: string): string {
  const tip = gitIn(repo, "rev-parse", "gitfleet/status");
  const index = join(dir, "tamper.idx");
  const env = { ...process.env, GIT_INDEX_FILE: index };
  const git = (args: string[], input?: string) =>
    execFileSync("git", args, {
      cwd: repo,
      env,
      encoding: "utf8",
      stdio: ["pipe", "pipe", "pipe"],
      ...(input === undefined ? {} : { input }),
    }).trim();
  git(["read-tree", tip]);
  const web = git(["show", `${tip}:${WEB}`]).replace(/image: .*/, `image: ${EVIL}`);
  git(["update-index", "--cacheinfo", `100644,${git(["hash-object", "-w", "--stdin"], `${web}\n`)},${WEB}`]);
  const injected =
    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: injected\n  namespace: kube-system\n  labels:\n    app.kubernetes.io/managed-by: gitfleet\n    gitfleet.io/app: web\ndata:\n  from: status-branch-writer\n";
  git([
    "update-index",
    "--add",
    "--cacheinfo",
    `100644,${git(["hash-object", "-w", "--stdin"], injected)},${INJECTED}`,
  ]);
  const signing = signWith ? ["-c", "gpg.format=ssh", "-c", `user.signingkey=${signWith}`] : [];
  const commit = git([
    "-c",
    "user.name=agent",
    "-c",
    "user.email=agent@idc-east-2",
    ...signing,
    "commit-tree",
    ...(signWith ? ["-S"] : []),
    git(["write-tree"]),
    "-p",
    tip,
    "-m",
    "agent idc-east-2: report",
  ]);
  git(["update-ref", "refs/heads/gitfleet/status", commit, tip]);
  return commit;
}

const images = (deployment: JsonMap | undefined) =>
  asList(asMap(asMap(asMap(deployment?.spec).template).spec).containers).map((c) => asMap(c).image);

describe("C2: the status branch cannot inject desired state", () => {
  it.each([
    ["without signing", false],
    ["with signing, the tampered tip signed by no trusted key", true],
  ])(
    "gitfleet run %s: the attacker's objects are never applied, and the branch is repaired",
    async (_name, signed) => {
      const started = await startMembers(["east", "west"], join(dir, "kubeconfig"));
      members = started.members;
      const repo = join(dir, "repo");
      mkdirSync(repo);
      createRepo(repo, fileTreeFromText(MINIMAL_FLEET));
      const key = signed ? ["--signing-key", sshSigningKey(dir)] : [];
      const run = await spawnRun(
        [
          "--repo",
          repo,
          "--kubeconfig",
          started.kubeconfig,
          "--listen",
          "127.0.0.1:0",
          "--interval",
          "1s",
          ...key,
        ],
        {},
      );
      child = run.child;
      const west = members.find((m) => m.name === "west") as SimulatedMember;
      await until(
        async () =>
          images(await liveObject(west, "/apis/apps/v1/namespaces/shop/deployments/web")).length > 0
            ? true
            : undefined,
        20_000,
      );
      const clean = branchFiles(repo, "gitfleet/status").get(WEB);
      const tampered = tamper(repo);
      // The next rounds find the foreign tip, render the source again and repair the branch.
      await until(() => {
        const tip = gitIn(repo, "rev-parse", "gitfleet/status");
        return tip !== tampered && branchFiles(repo, "gitfleet/status").get(WEB) === clean ? true : undefined;
      }, 20_000);
      const files = branchFiles(repo, "gitfleet/status");
      expect(files.has(INJECTED)).toBe(false);
      expect(gitIn(repo, "log", "--format=%B", `${tampered}..gitfleet/status`)).toMatch(
        /^repair: the status branch held what gitfleet does not render from source commit [0-9a-f]{7}; 1 files written again, 1 removed$/m,
      );
      // A few more rounds: west never ran the attacker's image nor holds the injected ConfigMap.
      for (let i = 0; i < 6; i++) {
        expect(images(await liveObject(west, "/apis/apps/v1/namespaces/shop/deployments/web"))).toEqual([
          "ghcr.io/example/web:1.0.0",
        ]);
        expect(await liveObject(west, "/api/v1/namespaces/kube-system/configmaps/injected")).toBeUndefined();
        // A fixed wait: the running controller gets time to act, and nothing may reach west.
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      const messages = run.records.map((r) => String(r.msg));
      expect(messages.some((m) => m.startsWith("rebuilt state by rendering the source again"))).toBe(true);
      if (signed)
        expect(messages).toContain(
          "the status branch's tip is not signed by a trusted key: nothing on it is applied; rendering the source again",
        );
    },
    90_000,
  );

  it("a pull-mode agent applies only a tip a trusted key signed, and refuses a tampered one", async () => {
    const started = await startMembers(["east", "west"], join(dir, "kubeconfig"));
    members = started.members;
    const repo = join(dir, "repo");
    mkdirSync(repo);
    const fleet = {
      ...MINIMAL_FLEET,
      "clusters/west.yaml": `${MINIMAL_FLEET["clusters/west.yaml"]}  connection:\n    mode: pull\n`,
    };
    createRepo(repo, fileTreeFromText(fleet));
    const key = sshSigningKey(dir);
    writeFileSync(join(dir, "allowed_signers"), `controller ${readFileSync(`${key}.pub`, "utf8")}`);
    const reconciled = await gitfleetAsync([
      "reconcile",
      "--repo",
      repo,
      "--once",
      "--no-sync",
      "--signing-key",
      key,
      "--log-level",
      "error",
    ]);
    expect(reconciled.code).toBe(0);
    const agent = (...extra: string[]) =>
      gitfleetAsync([
        "agent",
        "--cluster",
        "west",
        "--repo",
        repo,
        "--once",
        "--kubeconfig",
        started.kubeconfig,
        "--trusted-keys",
        join(dir, "allowed_signers"),
        "--log-level",
        "error",
        ...extra,
      ]);
    const first = await agent();
    expect(first.stdout).toMatch(/^west: \d+ objects, \d+ created/);
    expect(first.code).toBe(0);
    const west = members.find((m) => m.name === "west") as SimulatedMember;
    expect(images(await liveObject(west, "/apis/apps/v1/namespaces/shop/deployments/web"))).toEqual([
      "ghcr.io/example/web:1.0.0",
    ]);
    // The agent's report is on its own branch; the status branch is untouched by it.
    expect([...branchFiles(repo, "gitfleet/status-agents/west").keys()].sort()).toEqual([
      "status/agents/west.yaml",
      "status/inventory/west.yaml",
    ]);
    const tampered = tamper(repo);
    const refused = await agent();
    expect(refused.stdout).toBe(
      `refused: the status branch's tip ${tampered.slice(0, 7)} is not signed by a trusted key (it is not signed): nothing was applied\n`,
    );
    expect(refused.code).toBe(1);
    expect(images(await liveObject(west, "/apis/apps/v1/namespaces/shop/deployments/web"))).toEqual([
      "ghcr.io/example/web:1.0.0",
    ]);
    expect(await liveObject(west, "/api/v1/namespaces/kube-system/configmaps/injected")).toBeUndefined();
    // Signed, but by a key the agent does not trust: refused alike.
    gitIn(repo, "update-ref", "refs/heads/gitfleet/status", gitIn(repo, "rev-parse", "gitfleet/status~1"));
    const forged = tamper(repo, sshSigningKey(dir, "other-key"));
    expect(gitIn(repo, "cat-file", "-p", forged)).toContain("-----BEGIN SSH SIGNATURE-----");
    const untrusted = await agent();
    expect(untrusted.stdout).toBe(
      `refused: the status branch's tip ${forged.slice(0, 7)} is not signed by a trusted key (its signature is not by a trusted key): nothing was applied\n`,
    );
    expect(untrusted.code).toBe(1);
    expect(images(await liveObject(west, "/apis/apps/v1/namespaces/shop/deployments/web"))).toEqual([
      "ghcr.io/example/web:1.0.0",
    ]);
  }, 60_000);
});
