import { readdir } from "node:fs/promises";
import { explainInvalidDns1123Label } from "../../apimachinery/names.js";
import { listBackups, pullBackup } from "../../backup/pull.js";
import { pushBackup } from "../../backup/push.js";
import { MAX_HELD, MAX_KEEP, pruneBackups, pruneSnapshots } from "../../backup/retention.js";
import { type BackupStore, readBackupStore } from "../../backup/store-config.js";
import { ageIdentities } from "../../credentials/sops-keyring.js";
import { readConfiguredFile } from "../../util/bounded-file.js";
import { CliError, ExitCode, type ExitCodeValue } from "../exit-codes.js";
import { type CommandOutput, structured } from "../output.js";

export interface PushOptions {
  readonly cluster: string;
  readonly snapshot: string;
  readonly pkiDir: string;
  readonly storeDir: string;
  readonly workDir: string;
  readonly keep?: string;
  readonly hold?: readonly string[];
}

export interface PruneOptions {
  readonly dir: string;
  readonly keep: string;
  readonly taken: string;
  readonly hold?: readonly string[];
}

export interface PullOptions {
  readonly cluster: string;
  readonly storeDir: string;
  readonly identity: string;
  readonly into: string;
  readonly key?: string;
  readonly restore?: string;
  readonly maxBytes: string;
  readonly workDir: string;
}

export interface ListOptions {
  readonly cluster: string;
  readonly storeDir: string;
  readonly format: "text" | "json" | "yaml";
}

/** The largest age identity file read. */
const MAX_IDENTITY_FILE_BYTES = 256 * 1024;

/** `gitfleet backup push`: one snapshot and the PKI, encrypted, into the store. */
export async function runPush(options: PushOptions, output: CommandOutput): Promise<ExitCodeValue> {
  checkCluster(options.cluster);
  const keep = options.keep === undefined ? undefined : keepOf(options.keep);
  const held = heldOf(options.hold);
  if (held.length > 0 && keep === undefined)
    throw new CliError("--hold: only with --keep (nothing is deleted without it)", ExitCode.Usage);
  const store = await storeOf(options.storeDir);
  const put = await failed("backup push", () =>
    pushBackup({
      cluster: options.cluster,
      snapshot: options.snapshot,
      pkiDir: options.pkiDir,
      store,
      workDir: options.workDir,
      now: new Date(),
    }),
  );
  output.out(`put ${put.key} (${put.size} bytes, sha256 ${put.sha256})\n`);
  if (keep === undefined) return ExitCode.Ok;
  // Only once the store took this backup are older ones deleted.
  const deleted = await failed("pruning the store", () =>
    pruneBackups(store, options.cluster, keep, put.key, held),
  );
  for (const key of deleted) output.out(`deleted ${key}\n`);
  output.out(`kept the newest ${keep} backups of ${options.cluster}${heldLine(held)}\n`);
  return ExitCode.Ok;
}

/** `gitfleet backup prune`: the backup volume's oldest snapshots beyond --keep, deleted. */
export async function runPrune(options: PruneOptions, output: CommandOutput): Promise<ExitCodeValue> {
  const keep = keepOf(options.keep);
  const held = heldOf(options.hold);
  const deleted = await failed("backup prune", () => pruneSnapshots(options.dir, keep, options.taken, held));
  for (const name of deleted) output.out(`deleted ${name}\n`);
  output.out(`kept the newest ${keep} snapshots in ${options.dir}${heldLine(held)}\n`);
  return ExitCode.Ok;
}

function heldOf(hold: readonly string[] | undefined): readonly string[] {
  const held = hold ?? [];
  if (held.length > MAX_HELD)
    throw new CliError(`--hold: at most ${MAX_HELD} (got ${held.length})`, ExitCode.Usage);
  return held;
}

const heldLine = (held: readonly string[]) =>
  held.length === 0 ? "" : `, and held ${held.join(", ")} for a restore`;

function keepOf(text: string): number {
  const keep = /^\d{1,4}$/.test(text) ? Number(text) : Number.NaN;
  if (!(keep >= 1 && keep <= MAX_KEEP))
    throw new CliError(
      `--keep ${JSON.stringify(text)}: a whole number from 1 to ${MAX_KEEP}`,
      ExitCode.Usage,
    );
  return keep;
}

/** `gitfleet backup pull`: one backup, decrypted and unpacked. */
export async function runPull(options: PullOptions, output: CommandOutput): Promise<ExitCodeValue> {
  checkCluster(options.cluster);
  if (options.key && options.restore)
    throw new CliError(
      "--key and --restore: give one (a backup, or a restore's staged snapshot)",
      ExitCode.Usage,
    );
  const maxBytes = Number(options.maxBytes);
  if (!Number.isSafeInteger(maxBytes) || maxBytes <= 0)
    throw new CliError(`--max-bytes ${options.maxBytes}: not a positive whole number`, ExitCode.Usage);
  const store = await storeOf(options.storeDir);
  const identities = await failed(`--identity ${options.identity}`, async () =>
    ageIdentities(
      new TextDecoder("utf-8").decode(
        await readConfiguredFile(options.identity, "the file", MAX_IDENTITY_FILE_BYTES),
      ),
    ),
  );
  const present = await readdir(options.into).catch(() => []);
  if (present.length > 0)
    throw new CliError(`--into ${options.into}: the directory is not empty`, ExitCode.Usage);
  const pulled = await failed("backup pull", () =>
    pullBackup({
      store,
      cluster: options.cluster,
      ...(options.key ? { key: options.key } : {}),
      ...(options.restore ? { staged: options.restore } : {}),
      identities,
      into: options.into,
      workDir: options.workDir,
      maxBytes,
    }),
  );
  output.out(
    `unpacked ${pulled.key} into ${options.into}: ${pulled.files.length} files, snapshot ${pulled.manifest.snapshot} taken ${pulled.manifest.takenAt}\n`,
  );
  return ExitCode.Ok;
}

/** `gitfleet backup list`: a cluster's backups, oldest first. */
export async function runList(options: ListOptions, output: CommandOutput): Promise<ExitCodeValue> {
  checkCluster(options.cluster);
  const store = await storeOf(options.storeDir);
  const listed = await failed("backup list", () => listBackups(store, options.cluster));
  if (options.format !== "text") output.out(structured(listed, options.format));
  else for (const o of listed) output.out(`${o.key}\t${o.size}\t${o.lastModified}\n`);
  return ExitCode.Ok;
}

function checkCluster(cluster: string): void {
  const why = explainInvalidDns1123Label(cluster);
  if (why) throw new CliError(`--cluster ${JSON.stringify(cluster)}: ${why}`, ExitCode.Usage);
}

// The store's directory, read and checked: a store that cannot be read fails the command (exit 1),
// naming the file and what is wrong, never what it holds.
function storeOf(dir: string): Promise<BackupStore> {
  return failed(`--store-dir ${dir}`, () => readBackupStore(dir));
}

// Work that failed: one line saying why (the store's code, the archive's fault, the file), never a
// credential; exit 1.
async function failed<T>(what: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw new CliError(`${what}: ${error instanceof Error ? error.message : String(error)}`, ExitCode.Failed);
  }
}
