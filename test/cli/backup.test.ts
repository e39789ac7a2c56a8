import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REQUIRED_PKI } from "../../src/backup/backup-contents.js";
import { type RunningStore, startS3Store } from "../helpers/s3-store.js";
import { type AgeKey, ageKey, ageKeyFile } from "../helpers/sops.js";

// `gitfleet backup push | list | pull` as the backup Job and an operator run them, against a real
// S3-compatible store, with a store directory laid out as a mounted Secret is.
const root = fileURLToPath(new URL("../..", import.meta.url));
const gitfleet = (...args: string[]) =>
  spawnSync(process.execPath, [join(root, "bin/gitfleet.js"), "backup", ...args], { encoding: "utf8" });

describe("gitfleet backup", () => {
  let store: RunningStore;
  let dir: string;
  let operator: AgeKey;
  const snapshot = randomBytes(64 * 1024);
  beforeAll(async () => {
    store = await startS3Store();
    operator = await ageKey();
    dir = mkdtempSync(join(tmpdir(), "gitfleet-backup-cli-"));
    // The store's directory, as the Secret etcd-backup-store is mounted: its keys are files behind ..data.
    const data = join(dir, "store/..2026_12_06_10_00_00.000000001");
    mkdirSync(data, { recursive: true });
    const files = {
      endpoint: store.endpoint.href,
      bucket: store.bucket,
      prefix: "hosted",
      "access-key-id": store.key.accessKeyId,
      "secret-access-key": store.key.secretAccessKey,
      recipients: `${operator.recipient}\n`,
    };
    for (const [name, text] of Object.entries(files)) writeFileSync(join(data, name), text);
    const { symlinkSync } = await import("node:fs");
    symlinkSync("..2026_12_06_10_00_00.000000001", join(dir, "store/..data"));
    for (const name of Object.keys(files)) symlinkSync(`..data/${name}`, join(dir, "store", name));
    writeFileSync(join(dir, "etcd-backup-29412345-abcde.db"), snapshot);
    for (const entry of REQUIRED_PKI) {
      mkdirSync(join(dir, entry.replace(/\/[^/]+$/, "")), { recursive: true });
      writeFileSync(join(dir, entry), randomBytes(100));
    }
    writeFileSync(join(dir, "identity.txt"), ageKeyFile([operator]));
    mkdirSync(join(dir, "work"));
  }, 120_000);
  afterAll(async () => {
    await store?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("pushes as the backup Job does, lists, and pulls with the operator's identity", () => {
    const pushed = gitfleet(
      ...["push", "--cluster", "pc-1", "--snapshot", join(dir, "etcd-backup-29412345-abcde.db")],
      ...["--pki-dir", join(dir, "pki"), "--store-dir", join(dir, "store"), "--work-dir", join(dir, "work")],
    );
    expect(pushed.stderr).toBe("");
    expect(pushed.status).toBe(0);
    expect(pushed.stdout).toMatch(
      /^put hosted\/pc-1\/\d{8}T\d{6}Z-etcd-backup-29412345-abcde\.tar\.age \(\d+ bytes, sha256 [0-9a-f]{64}\)\n$/,
    );
    // Nothing of the store's key pair is ever printed.
    expect(pushed.stdout).not.toContain(store.key.accessKeyId);

    const listed = gitfleet("list", "--cluster", "pc-1", "--store-dir", join(dir, "store"), "-o", "json");
    expect(listed.status).toBe(0);
    const keys = JSON.parse(listed.stdout) as { key: string; size: number }[];
    expect(keys).toHaveLength(1);

    const into = join(dir, "restored");
    const pulled = gitfleet(
      ...[
        "pull",
        "--cluster",
        "pc-1",
        "--store-dir",
        join(dir, "store"),
        "--identity",
        join(dir, "identity.txt"),
      ],
      ...["--into", into, "--work-dir", join(dir, "work")],
    );
    expect(pulled.stderr).toBe("");
    expect(pulled.status).toBe(0);
    expect(pulled.stdout).toContain(
      `unpacked ${keys[0]?.key} into ${into}: 10 files, snapshot etcd-backup-29412345-abcde.db taken `,
    );
    expect(readFileSync(join(into, "snapshot.db")).equals(snapshot)).toBe(true);

    // Into a directory that holds something: a usage error, nothing written.
    const again = gitfleet(
      ...[
        "pull",
        "--cluster",
        "pc-1",
        "--store-dir",
        join(dir, "store"),
        "--identity",
        join(dir, "identity.txt"),
      ],
      ...["--into", into],
    );
    expect(again.status).toBe(64);
    expect(again.stderr).toContain("the directory is not empty");
  });

  it("keeps the newest backups with push --keep, and the newest snapshots with prune", () => {
    const volume = join(dir, "volume");
    mkdirSync(volume);
    const push = (name: string, keep: string) => {
      writeFileSync(join(volume, name), snapshot);
      return gitfleet(
        ...["push", "--cluster", "pc-5", "--snapshot", join(volume, name), "--keep", keep],
        ...[
          "--pki-dir",
          join(dir, "pki"),
          "--store-dir",
          join(dir, "store"),
          "--work-dir",
          join(dir, "work"),
        ],
      );
    };
    const list = () =>
      (
        JSON.parse(
          gitfleet("list", "--cluster", "pc-5", "--store-dir", join(dir, "store"), "-o", "json").stdout,
        ) as { key: string }[]
      ).map((o) => o.key);
    // Keys sort by their second, then by name: these names sort as they were taken.
    const names = ["etcd-backup-1-aaaaa.db", "etcd-backup-2-bbbbb.db", "etcd-backup-3-ccccc.db"];
    for (const name of names) {
      const run = push(name, "2");
      expect(run.stderr).toBe("");
      expect(run.status).toBe(0);
    }
    const kept = list();
    expect(kept.map((k) => k.replace(/^hosted\/pc-5\/\d{8}T\d{6}Z-/, ""))).toEqual([
      "etcd-backup-2-bbbbb.tar.age",
      "etcd-backup-3-ccccc.tar.age",
    ]);

    // A restore in the repo holds the oldest kept backup: it stays, uncounted, as a new one is put.
    const held = kept[0] as string;
    writeFileSync(join(volume, "etcd-backup-4-ddddd.db"), snapshot);
    const put = gitfleet(
      ...["push", "--cluster", "pc-5", "--snapshot", join(volume, "etcd-backup-4-ddddd.db")],
      ...["--keep", "2", "--hold", held, "--hold", "hosted/pc-5/restores/back.tar.age"],
      ...["--pki-dir", join(dir, "pki"), "--store-dir", join(dir, "store"), "--work-dir", join(dir, "work")],
    );
    expect(put.stderr).toBe("");
    expect(put.status).toBe(0);
    expect(put.stdout).toContain(
      `kept the newest 2 backups of pc-5, and held ${held}, hosted/pc-5/restores/back.tar.age for a restore\n`,
    );
    expect(list()).toContain(held);
    expect(list()).toHaveLength(3);

    const pruned = gitfleet(
      ...["prune", "--dir", volume, "--keep", "1", "--taken", "etcd-backup-4-ddddd.db"],
      ...["--hold", "etcd-backup-1-aaaaa.db"],
    );
    expect(pruned.stderr).toBe("");
    expect(pruned.status).toBe(0);
    expect(pruned.stdout).toBe(
      `deleted etcd-backup-2-bbbbb.db\ndeleted etcd-backup-3-ccccc.db\nkept the newest 1 snapshots in ${volume}, and held etcd-backup-1-aaaaa.db for a restore\n`,
    );
    expect(readdirSync(volume).sort()).toEqual(["etcd-backup-1-aaaaa.db", "etcd-backup-4-ddddd.db"]);
  });

  // A push as the backup Job runs it, but for what a row adds.
  const PUSH = ["push", "--cluster", "pc-1", "--snapshot", "S", "--pki-dir", "P", "--store-dir", "STORE"];
  it.each([
    [["list", "--cluster", "PC-1", "--store-dir", "STORE"], 64, '--cluster "PC-1"'],
    [
      ["list", "--cluster", "pc-1", "--store-dir", "/nonexistent"],
      1,
      "--store-dir /nonexistent: the directory cannot be read",
    ],
    [
      ["pull", "--cluster", "pc-1", "--store-dir", "STORE", "--identity", "/nonexistent", "--into", "NEW"],
      1,
      "--identity /nonexistent: the file does not exist",
    ],
    [
      [
        "pull",
        "--cluster",
        "pc-1",
        "--store-dir",
        "STORE",
        "--identity",
        "ID",
        "--into",
        "NEW",
        "--max-bytes",
        "0",
      ],
      64,
      "--max-bytes 0",
    ],
    [
      ["pull", "--cluster", "pc-9", "--store-dir", "STORE", "--identity", "ID", "--into", "NEW"],
      1,
      "the store holds no backup of pc-9",
    ],
    [
      [
        "pull",
        "--cluster",
        "pc-1",
        "--store-dir",
        "STORE",
        "--identity",
        "ID",
        "--into",
        "NEW",
        "--key",
        "k",
        "--restore",
        "back",
      ],
      64,
      "--key and --restore: give one",
    ],
    [
      [
        "pull",
        "--cluster",
        "pc-1",
        "--store-dir",
        "STORE",
        "--identity",
        "ID",
        "--into",
        "NEW",
        "--restore",
        "back",
      ],
      1,
      "hosted/pc-1/restores/back.tar.age",
    ],
    [
      ["pull", "--cluster", "pc-1", "--store-dir", "STORE", "--identity", "STORE/bucket", "--into", "NEW"],
      1,
      "line 1 is not an age identity",
    ],
    [["prune", "--dir", "/nonexistent", "--keep", "0", "--taken", "a.db"], 64, '--keep "0"'],
    [["prune", "--dir", "/nonexistent", "--keep", "1001", "--taken", "a.db"], 64, '--keep "1001"'],
    [["prune", "--dir", "/nonexistent", "--keep", "2x", "--taken", "a.db"], 64, '--keep "2x"'],
    [["prune", "--dir", "STORE", "--keep", "1000", "--taken", "../a.db"], 1, "is not a plain .db file name"],
    [
      [
        "prune",
        "--dir",
        "STORE",
        "--keep",
        "1",
        "--taken",
        "a.db",
        ...Array(101).fill(["--hold", "h.db"]).flat(),
      ],
      64,
      "--hold: at most 100 (got 101)",
    ],
    [[...PUSH, "--hold", "k"], 64, "--hold: only with --keep"],
    [[...PUSH, "--keep", "0"], 64, '--keep "0"'],
  ])("refuses %j with exit %i", (args, status, message) => {
    const resolved = args.map((a) =>
      a
        .replace("STORE", join(dir, "store"))
        .replace(/^ID$/, join(dir, "identity.txt"))
        .replace(/^NEW$/, join(dir, `new-${Math.random()}`)),
    );
    const run = gitfleet(...resolved);
    expect(run.status).toBe(status);
    expect(run.stderr).toContain(message);
    expect(run.stderr).not.toContain(store.key.secretAccessKey);
  });
});
