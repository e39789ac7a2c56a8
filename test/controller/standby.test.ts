import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FencedError } from "../../src/controller/leadership/leader-lease.js";
import { Reconciler } from "../../src/controller/reconciler.js";
import { FleetRepo } from "../../src/git/fleet-repo.js";
import { createLogger } from "../../src/log/logger.js";
import { appStatusPath } from "../../src/status/status-files.js";
import { statusMessage } from "../../src/status/status-message.js";
import { BASE_SPEC, fleetFiles } from "../helpers/fleet-spec.js";
import { commitTree, createRepo, gitIn, tempDir } from "../helpers/git-repo.js";

/**
 * Replicas of one controller on one repository: a standby follows the status branch (its state warm,
 * nothing written) and a replica that may not write (no Lease) leaves the status branch as it is.
 */
let dir: string;
let cleanup: () => void;

beforeEach(() => {
  ({ dir, cleanup } = tempDir("gitfleet-standby-"));
});
afterEach(() => cleanup());

async function replica(id: string, fence?: () => void, secretDigestKey?: Uint8Array): Promise<Reconciler> {
  return new Reconciler({
    repo: await FleetRepo.open({ location: dir }),
    branch: "main",
    statusBranch: "gitfleet/status",
    author: { name: "gitfleet", email: "gitfleet@example.com" },
    controllerId: id,
    logger: createLogger({ level: "silent" }),
    ...(fence ? { fence } : {}),
    ...(secretDigestKey ? { secretDigestKey } : {}),
  });
}

const KEY = new Uint8Array(32).fill(1);

// The fleet with a Secret in app api: its digest on the status branch depends on the replica's key.
function withSecret(spec: typeof BASE_SPEC) {
  const files = new Map(fleetFiles(spec));
  files.set(
    "apps/api/secret.yaml",
    new TextEncoder().encode(
      "apiVersion: v1\nkind: Secret\nmetadata:\n  name: api-token\n  namespace: shop\nstringData:\n  token: not-a-real-token\n",
    ),
  );
  return files;
}

const refuse = () => {
  throw new FencedError(
    "replica-b does not hold the leader Lease gitfleet-system/gitfleet: it writes nothing",
  );
};

describe("replicas of one controller", () => {
  it("a fenced replica renders but never moves the status branch", async () => {
    createRepo(dir, fleetFiles(BASE_SPEC));
    const fenced = await replica("replica-b", refuse);
    await expect(fenced.reconcile()).rejects.toThrow(FencedError);
    expect(() => gitIn(dir, "rev-parse", "--verify", "-q", "gitfleet/status")).toThrow();
    // The same replica, once it leads, writes.
    let leading = false;
    const elected = await replica("replica-b", () => {
      if (!leading) refuse();
    });
    await expect(elected.reconcile()).rejects.toThrow(FencedError);
    leading = true;
    expect((await elected.reconcile()).result).toBe("committed");
    expect(gitIn(dir, "rev-list", "--count", "gitfleet/status")).toBe("1");
  });

  it("a standby follows the status branch as the leader moves it, and takes over from there", async () => {
    createRepo(dir, withSecret(BASE_SPEC));
    const leader = await replica("replica-a", undefined, KEY);
    const standby = await replica("replica-b", undefined, KEY);
    // Before the leader wrote anything: the standby's state is the empty branch.
    expect(await standby.follow()).toBe("restored");
    expect(await standby.follow()).toBe("current");
    await leader.reconcile();
    expect(await standby.follow()).toBe("restored");
    expect(standby.snapshot().state.sourceCommit).toBe(leader.snapshot().state.sourceCommit);
    expect(await standby.follow()).toBe("current");
    const replicas = (n: number) =>
      commitTree(
        dir,
        withSecret({ ...BASE_SPEC, apps: BASE_SPEC.apps.map((a) => ({ ...a, replicas: n })) }),
        `${n} replicas`,
      );
    // One leader commit on top of what the standby holds: recomputed, byte for byte, not restored.
    replicas(7);
    const second = await leader.reconcile();
    expect(second.result).toBe("committed");
    expect(await standby.follow()).toBe("replayed");
    expect(standby.snapshot().state.sourceCommit).toBe(second.sourceCommit);
    expect(standby.snapshot().statusTip).toBe(second.statusCommit);
    // Two commits since its last follow: replayed one by one, oldest first.
    replicas(8);
    await leader.reconcile();
    replicas(9);
    const fourth = await leader.reconcile();
    expect(await standby.follow()).toBe("replayed");
    expect(standby.snapshot().statusTip).toBe(fourth.statusCommit);
    expect(standby.snapshot().state.sourceCommit).toBe(fourth.sourceCommit);
    // A commit the standby renders differently (another observation would): never adopted. Here a
    // replica with another secret digest key, whose render of the Secret differs from the leader's.
    const otherKey = await replica("replica-c", undefined, new Uint8Array(32).fill(7));
    expect(await otherKey.follow()).toBe("restored");
    replicas(10);
    const fifth = await leader.reconcile();
    expect(await otherKey.follow()).toBe("restored");
    expect(otherKey.snapshot().statusTip).toBe(fifth.statusCommit);
    expect(await standby.follow()).toBe("replayed");
    // The leader is gone; the standby's first round finds everything reconciled and writes nothing.
    const takeover = await standby.reconcile();
    expect(takeover).toMatchObject({ result: "up-to-date", statusCommit: fifth.statusCommit });
    expect(gitIn(dir, "rev-list", "--count", "gitfleet/status")).toBe("5");
  });

  it("a standby takes on the leader's observation commits as they are, and restores on anything else", async () => {
    createRepo(dir, fleetFiles(BASE_SPEC));
    const leader = await replica("replica-a");
    const standby = await replica("replica-b");
    await leader.reconcile();
    expect(await standby.follow()).toBe("restored");
    // What the members reported: an observed block on an app's status and an inventory file.
    const block = "observed:\n  clusters:\n    east: {health: Healthy}\n";
    const inventory = "cluster: east\nsourceCommit: x\nobjects: 0\nentries: []\n";
    expect(
      await leader.publishObserved(
        new Map([[appStatusPath("web"), block]]),
        new Map([["status/inventory/east.yaml", inventory]]),
        statusMessage("sync", "sync: east"),
      ),
    ).toBe("committed");
    expect(await standby.follow()).toBe("replayed");
    expect(standby.snapshot().statusTip).toBe(leader.snapshot().statusTip);
    expect(standby.observedBlock(appStatusPath("web"))).toBe(block);
    expect(standby.snapshot().syncFiles.get("status/inventory/east.yaml")).toBe(inventory);
    // A commit that also changes what the render wrote (a hand edit) is not an observation: restored.
    gitIn(dir, "checkout", "-q", "gitfleet/status");
    gitIn(dir, "rm", "-q", appStatusPath("docs"));
    gitIn(
      dir,
      "commit",
      "-q",
      "-m",
      "hand edit",
      "--trailer",
      `Source-Commit: ${gitIn(dir, "rev-parse", "main").trim()}`,
    );
    gitIn(dir, "checkout", "-q", "main");
    expect(await standby.follow()).toBe("restored");
  });
});
