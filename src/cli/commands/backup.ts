import { Command, Option } from "commander";
import type { ListOptions, PruneOptions, PullOptions, PushOptions } from "../actions/backup.js";
import type { ExitCodeValue } from "../exit-codes.js";
import type { CommandOutput } from "../output.js";

const collect = (value: string, previous: string[] = []) => [...previous, value];

const STORE_DIR =
  "the store's directory (a mounted Secret): endpoint, bucket, region, prefix, access-key-id, secret-access-key, recipients";

/** `gitfleet backup push|prune|pull|list`: hosted clusters' off-host backups in an S3-compatible store. */
export function registerBackup(
  program: Command,
  output: CommandOutput,
  setExit: (code: ExitCodeValue) => void,
): void {
  const backup = new Command("backup").description(
    "off-host backups of hosted clusters: an etcd snapshot with the control plane's CAs and service-account key, encrypted with age to the operator's recipients, in an S3-compatible store",
  );
  backup.addCommand(
    new Command("push")
      .description(
        "what the backup Job in the host runs after etcdctl snapshot save: pack the snapshot with the mounted PKI, encrypt it to the store's recipients and put it in the store as <prefix><cluster>/<time>-<snapshot>.tar.age",
      )
      .requiredOption("--cluster <name>", "the hosted cluster")
      .requiredOption("--snapshot <file>", "the snapshot etcdctl wrote")
      .requiredOption("--pki-dir <dir>", "the mounted PKI Secrets: <dir>/<secret>/<key>")
      .requiredOption("--store-dir <dir>", STORE_DIR)
      .option("--work-dir <dir>", "where the archive is made and encrypted (removed afterwards)", "/tmp")
      .option(
        "--keep <count>",
        "once the store took this backup, delete the cluster's oldest backups beyond this many (this one among them; a restore's staged snapshot is left)",
      )
      .option(
        "--hold <key>",
        "a backup an EtcdRestore in the repo names: never deleted, not counted in --keep (repeat)",
        collect,
      )
      .addHelpText(
        "after",
        "\nExit codes: 0 put (and pruned), 1 not put, or put but not pruned (why is printed), 64 a usage error.",
      )
      .action(async (options: PushOptions) => {
        setExit(await (await import("../actions/backup.js")).runPush(options, output));
      }),
  );
  backup.addCommand(
    new Command("prune")
      .description(
        "what the backup Job of a class with etcd.backup.keep runs after its snapshot: delete the backup volume's oldest snapshots beyond --keep, by time written. Only plain .db files directly in --dir count; directories and links are never touched",
      )
      .requiredOption("--dir <dir>", "the backup volume")
      .requiredOption("--keep <count>", "how many snapshots stay, --taken among them (1 to 1000)")
      .requiredOption("--taken <file>", "this run's snapshot, a .db file name in --dir: never deleted")
      .option(
        "--hold <file>",
        "a snapshot an EtcdRestore in the repo names, a .db file name in --dir: never deleted, not counted in --keep (repeat)",
        collect,
      )
      .addHelpText("after", "\nExit codes: 0 pruned, 1 not (why is printed), 64 a usage error.")
      .action(async (options: PruneOptions) => {
        setExit(await (await import("../actions/backup.js")).runPrune(options, output));
      }),
  );
  backup.addCommand(
    new Command("pull")
      .description(
        "get a hosted cluster's backup (the newest unless --key names one), decrypt it with the operator's age identities and unpack it: backup.json, snapshot.db and pki/<secret>/<key>, each file new and mode 0600",
      )
      .requiredOption("--cluster <name>", "the hosted cluster")
      .requiredOption("--store-dir <dir>", STORE_DIR)
      .requiredOption(
        "--identity <file>",
        "age identities (as age-keygen writes them) one of the recipients' is among",
      )
      .requiredOption("--into <dir>", "a new or empty directory to unpack into")
      .option("--key <key>", "the backup's key in the store (default: the newest)")
      .option(
        "--restore <name>",
        "instead of a backup, the snapshot gitfleet staged for this EtcdRestore (what its Job runs): backup.json and snapshot.db, opened with the restore's own key",
      )
      .option("--max-bytes <bytes>", "the largest backup read", "17179869184")
      .option("--work-dir <dir>", "where the download is decrypted (removed afterwards)", "/tmp")
      .addHelpText(
        "after",
        "\nExit codes: 0 unpacked, 1 nothing unpacked (why is printed), 64 a usage error.",
      )
      .action(async (options: PullOptions) => {
        setExit(await (await import("../actions/backup.js")).runPull(options, output));
      }),
  );
  backup.addCommand(
    new Command("list")
      .description("a hosted cluster's backups in the store, oldest first: key, size, time stored")
      .requiredOption("--cluster <name>", "the hosted cluster")
      .requiredOption("--store-dir <dir>", STORE_DIR)
      .addOption(
        new Option("-o, --format <format>", "output format")
          .choices(["text", "json", "yaml"])
          .default("text"),
      )
      .addHelpText("after", "\nExit codes: 0 listed, 1 the store refused, 64 a usage error.")
      .action(async (options: ListOptions) => {
        setExit(await (await import("../actions/backup.js")).runList(options, output));
      }),
  );
  program.addCommand(backup);
}
