import type { ChildProcess } from "node:child_process";
import { createHmac } from "node:crypto";
import { expect } from "vitest";
import { BASE_SPEC, fleetFiles } from "./fleet-spec.js";
import { commitTree, gitIn } from "./git-repo.js";
import { spawnRun } from "./gitfleet-run.js";

/**
 * Replicas of `gitfleet run --leader-elect` on one fleet repository, as the Helm chart runs them
 * (the same flags; the Lease in a management cluster reached by a kubeconfig), and the scenario both
 * test tiers run against them: one leader, a kill and a takeover, a round relayed by a standby, a
 * paused leader fenced.
 */
export const WEBHOOK_SECRET = "webhook-secret-for-replica-tests";

export interface Replica {
  readonly id: string;
  readonly child: ChildProcess;
  readonly url: string;
  readonly records: Record<string, unknown>[];
  /** Resolves with the exit code once the process ended. */
  readonly exited: Promise<number | null>;
}

export interface ReplicaSetup {
  /** The fleet repository (a work tree whose status branch the replicas write). */
  readonly repo: string;
  readonly kubeconfig: string;
  readonly context: string;
  readonly namespace: string;
  /** Lease duration, renew deadline and retry period as flags take them (e.g. "3s"). */
  readonly timings: { readonly lease: string; readonly deadline: string; readonly retry: string };
  /** Flags every replica gets besides these (e.g. --no-sync, or members' kubeconfig). */
  readonly args: readonly string[];
}

export async function startReplica(setup: ReplicaSetup, id: string): Promise<Replica> {
  const run = await spawnRun(
    [
      "--repo",
      setup.repo,
      "--listen",
      "127.0.0.1:0",
      "--interval",
      "1h",
      "--controller-id",
      id,
      "--leader-elect",
      "--leader-elect-namespace",
      setup.namespace,
      "--leader-elect-lease-duration",
      setup.timings.lease,
      "--leader-elect-renew-deadline",
      setup.timings.deadline,
      "--leader-elect-retry-period",
      setup.timings.retry,
      "--management-kubeconfig",
      setup.kubeconfig,
      "--management-context",
      setup.context,
      ...setup.args,
    ],
    { GITFLEET_WEBHOOK_SECRET: WEBHOOK_SECRET },
  );
  const exited = new Promise<number | null>((resolve) => {
    if (run.child.exitCode !== null) resolve(run.child.exitCode);
    else run.child.once("exit", (code) => resolve(code));
  });
  return { id, ...run, exited };
}

/** Whether a replica has said it leads. */
export const leads = (replica: Replica) =>
  replica.records.some((r) => r.msg === "leading: reconciling and syncing");

/** A signed push webhook for `after` on main, sent to one replica. */
export function push(replica: Replica, after: string): Promise<Response> {
  const payload = JSON.stringify({ ref: "refs/heads/main", after });
  return fetch(`${replica.url}/webhook`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-github-event": "push",
      "x-hub-signature-256": `sha256=${createHmac("sha256", WEBHOOK_SECRET).update(payload).digest("hex")}`,
    },
    body: payload,
  });
}

/** The status branch's commits, oldest first: the source commit and controller each names. */
export function statusCommits(
  repo: string,
): { source: string; controller: string; event: string; oid: string }[] {
  let log: string;
  try {
    log = gitIn(
      repo,
      "log",
      "--reverse",
      "--format=%H %(trailers:key=Source-Commit,valueonly,separator=) %(trailers:key=Gitfleet-Controller,valueonly,separator=) %(trailers:key=Gitfleet-Event,valueonly,separator=)",
      "gitfleet/status",
    );
  } catch {
    return [];
  }
  return log
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const [oid = "", source = "", controller = "", event = ""] = line.split(" ");
      return { oid, source, controller, event };
    });
}

/** Commits a change of every app's replicas to the source branch. */
export function commitReplicas(repo: string, replicas: number): string {
  return commitTree(
    repo,
    fleetFiles({ ...BASE_SPEC, apps: BASE_SPEC.apps.map((a) => ({ ...a, replicas })) }),
    `every app: ${replicas} replicas`,
  );
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function eventually<T>(
  what: string,
  probe: () => Promise<T | undefined> | T | undefined,
  timeoutMs: number,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

/** The one replica that leads, once one does (and never two at a time). */
export async function leaderOf(replicas: readonly Replica[], timeoutMs: number): Promise<Replica> {
  return eventually(
    "a leader",
    () => {
      const leading = replicas.filter(
        (r) => r.child.exitCode === null && r.child.signalCode === null && leads(r),
      );
      expect(leading.length).toBeLessThanOrEqual(1);
      return leading[0];
    },
    timeoutMs,
  );
}

/** Waits until the status branch holds a commit reconciling `source`. */
export function reconciled(repo: string, source: string, timeoutMs: number) {
  return eventually(
    `a status commit for ${source.slice(0, 7)}`,
    () => statusCommits(repo).find((c) => c.source === source && c.event === "reconcile"),
    timeoutMs,
  );
}

/**
 * The high-availability scenario: three replicas, one leader; a push relayed by a standby; the
 * leader killed and another taking over within the Lease duration, reconciling the next commit
 * once; a leader paused past its renew deadline that, resumed with a round asked of it, writes
 * nothing and exits. `leaseMs` is the Lease duration the timings give.
 */
export async function haScenario(setup: ReplicaSetup, leaseMs: number): Promise<{ takeoverMs: number }> {
  const replicas = await Promise.all(
    ["replica-a", "replica-b", "replica-c"].map((id) => startReplica(setup, id)),
  );
  try {
    const first = await leaderOf(replicas, leaseMs * 4);
    await reconciled(setup.repo, gitIn(setup.repo, "rev-parse", "main"), 60_000);
    // The leader says so on /metrics; standbys do not.
    for (const replica of replicas) {
      const metrics = await (await fetch(`${replica.url}/metrics`)).text();
      expect(metrics).toContain(`gitfleet_leader ${replica === first ? 1 : 0}`);
    }
    // Standbys answer ready once they follow the status branch (the Service keeps them for the dashboard).
    for (const replica of replicas)
      await eventually(
        "ready replicas",
        async () => ((await fetch(`${replica.url}/readyz`)).status === 200 ? true : undefined),
        30_000,
      );

    // A push that reaches a standby is relayed to the leader, which reconciles it once.
    const standby = replicas.find((r) => r !== first) as Replica;
    const relayed = commitReplicas(setup.repo, 4);
    expect((await push(standby, relayed)).status).toBe(202);
    const relayedCommit = await reconciled(setup.repo, relayed, 30_000);
    expect(relayedCommit.controller).toBe(first.id);

    // The leader is killed: another takes over within the Lease duration (and a retry period).
    const killedAt = Date.now();
    first.child.kill("SIGKILL");
    const second = await leaderOf(
      replicas.filter((r) => r !== first),
      leaseMs * 3,
    );
    const takeoverMs = Date.now() - killedAt;
    const next = commitReplicas(setup.repo, 5);
    expect((await push(second, next)).status).toBe(202);
    expect((await reconciled(setup.repo, next, 30_000)).controller).toBe(second.id);

    // The new leader is paused past its renew deadline (and the lease): the third replica takes over.
    const tipAtPause = gitIn(setup.repo, "rev-parse", "gitfleet/status");
    second.child.kill("SIGSTOP");
    const third = await leaderOf(
      replicas.filter((r) => r !== first && r !== second),
      leaseMs * 3,
    );
    // A round asked of the paused one waits in its socket; resumed, it must write nothing.
    const late = commitReplicas(setup.repo, 6);
    const asked = push(second, late).catch(() => undefined);
    second.child.kill("SIGCONT");
    expect(await second.exited).toBe(1);
    await asked;
    expect(
      second.records.some((r) => r.msg === "leader election lost: stopping, a restart stands by again"),
    ).toBe(true);
    // The third leader reconciles the late commit (asked of it directly), and every commit after the
    // pause is the third's: nothing from the fenced replica, no source commit reconciled twice.
    expect((await push(third, late)).status).toBe(202);
    await reconciled(setup.repo, late, 30_000);
    const commits = statusCommits(setup.repo);
    const afterPause = commits.slice(commits.findIndex((c) => c.oid === tipAtPause) + 1);
    expect(afterPause.length).toBeGreaterThan(0);
    expect(afterPause.every((c) => c.controller === third.id)).toBe(true);
    const sources = commits.filter((c) => c.event === "reconcile").map((c) => c.source);
    expect(new Set(sources).size).toBe(sources.length);
    return { takeoverMs };
  } finally {
    for (const replica of replicas) {
      replica.child.kill("SIGCONT");
      replica.child.kill("SIGKILL");
    }
  }
}
