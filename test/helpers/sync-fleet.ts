import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { afterEach, beforeEach } from "vitest";
import { asMap, type JsonMap } from "../../src/apimachinery/json.js";
import { Reconciler, type ReconcilerOptions } from "../../src/controller/reconciler.js";
import { syncingController } from "../../src/controller/syncing-controller.js";
import type { SopsKeyring } from "../../src/credentials/sops-keyring.js";
import { commitSigner } from "../../src/git/commit-signer.js";
import { commitVerifier } from "../../src/git/commit-verifier.js";
import { FleetRepo } from "../../src/git/fleet-repo.js";
import type { BackupStores } from "../../src/kube/backup-store-secret.js";
import { createLogger } from "../../src/log/logger.js";
import { readEmittedYaml } from "../../src/render/yaml-reader.js";
import { type SimulatedMember, startMember } from "../../src/sim/member-server.js";
import { DEFAULT_PROFILE } from "../../src/sim/simulation-profile.js";
import type { WorldOptions } from "../../src/sim/world.js";
import { branchFiles, tempDir } from "./git-repo.js";
import { writeKubeconfig } from "./member.js";

/** Simulated members with nodes and pods, one per cluster name, and a kubeconfig for them. */
export async function startMembers(
  names: readonly string[],
  kubeconfigPath: string,
  world: Partial<WorldOptions> = {},
): Promise<{ members: SimulatedMember[]; kubeconfig: string }> {
  const members = await Promise.all(
    names.map((name) =>
      startMember({
        name,
        world: {
          nodePools: DEFAULT_PROFILE.poolsFor(name),
          readyDelayMs: 20,
          workloads: DEFAULT_PROFILE.workloads,
          ...world,
        },
      }),
    ),
  );
  return { members, kubeconfig: writeKubeconfig(kubeconfigPath, members) };
}

/** The controller (reconciler, syncer) on a local repository; `round` reconciles, syncs and commits what it saw. */
export async function pushController(
  dir: string,
  kubeconfig: string,
  env: Readonly<Record<string, string>> = {},
  options: {
    readonly autoscaleIntervalMs?: number;
    readonly now?: () => number;
    /** An SSH private key file: status commits are signed with it, and verified against it. */
    readonly signingKey?: string;
    /** Told of each status commit the reconciler publishes (as gitfleet run's hooks are). */
    readonly onCommit?: ReconcilerOptions["onCommit"];
    /** What the operator bounds and allows (the flags of gitfleet run). */
    readonly policy?: ReconcilerOptions["policy"];
    /** The age keys that open sops-encrypted Secrets at sync (--sops-age-key-file). */
    readonly keyring?: SopsKeyring;
    /** The operator's off-host backup stores (--backup-stores-dir). */
    readonly backupStores?: BackupStores;
  } = {},
) {
  const logger = createLogger({ level: "silent" });
  const key = options.signingKey;
  const verify = key ? await commitVerifier({ signingKey: { format: "ssh", key } }) : undefined;
  const reconciler = new Reconciler({
    ...(key ? { sign: commitSigner("ssh", key) } : {}),
    ...(verify ? { verify } : {}),
    repo: await FleetRepo.open({ location: dir }),
    branch: "main",
    statusBranch: "gitfleet/status",
    author: { name: "gitfleet", email: "gitfleet@example.com" },
    controllerId: "test-controller",
    logger,
    ...(options.now ? { now: options.now } : {}),
    ...(options.onCommit ? { onCommit: options.onCommit } : {}),
    ...(options.policy ? { policy: options.policy } : {}),
  });
  const { syncer, controller, prober } = syncingController(reconciler, {
    connections: { kubeconfig, env },
    logger,
    statusIntervalMs: 0,
    resyncIntervalMs: 3_600_000,
    client: { retries: 1, backoffMs: 10, timeoutMs: 2000 },
    autoscaleIntervalMs: options.autoscaleIntervalMs ?? 0,
    ...(options.now ? { now: options.now } : {}),
    ...(options.keyring ? { keyring: options.keyring } : {}),
    ...(options.backupStores ? { backupStores: options.backupStores } : {}),
  });
  const round = async () => {
    controller.resyncSoon();
    await controller.reconcile();
    await syncer.idle();
    await controller.flush();
  };
  return { reconciler, controller, syncer, prober, round };
}

/** A YAML file of the status branch, parsed. */
export function statusFile(dir: string, path: string): JsonMap {
  return asMap(readEmittedYaml(branchFiles(dir, "gitfleet/status").get(path) ?? "") ?? {});
}

/** An object in a member, or undefined when it is not there. */
export async function liveObject(member: SimulatedMember, path: string): Promise<JsonMap | undefined> {
  const response = await fetch(`${member.url}${path}`);
  return response.status === 404 ? undefined : ((await response.json()) as JsonMap);
}

export const kubeconfigNextTo = (dir: string) => join(dir, "..", `${dir.split("/").pop()}.kubeconfig`);

/**
 * For each test: a temporary directory for the fleet repo and simulated members (with nodes and
 * pods) for the clusters, closed and removed afterwards. Read the fields inside tests.
 */
export function membersPerTest(
  prefix: string,
  clusters: readonly string[],
  world: Partial<WorldOptions> = {},
) {
  const fleet = { dir: "", members: [] as SimulatedMember[], kubeconfig: "" };
  let cleanup = () => {};
  beforeEach(async () => {
    ({ dir: fleet.dir, cleanup } = tempDir(prefix));
    ({ members: fleet.members, kubeconfig: fleet.kubeconfig } = await startMembers(
      clusters,
      kubeconfigNextTo(fleet.dir),
      world,
    ));
  });
  afterEach(async () => {
    await Promise.all(fleet.members.map((m) => m.close()));
    cleanup();
  });
  return fleet;
}

/** A new SSH signing key (ssh-keygen) in `dir`; returns the private key's path. */
export function sshSigningKey(dir: string, name = "signing-key"): string {
  const key = join(dir, name);
  execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "gitfleet-test", "-f", key]);
  return key;
}
