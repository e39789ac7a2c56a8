import { mkdirSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { asList, asMap, type JsonMap } from "../../src/apimachinery/json.js";
import { fileTreeFromText } from "../../src/model/file-tree.js";
import { type SimulatedMember, startMember } from "../../src/sim/member-server.js";
import { appStatusPath } from "../../src/status/status-files.js";
import { gitfleetAsync } from "../helpers/cli.js";
import { commitTree, createRepo, gitIn, tempDir } from "../helpers/git-repo.js";
import { until, writeKubeconfig } from "../helpers/member.js";
import { pushController, statusFile } from "../helpers/sync-fleet.js";

/**
 * The plan's promise about room, kept: three simulated members with 8, 24 and 16 CPUs run a game of
 * one-CPU replicas divided by available replicas. A pull request asking for 60 is planned from the
 * capacity the members recorded on the status branch; the plan says which 12 fit nowhere and what
 * bounds each cluster, and once merged the members run exactly what it said, with no pod Pending.
 */
const CLUSTERS = { a: 1, b: 3, c: 2 } as const; // eight-CPU nodes each
const POOL = { cpu: "8", memory: "64Gi", pods: "110" };

const cluster = (name: string) =>
  `apiVersion: gitfleet.io/v1alpha1\nkind: Cluster\nmetadata:\n  name: ${name}\nspec:\n  provider: idc\n  region: r-${name}\n`;
const deployment = (replicas: number) => `apiVersion: apps/v1
kind: Deployment
metadata:
  name: game
spec:
  replicas: ${replicas}
  selector:
    matchLabels: {app: game}
  template:
    metadata:
      labels: {app: game}
    spec:
      containers:
        - name: game
          image: ghcr.io/example/game:1.0.0
          resources:
            requests: {cpu: "1", memory: 256Mi}
`;
const placement = (limits = "") => `apiVersion: gitfleet.io/v1alpha1
kind: Placement
metadata:
  name: game
spec:
  apps: [game]
  clusterAffinity:
    clusterNames: [a, b, c]
  replicaScheduling:
    type: Divided
    weightPreference:
      dynamicWeight: AvailableReplicas
${limits}`;

function fleet(files: Record<string, string> = {}) {
  return fileTreeFromText({
    ...Object.fromEntries(Object.keys(CLUSTERS).map((name) => [`clusters/${name}.yaml`, cluster(name)])),
    "apps/game/app.yaml":
      "apiVersion: gitfleet.io/v1alpha1\nkind: App\nmetadata:\n  name: game\nspec:\n  namespace: games\n",
    "apps/game/deployment.yaml": deployment(12),
    "placements/game.yaml": placement(),
    ...files,
  });
}

let work: { dir: string; cleanup: () => void };
let repo: string;
let members: SimulatedMember[];
let controller: Awaited<ReturnType<typeof pushController>>;

// The game's pods in a member: how many are Ready, and how many the member's scheduler left Pending.
async function gamePods(member: SimulatedMember): Promise<{ ready: number; pending: number }> {
  const list = asMap(await (await fetch(`${member.url}/api/v1/namespaces/games/pods`)).json());
  const pods = asList(list.items).map((p) => asMap(p));
  const ready = (pod: JsonMap) =>
    asList(asMap(pod.status).conditions).some((c) => asMap(c).type === "Ready" && asMap(c).status === "True");
  return {
    ready: pods.filter(ready).length,
    pending: pods.filter((p) => asMap(p.status).phase === "Pending").length,
  };
}

const decision = () =>
  asMap(asMap(asList(statusFile(repo, appStatusPath("game")).workloads)[0]).decision).clusters;

// Reconciles and syncs until the status branch's decision is `want` and the members run it.
async function settle(want: Record<string, number>): Promise<void> {
  await until(async () => {
    await controller.round();
    if (JSON.stringify(decision()) !== JSON.stringify(want)) return undefined;
    const pods = await Promise.all(members.map(gamePods));
    return pods.every((p, i) => p.ready === (want[members[i]?.name ?? ""] ?? 0)) ? true : undefined;
  }, 60_000);
}

const plan = (head: string, format = "text") =>
  gitfleetAsync([
    "plan",
    "--repo",
    repo,
    "--base",
    "main",
    "--head",
    head,
    "--status-branch",
    "gitfleet/status",
    "--format",
    format,
  ]);

function branch(name: string, files: Record<string, string>): void {
  gitIn(repo, "checkout", "-q", "-b", name, "main");
  commitTree(repo, fleet(files), name);
  gitIn(repo, "checkout", "-q", "main");
}

beforeAll(async () => {
  work = tempDir("gitfleet-plan-fits-");
  repo = `${work.dir}/fleet`;
  members = await Promise.all(
    Object.entries(CLUSTERS).map(([name, count]) =>
      startMember({ name, world: { nodePools: [{ count, allocatable: POOL }], readyDelayMs: 20 } }),
    ),
  );
  const kubeconfig = writeKubeconfig(`${work.dir}/members.kubeconfig`, members);
  mkdirSync(repo);
  createRepo(repo, fleet());
  controller = await pushController(repo, kubeconfig);
  // Once the members' capacity is recorded, the division by it: 8, 24 and 16 CPUs give 2, 6 and 4.
  await settle({ a: 2, b: 6, c: 4 });
}, 120_000);

afterAll(async () => {
  await Promise.all((members ?? []).map((m) => m.close()));
  work?.cleanup();
});

describe("what fits, planned from the recorded capacity", () => {
  it("says which replicas fit nowhere and what bounds each cluster (golden), and the members then run exactly that", async () => {
    branch("sixty", { "apps/game/deployment.yaml": deployment(60) });
    const text = await plan("sixty");
    expect(text.code).toBe(2);
    await expect(text.stdout).toMatchFileSnapshot("../golden/plan/fits-shortfall.txt");
    await expect((await plan("sixty", "markdown")).stdout).toMatchFileSnapshot(
      "../golden/plan/fits-shortfall.md",
    );
    const json = JSON.parse((await plan("sixty", "json")).stdout) as {
      distributions: { after: Record<string, number> }[];
      unplaced: { unplaced: number }[];
    };
    const after = json.distributions[0]?.after ?? {};
    expect(json.unplaced.map((u) => u.unplaced)).toEqual([12]);

    gitIn(repo, "merge", "-q", "--ff-only", "sixty");
    await settle(after);
    // Every replica the plan placed runs; none waits for room (the 12 it could not place were never made).
    const pods = await Promise.all(members.map(gamePods));
    expect(pods.map((p) => p.pending)).toEqual([0, 0, 0]);
    expect(pods.reduce((n, p) => n + p.ready, 0)).toBe(60 - 12);
    const record = asMap(asList(statusFile(repo, appStatusPath("game")).workloads)[0]);
    expect(record.unplaced).toBe(12);
    expect(record.shortfall).toBe(
      "12 of 60 replicas of Deployment games/game fit nowhere: the selected clusters fit 48 (cpu)",
    );
    const status = await gitfleetAsync(["status", "--repo", repo, "--status-branch", "gitfleet/status"]);
    expect(status.stdout).toContain(
      "Fit nowhere:\n  game: 12 of 60 replicas of Deployment games/game fit nowhere: the selected clusters fit 48 (cpu)",
    );
  }, 120_000);

  it("names a cluster at its maxReplicas, and says when a change lets every replica fit again (golden)", async () => {
    branch("capped", {
      "apps/game/deployment.yaml": deployment(60),
      "placements/game.yaml": placement(
        "    clusterLimits:\n      - targetCluster: {clusterNames: [b]}\n        maxReplicas: 20\n",
      ),
    });
    await expect((await plan("capped")).stdout).toMatchFileSnapshot("../golden/plan/fits-capped.txt");
    branch("forty", { "apps/game/deployment.yaml": deployment(40) });
    const forty = await plan("forty");
    expect(forty.code).toBe(2);
    await expect(forty.stdout).toMatchFileSnapshot("../golden/plan/fits-freed.txt");
  }, 60_000);

  it("fails the plan on replicas that fit nowhere when the base's fleet.yaml says so", async () => {
    const policy = {
      "fleet.yaml":
        "apiVersion: gitfleet.io/v1alpha1\nkind: Fleet\nmetadata:\n  name: games\nspec:\n  plan:\n    unplacedReplicas: Fail\n",
      "apps/game/deployment.yaml": deployment(60),
    };
    // The head alone asking for Fail does not fail it: the base's policy applies.
    branch("asks-fail", { ...policy, "apps/game/deployment.yaml": deployment(70) });
    expect((await plan("asks-fail")).code).toBe(2);
    commitTree(repo, fleet(policy), "fail on unplaced replicas");
    branch("seventy", { ...policy, "apps/game/deployment.yaml": deployment(70) });
    const seventy = await plan("seventy");
    expect(seventy.code).toBe(3);
    expect(seventy.stdout).toContain(
      "! 22 of 70 replicas of Deployment games/game fit nowhere: the selected clusters fit 48 (cpu) (was 12) — fails this plan (spec.plan.unplacedReplicas: Fail)",
    );
    // A change that places every replica passes.
    branch("fits", { ...policy, "apps/game/deployment.yaml": deployment(48) });
    expect((await plan("fits")).code).toBe(2);
  }, 60_000);
});
