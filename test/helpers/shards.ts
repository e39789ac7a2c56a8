import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import { asList, asMap } from "../../src/apimachinery/json.js";
import { fileTreeFromText } from "../../src/model/file-tree.js";
import { assignShards, clustersOfShard } from "../../src/model/shard-assignment.js";
import { readEmittedYaml } from "../../src/render/yaml-reader.js";
import { type MemberRequest, type SimulatedMember, startMember } from "../../src/sim/member-server.js";
import { appStatusPath } from "../../src/status/status-files.js";
import { commitTree, createRepo, gitIn } from "./git-repo.js";
import { until, writeKubeconfig } from "./member.js";
import { MINIMAL_FLEET, webDeployment } from "./minimal-fleet.js";
import { leads, push, type Replica, type ReplicaSetup, reconciled, startReplica } from "./replicas.js";
import { clusterYaml } from "./two-clusters.js";

/**
 * The sharded scenario both test tiers run: four simulated members (each logging who sends it what)
 * over two `gitfleet run --leader-elect --shards 2` processes whose Leases live in a management
 * cluster. Each member is written to by exactly one process — the holder of its shard — and when a
 * holder is killed while one of its members is down, the survivor takes the shard over within the
 * Lease, syncs the shard's members, and the down member still fails over, its NotReady clock
 * continuing from what its first holder observed.
 */
export interface ShardScenarioResult {
  /** From the SIGKILL to the survivor holding the shard. */
  readonly takeoverMs: number;
  readonly shardOf: ReadonlyMap<string, number>;
}

const FLEET_YAML = `apiVersion: gitfleet.io/v1alpha1
kind: Fleet
metadata:
  name: sharded
spec:
  clusterHealth:
    probeInterval: 300ms
    probeTimeout: 1s
    failureThreshold: 2
    successThreshold: 1
    noExecuteAfter: 2s
  statusInterval: 500ms
`;

// The minimal fleet's Divided placement of web, failing over at once when a member's NoExecute taint comes.
const PLACEMENT = `${MINIMAL_FLEET["placements/web.yaml"]}  failover:
    cluster:
      tolerationSeconds: 0
      purgeMode: Directly
`;

/** Four member names that consistent hashing divides two and two over two shards. */
export function fourMembers(): string[] {
  for (let i = 0; ; i++) {
    const names = ["a", "b", "c", "d"].map((letter) => `member-${letter}${i}`);
    const assignment = assignShards(names, 2);
    if (clustersOfShard(assignment, 0).length === 2) return names;
  }
}

// The fleet; each step changes the pods' CPU request, so every member's Deployment changes whatever
// the replicas' division (which failover moves) gives it.
function fleet(names: readonly string[], cpu: string) {
  const files: Record<string, string> = {
    "fleet.yaml": FLEET_YAML,
    "apps/web/app.yaml":
      "apiVersion: gitfleet.io/v1alpha1\nkind: App\nmetadata:\n  name: web\nspec:\n  namespace: shop\n",
    "apps/web/deployment.yaml": webDeployment(8, cpu),
    "placements/web.yaml": PLACEMENT,
  };
  for (const name of names) files[`clusters/${name}.yaml`] = clusterYaml(name);
  return fileTreeFromText(files);
}

const DEPLOYMENT_PATH = "/apis/apps/v1/namespaces/shop/deployments/web";

/** Which process a request came from: its User-Agent names the replica's Lease identity. */
const writerOf = (request: MemberRequest) => /^gitfleet \(([^_)]+)_/.exec(request.userAgent)?.[1];

const writes = (log: readonly MemberRequest[]) => log.filter((r) => r.method !== "GET");

function statusYaml(repo: string, path: string): Record<string, unknown> | undefined {
  try {
    return asMap(readEmittedYaml(gitIn(repo, "show", `gitfleet/status:${path}`)));
  } catch {
    return undefined;
  }
}

/** Which shards a replica holds, by what it said: each one gained, less those it gave up since. */
function held(replica: Replica): Set<number> {
  const shards = new Set<number>();
  for (const r of replica.records) {
    if (typeof r.shard !== "number") continue;
    if (String(r.msg).startsWith("holding shard")) shards.add(r.shard);
    if (String(r.msg).startsWith("gave shard")) shards.delete(r.shard);
  }
  return shards;
}

export async function shardScenario(
  setup: Omit<ReplicaSetup, "repo" | "args"> & { readonly dir: string },
  leaseMs: number,
): Promise<ShardScenarioResult> {
  const names = fourMembers();
  const shardOf = assignShards(names, 2);
  const logs = new Map<string, MemberRequest[]>(names.map((n) => [n, []]));
  const members = new Map<string, SimulatedMember>();
  for (const name of names)
    members.set(name, await startMember({ name, onRequest: (r) => logs.get(name)?.push(r) }));
  const kubeconfig = writeKubeconfig(join(setup.dir, "members.kubeconfig"), [...members.values()]);
  const repo = join(setup.dir, "sharded-fleet");
  mkdirSync(repo);
  createRepo(repo, fleet(names, "10m"));
  const replicaSetup: ReplicaSetup = { ...setup, repo, args: ["--shards", "2", "--kubeconfig", kubeconfig] };
  const replicas = [
    await startReplica(replicaSetup, "holder-a"),
    await startReplica(replicaSetup, "holder-b"),
  ];
  try {
    // Each process holds one shard (a second only after waiting its turn), and one of them leads.
    await until(() => (replicas.every((r) => held(r).size === 1) ? true : undefined), leaseMs * 6);
    const holderOf = (shard: number) => replicas.find((r) => held(r).has(shard)) as Replica;
    expect(holderOf(0)).not.toBe(holderOf(1));
    // Each says so on /metrics.
    for (const replica of replicas) await expectHeldMetric(replica);
    const leader = await until(() => replicas.find(leads), leaseMs * 6);
    await reconciled(repo, gitIn(repo, "rev-parse", "main"), 60_000);

    // Every member gets the Deployment, written by the holder of its shard and by no other process.
    await expectOneWriterEach({
      names,
      logs,
      members,
      writerOf: (n) => holderOf(shardOf.get(n) as number).id,
    });

    // The shard of the replica that does not lead: one of its members goes down, and once the status
    // branch records it NotReady, its holder is killed.
    const firstHolder = new Map(names.map((n) => [n, holderOf(shardOf.get(n) as number).id]));
    const victim = replicas.find((r) => r !== leader) as Replica;
    const survivor = leader;
    const shard = [...held(victim)][0] as number;
    const [down, up] = clustersOfShard(shardOf, shard) as [string, string];
    await (members.get(down) as SimulatedMember).faults.down();
    const since = await until(() => {
      const condition = asMap(asMap(statusYaml(repo, `status/clusters/${down}.yaml`)?.observed).condition);
      return condition.ready === false ? String(condition.since) : undefined;
    }, 30_000);
    const killedAt = Date.now();
    const before = writes(logs.get(up) ?? []).length;
    victim.child.kill("SIGKILL");
    await until(() => (held(survivor).has(shard) ? true : undefined), leaseMs * 3);
    const takeoverMs = Date.now() - killedAt;

    // A new source commit: the survivor syncs the taken-over shard's live member.
    const next = commitTree(repo, fleet(names, "20m"), "web: 20m of CPU");
    expect((await push(survivor, next)).status).toBe(202);
    await reconciled(repo, next, 30_000);
    await until(
      () =>
        writes(logs.get(up) ?? [])
          .slice(before)
          .some((r) => writerOf(r) === survivor.id && r.path.startsWith(DEPLOYMENT_PATH))
          ? true
          : undefined,
      30_000,
    );
    // The down member fails over: its replicas leave it, and its NotReady clock did not restart.
    await until(() => {
      const workload = asMap(asList(statusYaml(repo, appStatusPath("web"))?.workloads)[0]);
      const clusters = asMap(asMap(workload.decision).clusters);
      return Number(clusters[down] ?? 0) === 0 && Object.keys(clusters).length > 0 ? true : undefined;
    }, 30_000);
    const condition = asMap(asMap(statusYaml(repo, `status/clusters/${down}.yaml`)?.observed).condition);
    expect(condition.ready).toBe(false);
    expect(String(condition.since)).toBe(since);
    // No other process wrote to a member after the kill but the survivor.
    for (const name of names)
      for (const request of writes(logs.get(name) ?? []).slice(name === up ? before : 0))
        expect([survivor.id, firstHolder.get(name)]).toContain(writerOf(request));

    // A replica comes back: no shard is free, so it asks, and the survivor gives one up to it.
    replicas.push(await comeBack({ replicaSetup, survivor, logs, names, shardOf, down, repo, leaseMs }));
    return { takeoverMs, shardOf };
  } finally {
    for (const replica of replicas) replica.child.kill("SIGKILL");
    for (const member of members.values()) await member.close();
  }
}

// A replica started again after a takeover: it asks for its share, the survivor gives one shard up
// to it, and the next push syncs that shard's live members from the newcomer alone.
async function comeBack(context: {
  readonly replicaSetup: ReplicaSetup;
  readonly survivor: Replica;
  readonly logs: ReadonlyMap<string, MemberRequest[]>;
  readonly names: readonly string[];
  readonly shardOf: ReadonlyMap<string, number>;
  readonly down: string;
  readonly repo: string;
  readonly leaseMs: number;
}): Promise<Replica> {
  const { replicaSetup, survivor, logs, names, shardOf, down, repo, leaseMs } = context;
  const back = await startReplica(replicaSetup, "holder-c");
  await until(() => (held(back).size === 1 && held(survivor).size === 1 ? true : undefined), leaseMs * 8);
  const [regained] = [...held(back)] as [number];
  const marks = new Map(names.map((n) => [n, writes(logs.get(n) ?? []).length]));
  const later = commitTree(repo, fleet(names, "30m"), "web: 30m of CPU");
  expect((await push(survivor, later)).status).toBe(202);
  await reconciled(repo, later, 30_000);
  const alive = clustersOfShard(shardOf, regained).filter((n) => n !== down);
  const since = (n: string) => writes(logs.get(n) ?? []).slice(marks.get(n));
  await until(
    () => (alive.every((n) => since(n).some((r) => writerOf(r) === back.id)) ? true : undefined),
    30_000,
  );
  // Once it gave the shard up, the survivor wrote nothing more to its members.
  expect(survivor.records.some((r) => String(r.msg).startsWith("gave shard"))).toBe(true);
  for (const n of alive) expect(since(n).every((r) => writerOf(r) === back.id)).toBe(true);
  return back;
}

// The shards a replica holds, as its /metrics says them.
async function expectHeldMetric(replica: Replica): Promise<void> {
  const metrics = await (await fetch(`${replica.url}/metrics`)).text();
  for (const shard of [0, 1])
    expect(metrics).toContain(`gitfleet_shard_held{shard="${shard}"} ${held(replica).has(shard) ? 1 : 0}`);
}

// Every member gets the Deployment, each written to by one process alone (the one named), and the
// server's own record agrees: one field manager applied it.
async function expectOneWriterEach(context: {
  readonly names: readonly string[];
  readonly logs: ReadonlyMap<string, MemberRequest[]>;
  readonly members: ReadonlyMap<string, SimulatedMember>;
  readonly writerOf: (member: string) => string;
}): Promise<void> {
  const { names, logs, members } = context;
  const deployed = (n: string) => writes(logs.get(n) ?? []).some((r) => r.path.startsWith(DEPLOYMENT_PATH));
  await until(() => (names.every(deployed) ? true : undefined), 30_000);
  for (const name of names) {
    const writers = new Set(writes(logs.get(name) ?? []).map(writerOf));
    expect([...writers], name).toEqual([context.writerOf(name)]);
    const live = (members.get(name) as SimulatedMember).api.handle({
      method: "GET",
      path: DEPLOYMENT_PATH,
      query: new URLSearchParams(),
      contentType: "",
      body: undefined,
    });
    const managers = asList(asMap(asMap(live.body).metadata).managedFields).map((m) => asMap(m).manager);
    expect(managers.filter((m) => m === "gitfleet")).toHaveLength(1);
  }
}
