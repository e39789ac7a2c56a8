import { readFile } from "node:fs/promises";
import type { Logger } from "pino";
import {
  type BuiltController,
  buildController,
  type ControllerConfig,
} from "../../controller/build-controller.js";
import {
  DEFAULT_STATUS_INTERVAL_MS,
  type FleetSettings,
  readFleetSettings,
} from "../../controller/fleet-settings.js";
import type { Sharding } from "../../controller/leadership/sharding.js";
import { snapshotKeyOf } from "../../controller/snapshot/snapshot-codec.js";
import { SnapshotStore } from "../../controller/snapshot/snapshot-store.js";
import type { SopsKeyring } from "../../credentials/sops-keyring.js";
import type { SigningFormat } from "../../git/commit-signer.js";
import { commitSigner } from "../../git/commit-signer.js";
import { type CommitVerifier, commitVerifier } from "../../git/commit-verifier.js";
import { FleetRepo } from "../../git/fleet-repo.js";
import { ShardBranches } from "../../git/shard-branches.js";
import type { ConnectionSources, CredentialSource } from "../../kube/connections.js";
import { createLogger } from "../../log/logger.js";
import { parseDuration } from "../../model/duration.js";
import { MAX_SHARDS } from "../../model/shard-assignment.js";
import { backupStoresIn } from "../backup-stores.js";
import {
  DEFAULT_AUTHOR,
  DEFAULT_DRIFT_INTERVAL_MS,
  DEFAULT_INTERVAL_MS,
  DEFAULT_STATUS_BRANCH,
} from "../defaults.js";
import { Election, type ElectionFlags } from "../election.js";
import { CliError, ExitCode, type ExitCodeValue } from "../exit-codes.js";
import { type GitAuthFlags, withGitAccess } from "../git-auth.js";
import { Outbound, type OutboundFlags } from "../outbound.js";
import type { CommandOutput } from "../output.js";
import { loggerWithProgress, reconcileProgress, syncProgress } from "../progress.js";
import { readSecretDigestKey, SECRET_DIGEST_KEY_ENV } from "../secret-digest-key.js";
import { type AccessFlags, accessFromFlags } from "../serve-access.js";
import { ControllerEndpoints, type ServeOptions } from "../serve-controller.js";
import { readSopsKeyring } from "../sops-keys.js";
import { syncLine } from "../sync-line.js";

export interface LoopFlags
  extends Partial<Omit<ElectionFlags, "controllerId" | "logLevel" | "shards">>,
    GitAuthFlags,
    OutboundFlags,
    AccessFlags {
  readonly repo: string;
  readonly branch: string;
  readonly statusBranch?: string;
  readonly interval?: string;
  readonly once?: boolean;
  readonly sync: boolean;
  readonly kubeconfig?: string;
  readonly cacheDir?: string;
  readonly snapshotDir?: string;
  /** False with --no-snapshot. */
  readonly snapshot?: boolean;
  readonly author?: string;
  readonly controllerId: string;
  readonly logLevel: string;
  readonly listen?: string;
  readonly signingKey?: string;
  readonly kubeconfigDir?: string;
  readonly planRevisions?: readonly string[];
  readonly planMemoryMb?: string;
  readonly planTimeout?: string;
  readonly allowedHosts?: readonly string[];
  readonly trustedKeys?: string;
  readonly trustedKeysFormat?: SigningFormat;
  readonly allowExec: readonly string[];
  readonly secretDigestKeyFile?: string;
  readonly sopsAgeKeyFile?: string;
  readonly backupStoresDir?: string;
  readonly signingFormat: SigningFormat;
  readonly webhookSecretEnv?: string;
  readonly shards?: string;
}

export async function runLoop(
  flags: LoopFlags,
  output: CommandOutput,
  serve: boolean,
): Promise<ExitCodeValue> {
  // A one-off reconcile of a large fleet shows how far it got (bars on a terminal, records otherwise).
  const { logger, progress } = flags.once
    ? loggerWithProgress(process.stderr, (destination) =>
        createLogger({ level: flags.logLevel, ...(destination ? { destination } : {}) }),
      )
    : { logger: createLogger({ level: flags.logLevel }), progress: undefined };
  const shards = shardsOf(flags, serve);
  const { repo, settings } = await openFleet(flags);
  const { key: secretKey, persistent } = await secretKeyOf(flags, logger);
  const statusBranch = flags.statusBranch ?? settings.statusBranch ?? DEFAULT_STATUS_BRANCH;
  const { endpoints, outbound, hooks } = serve ? served(flags, repo, logger) : {};
  // One replica of several: every write is fenced on the leader Lease.
  const election =
    serve && flags.leaderElect ? new Election(electionFlags(flags, shards), logger) : undefined;
  // Sharded: this replica probes and syncs the members of the shards it holds.
  const sharding = election?.sharding(new ShardBranches(repo, statusBranch));
  logger.info(
    { repo: repo.describe(), branch: flags.branch, sync: flags.sync },
    `sync to member clusters: ${flags.sync ? "on" : "off"}`,
  );
  const built = buildController({
    logger,
    reconciler: await reconcilerOptions(flags, settings, {
      repo,
      statusBranch,
      secretKey,
      progress,
      election,
      snapshots: await snapshotStore(flags, repo, statusBranch, persistent ? secretKey : undefined),
    }),
    ...(flags.sync
      ? {
          sync: syncOptions(flags, settings, {
            progress,
            election,
            sharding,
            keyring: await keyringOf(flags, logger),
          }),
        }
      : {}),
    intervalMs: flags.interval
      ? durationFlag(flags.interval)
      : (settings.reconcileIntervalMs ?? DEFAULT_INTERVAL_MS),
    ...(hooks ? { hooks } : {}),
  });
  outbound?.attach(built.reconciler);
  if (flags.once) return reconcileOnce(built, output, () => progress?.stop());
  const server = await endpoints?.serve(
    await withAccess(flags, serveOptions(flags, { statusBranch, logger, secretDigestKey: secretKey })),
    { ...built, ...(election ? { replica: election } : {}) },
  );
  return runUntilStopped(built, { logger, ...(server ? { server } : {}), ...(election ? { election } : {}) });
}

// What `gitfleet run` serves (metrics, dashboard) and tells (commit statuses, notifications), and the
// controller hooks that feed both.
function served(flags: LoopFlags, repo: FleetRepo, logger: Logger) {
  const endpoints = new ControllerEndpoints(repo);
  const outbound = new Outbound(flags, { repo, logger, endpoints });
  return { endpoints, outbound, hooks: outbound.hooks(endpoints.hooks) };
}

// Runs — or, one replica of several, stands by — until a signal, or until this replica lost the
// leader Lease; then stops writing before the Lease is released for the next leader.
async function runUntilStopped(
  built: BuiltController,
  parts: { logger: Logger; server?: { close(): Promise<void> }; election?: Election },
): Promise<ExitCodeValue> {
  const { logger, server, election } = parts;
  if (election) election.standBy(built);
  else built.start();
  const code = await Promise.race([
    new Promise<ExitCodeValue>((resolve) => {
      process.once("SIGTERM", () => resolve(ExitCode.Ok));
      process.once("SIGINT", () => resolve(ExitCode.Ok));
    }),
    election?.lost ?? new Promise<never>(() => undefined),
  ]);
  logger.info("stopping: finishing the reconcile in flight");
  await server?.close();
  await built.stop();
  await election?.stop();
  return code;
}

// The age keys that open sops-encrypted Secrets at sync; how many is said, never what they are.
async function keyringOf(flags: LoopFlags, logger: Logger): Promise<SopsKeyring | undefined> {
  const keyring = await readSopsKeyring(flags.sopsAgeKeyFile);
  if (keyring)
    logger.info({ identities: keyring.size }, "sops: age keys read; encrypted Secrets are opened at sync");
  return keyring;
}

// How the reconciler reads, writes and signs; one replica of several moves the status branch only while it leads.
async function reconcilerOptions(
  flags: LoopFlags,
  settings: FleetSettings,
  context: {
    repo: FleetRepo;
    statusBranch: string;
    secretKey: Uint8Array;
    progress: ReturnType<typeof loggerWithProgress>["progress"] | undefined;
    election: Election | undefined;
    snapshots: SnapshotStore | undefined;
  },
): Promise<ControllerConfig["reconciler"]> {
  const { progress, election, snapshots } = context;
  return {
    repo: context.repo,
    branch: flags.branch,
    statusBranch: context.statusBranch,
    author: flags.author ? parseAuthor(flags.author) : (settings.author ?? DEFAULT_AUTHOR),
    controllerId: flags.controllerId,
    secretDigestKey: context.secretKey,
    ...(await trustOf(flags)),
    ...(progress ? { onProgress: reconcileProgress(progress) } : {}),
    ...(election ? { fence: () => election.fence() } : {}),
    ...(snapshots ? { snapshots } : {}),
  };
}

// Where the reconciler keeps its snapshot (--snapshot-dir; for a URL, beside the cache repository),
// with an HMAC key derived from the SSH signing key, else from a secret digest key the operator gave.
async function snapshotStore(
  flags: LoopFlags,
  repo: FleetRepo,
  statusBranch: string,
  secretKey: Uint8Array | undefined,
): Promise<SnapshotStore | undefined> {
  if (flags.snapshot === false) return undefined;
  const dir = flags.snapshotDir ?? (repo.url ? `${repo.gitdir.replace(/\.git$/, "")}.snapshots` : undefined);
  if (!dir) return undefined;
  const material =
    flags.signingKey && flags.signingFormat === "ssh"
      ? await readFile(flags.signingKey).catch((error: unknown) => {
          throw new CliError(`--signing-key: ${error instanceof Error ? error.message : String(error)}`);
        })
      : secretKey;
  return new SnapshotStore({ dir, statusBranch, ...(material ? { key: snapshotKeyOf(material) } : {}) });
}

function electionFlags(flags: LoopFlags, shards: number): ElectionFlags {
  return {
    leaderElect: true,
    leaderElectNamespace: flags.leaderElectNamespace ?? "default",
    leaderElectLease: flags.leaderElectLease ?? "gitfleet",
    leaderElectLeaseDuration: flags.leaderElectLeaseDuration ?? "15s",
    leaderElectRenewDeadline: flags.leaderElectRenewDeadline ?? "10s",
    leaderElectRetryPeriod: flags.leaderElectRetryPeriod ?? "2s",
    ...(flags.standbyFollowInterval ? { standbyFollowInterval: flags.standbyFollowInterval } : {}),
    ...(flags.managementKubeconfig ? { managementKubeconfig: flags.managementKubeconfig } : {}),
    ...(flags.managementContext ? { managementContext: flags.managementContext } : {}),
    controllerId: flags.controllerId,
    logLevel: flags.logLevel,
    shards,
  };
}

// --shards: a whole number of shards, which need leader election (each shard is a Lease) and a sync
// to divide.
function shardsOf(flags: LoopFlags, serve: boolean): number {
  const shards = Number(flags.shards ?? "0");
  if (!Number.isInteger(shards) || shards < 0 || shards > MAX_SHARDS)
    throw new CliError(
      `--shards ${flags.shards}: expected a whole number from 0 to ${MAX_SHARDS}`,
      ExitCode.Usage,
    );
  if (shards === 0) return 0;
  if (!(serve && flags.leaderElect))
    throw new CliError("--shards needs --leader-elect: each shard is a Lease", ExitCode.Usage);
  if (!flags.sync)
    throw new CliError("--shards divides the members' sync: it cannot go with --no-sync", ExitCode.Usage);
  return shards;
}

async function openFleet(flags: LoopFlags): Promise<{ repo: FleetRepo; settings: FleetSettings }> {
  const repo = await FleetRepo.open({
    location: flags.repo,
    ...(flags.cacheDir ? { cacheDir: flags.cacheDir } : {}),
    ...withGitAccess(flags),
  }).catch((error: unknown) => {
    throw new CliError(error instanceof Error ? error.message : String(error));
  });
  const settings = await readFleetSettings(repo, flags.branch).catch((error: unknown) => {
    throw new CliError(error instanceof Error ? error.message : String(error));
  });
  return { repo, settings };
}

// With sync on: members reached through the credentials the operator offers, at fleet.yaml's intervals.
function syncOptions(
  flags: LoopFlags,
  settings: FleetSettings,
  context: {
    progress: ReturnType<typeof loggerWithProgress>["progress"] | undefined;
    election: Election | undefined;
    sharding: Sharding | undefined;
    keyring: SopsKeyring | undefined;
  },
): NonNullable<ControllerConfig["sync"]> {
  const { progress, election, sharding, keyring } = context;
  return {
    ...(keyring ? { keyring } : {}),
    ...(flags.backupStoresDir ? { backupStores: backupStoresIn(flags.backupStoresDir) } : {}),
    // One replica of several writes to a member only while it leads — or, sharded, holds the member's
    // shard — and names itself in every request.
    ...(election
      ? {
          client: {
            beforeWrite: (cluster: string) => election.fenceMember(cluster),
            userAgent: `gitfleet (${election.identity})`,
          },
        }
      : {}),
    ...(sharding ? { sharding } : {}),
    connections: connectionSources(flags),
    statusIntervalMs: flags.once ? 0 : (settings.statusIntervalMs ?? DEFAULT_STATUS_INTERVAL_MS),
    resyncIntervalMs: settings.driftIntervalMs ?? DEFAULT_DRIFT_INTERVAL_MS,
    ...(settings.autoscaleIntervalMs !== undefined
      ? { autoscaleIntervalMs: settings.autoscaleIntervalMs }
      : {}),
    ...(progress ? { onSyncProgress: syncProgress(progress) } : {}),
  };
}

// What `gitfleet run` serves its endpoint with.
function serveOptions(
  flags: LoopFlags,
  context: { statusBranch: string; logger: Logger; secretDigestKey: Uint8Array },
): ServeOptions {
  return {
    listen: flags.listen ?? "127.0.0.1:8080",
    webhookSecret: process.env[flags.webhookSecretEnv ?? ""] || undefined,
    branch: flags.branch,
    ...context,
    ...(flags.planRevisions ? { planRevisions: flags.planRevisions } : {}),
    ...(flags.allowedHosts ? { allowedHosts: flags.allowedHosts } : {}),
    planQueue: {
      memoryMb: positive(flags.planMemoryMb ?? "1024", "--plan-memory-mb"),
      timeoutMs: durationFlag(flags.planTimeout ?? "2m", "--plan-timeout"),
    },
  };
}

// Who may read what: automation tokens, people's sign-in, anonymous reading (serve-access.ts).
async function withAccess(flags: LoopFlags, options: ServeOptions): Promise<ServeOptions> {
  const access = await accessFromFlags(flags, options.logger);
  return access ? { ...options, access } : options;
}

// The key of Secrets' digests; a warning when this process had to make one.
async function secretKeyOf(
  flags: LoopFlags,
  logger: Logger,
): Promise<{ key: Uint8Array; persistent: boolean }> {
  const secretKey = await readSecretDigestKey({ file: flags.secretDigestKeyFile, env: process.env });
  if (secretKey.source === "ephemeral")
    logger.warn(
      `no secret digest key (--secret-digest-key-file or ${SECRET_DIGEST_KEY_ENV}): this process made one, so Secrets' digests change when it restarts`,
    );
  return { key: secretKey.key, persistent: secretKey.source !== "ephemeral" };
}

// How status commits are signed, and verified.
async function trustOf(
  flags: LoopFlags,
): Promise<{ sign?: (payload: string) => Promise<string>; verify?: CommitVerifier }> {
  const verify = await verifierOf(flags);
  return {
    ...(verify ? { verify } : {}),
    ...(flags.signingKey ? { sign: commitSigner(flags.signingFormat, flags.signingKey) } : {}),
  };
}

// What verifies status commits: the trusted keys given, and the signing key's own public half.
async function verifierOf(flags: LoopFlags): Promise<CommitVerifier | undefined> {
  return commitVerifier({
    ...(flags.trustedKeys
      ? { trusted: { format: flags.trustedKeysFormat ?? flags.signingFormat, file: flags.trustedKeys } }
      : {}),
    ...(flags.signingKey ? { signingKey: { format: flags.signingFormat, key: flags.signingKey } } : {}),
  }).catch((error: unknown) => {
    throw new CliError(
      `--trusted-keys: ${error instanceof Error ? error.message : String(error)}`,
      ExitCode.Usage,
    );
  });
}

// The member credentials the operator offers the fleet repo (see sync/connections.ts).
function connectionSources(flags: LoopFlags): ConnectionSources {
  return {
    ...(flags.kubeconfig ? { kubeconfig: flags.kubeconfig } : {}),
    ...(flags.kubeconfigDir ? { kubeconfigDir: flags.kubeconfigDir } : {}),
    env: process.env,
    allowExec: flags.allowExec.filter((s): s is CredentialSource => s !== "none"),
  };
}

async function reconcileOnce(
  built: BuiltController,
  output: CommandOutput,
  finished: () => void,
): Promise<ExitCodeValue> {
  const report = await built
    .once()
    .catch((error: unknown) => {
      throw new CliError(error instanceof Error ? error.message : String(error));
    })
    .finally(finished);
  const status = report.statusCommit ? report.statusCommit.slice(0, 7) : "none";
  const validity = report.valid
    ? "valid"
    : `invalid, ${report.errors} ${report.errors === 1 ? "error" : "errors"} recorded in status/source.yaml`;
  output.out(
    `${report.sourceCommit.slice(0, 7)} → status ${status}: ${report.result} (${validity}; ${report.filesChanged} files changed)\n`,
  );
  let synced = true;
  for (const result of [...(built.syncer?.latest().values() ?? [])].sort((a, b) =>
    a.cluster < b.cluster ? -1 : 1,
  )) {
    output.out(`  ${syncLine(result)}\n`);
    synced &&=
      result.reachable && !result.objects.some((o) => o.action === "failed" || o.action === "conflict");
  }
  return report.valid && synced ? ExitCode.Ok : ExitCode.Failed;
}

function parseAuthor(text: string): { name: string; email: string } {
  const match = /^\s*(.+?)\s*<([^<>\s]+@[^<>\s]+)>\s*$/.exec(text);
  if (!match) throw new CliError(`--author ${text}: expected "Name <email>"`, ExitCode.Usage);
  return { name: match[1] as string, email: match[2] as string };
}

function durationFlag(text: string, flag = "--interval"): number {
  const ms = parseDuration(text);
  if (!ms) throw new CliError(`${flag} ${text}: expected a duration such as 30s, 3m or 1h`, ExitCode.Usage);
  return ms;
}

function positive(text: string, flag: string): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < 16)
    throw new CliError(`${flag} ${text}: expected a whole number of at least 16`, ExitCode.Usage);
  return value;
}
