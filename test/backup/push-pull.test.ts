import { randomBytes } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REQUIRED_PKI } from "../../src/backup/backup-contents.js";
import { listBackups, pullBackup } from "../../src/backup/pull.js";
import { pushBackup, stageSnapshot } from "../../src/backup/push.js";
import type { BackupStore } from "../../src/backup/store-config.js";
import { S3Client } from "../../src/objectstore/s3-client.js";
import { type RunningStore, startS3Store } from "../helpers/s3-store.js";
import { type AgeKey, ageKey } from "../helpers/sops.js";

// Push and pull against a real S3-compatible store, with fresh age keys and random stand-ins for the
// PKI files (nothing here is a credential of anything).
describe("off-host backups: push, then pull", () => {
  let running: RunningStore;
  let dir: string;
  let operator: AgeKey;
  let second: AgeKey;
  let store: BackupStore;
  const snapshot = randomBytes(700 * 1024);
  const pki = new Map<string, Buffer>();

  beforeAll(async () => {
    running = await startS3Store();
    dir = mkdtempSync(join(tmpdir(), "gitfleet-backup-"));
    operator = await ageKey();
    second = await ageKey();
    store = {
      location: { endpoint: running.endpoint, region: "us-east-1", bucket: running.bucket },
      prefix: "hosted/",
      key: running.key,
      recipients: [operator.recipient, second.recipient],
    };
    mkdirSync(join(dir, "backup"));
    writeFileSync(join(dir, "backup/etcd-backup-29412345-abcde.db"), snapshot);
    for (const entry of [...REQUIRED_PKI, "pki/ca/ca.crt", "pki/ca/previous.crt"]) {
      const bytes = randomBytes(1200);
      pki.set(entry, bytes);
      mkdirSync(join(dir, entry, ".."), { recursive: true });
      writeFileSync(join(dir, entry), bytes);
    }
    // What a Secret volume also holds, never backed up: Kubernetes' own entries, keys of other Secrets.
    writeFileSync(join(dir, "pki/ca/..data"), "x");
    mkdirSync(join(dir, "pki/apiserver-serving"));
    writeFileSync(join(dir, "pki/apiserver-serving/tls.key"), "leaf");
  }, 120_000);
  afterAll(async () => {
    await running?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const push = (cluster: string, at: string, pkiDir = join(dir, "pki")) =>
    pushBackup({
      cluster,
      snapshot: join(dir, "backup/etcd-backup-29412345-abcde.db"),
      pkiDir,
      store,
      workDir: dir,
      now: new Date(at),
    });

  it("puts one encrypted object per push and brings back the snapshot and the PKI, byte for byte", async () => {
    const put = await push("pc-1", "2026-12-06T10:00:00Z");
    expect(put.key).toBe("hosted/pc-1/20261206T100000Z-etcd-backup-29412345-abcde.tar.age");
    // What the store holds is age-encrypted: neither the snapshot nor a key appears in it.
    const stored = Buffer.from(await new S3Client(store.location, store.key).get(put.key, 10 << 20));
    expect(stored.subarray(0, 22).toString()).toBe("age-encryption.org/v1\n");
    expect(stored.includes(snapshot.subarray(0, 64))).toBe(false);
    expect(stored.includes(pki.get("pki/ca/tls.key")?.subarray(0, 64) as Buffer)).toBe(false);
    // The work directory keeps nothing.
    expect(readdirSync(dir).filter((name) => name.startsWith("push-"))).toEqual([]);

    for (const key of [operator, second]) {
      const into = join(dir, `restored-${key.recipient.slice(-6)}`);
      const pulled = await pullBackup({
        store,
        cluster: "pc-1",
        identities: [key.identity],
        into,
        workDir: dir,
        maxBytes: 10 << 20,
      });
      expect(pulled.manifest).toEqual({
        cluster: "pc-1",
        snapshot: "etcd-backup-29412345-abcde.db",
        takenAt: "2026-12-06T10:00:00.000Z",
      });
      // The manifest and the keys come first, the snapshot last: a reader of the keys stops before it.
      expect([pulled.files[0], pulled.files.at(-1)]).toEqual(["backup.json", "snapshot.db"]);
      expect(readFileSync(join(into, "snapshot.db")).equals(snapshot)).toBe(true);
      for (const [entry, bytes] of pki) expect(readFileSync(join(into, entry)).equals(bytes)).toBe(true);
      expect(existsSync(join(into, "pki/apiserver-serving"))).toBe(false);
      expect(existsSync(join(into, "pki/ca/..data"))).toBe(false);
    }
  });

  it("pulls the newest backup unless a key is named, and lists them oldest first", async () => {
    const older = await push("pc-2", "2026-12-06T10:00:00Z");
    const newer = await push("pc-2", "2026-12-06T16:00:00Z");
    expect((await listBackups(store, "pc-2")).map((o) => o.key)).toEqual([older.key, newer.key]);
    const pull = (key?: string, into = join(dir, `pc-2-${key ? "older" : "newest"}`)) =>
      pullBackup({
        store,
        cluster: "pc-2",
        ...(key ? { key } : {}),
        identities: [operator.identity],
        into,
        workDir: dir,
        maxBytes: 10 << 20,
      });
    expect((await pull()).key).toBe(newer.key);
    expect((await pull(older.key)).manifest.takenAt).toBe("2026-12-06T10:00:00.000Z");
    await expect(pull("hosted/pc-1/20261206T100000Z-etcd-backup-29412345-abcde.tar.age")).rejects.toThrow(
      "is not a backup of pc-2 in this store",
    );
  });

  it("opens nothing with an identity that is not a recipient", async () => {
    const stranger = await ageKey();
    const into = join(dir, "stranger");
    await expect(
      pullBackup({
        store,
        cluster: "pc-1",
        identities: [stranger.identity],
        into,
        workDir: dir,
        maxBytes: 10 << 20,
      }),
    ).rejects.toThrow("cannot be opened with these identities");
    expect(existsSync(into)).toBe(false);
  });

  it("refuses a backup of another cluster put under this cluster's name", async () => {
    const other = await push("pc-3", "2026-12-06T10:00:00Z");
    const copy = join(dir, "copy.age");
    await new S3Client(store.location, store.key).getFile(other.key, copy, 10 << 20);
    await new S3Client(store.location, store.key).putFile(
      "hosted/pc-4/20261206T100000Z-etcd-backup-1.tar.age",
      copy,
    );
    const into = join(dir, "pc-4");
    await expect(
      pullBackup({
        store,
        cluster: "pc-4",
        identities: [operator.identity],
        into,
        workDir: dir,
        maxBytes: 10 << 20,
      }),
    ).rejects.toThrow('is a backup of "pc-3", not of pc-4');
    expect(existsSync(into)).toBe(false);
  });

  it("reads no object past maxBytes", async () => {
    await expect(
      pullBackup({
        store,
        cluster: "pc-1",
        identities: [operator.identity],
        into: join(dir, "small"),
        workDir: dir,
        maxBytes: 1000,
      }),
    ).rejects.toThrow(/more than the 1000/);
  });

  it("puts nothing when a CA's key is not mounted", async () => {
    const partial = join(dir, "partial");
    mkdirSync(join(partial, "pki/ca"), { recursive: true });
    writeFileSync(join(partial, "pki/ca/tls.crt"), "c");
    await expect(push("pc-5", "2026-12-06T10:00:00Z", join(partial, "pki"))).rejects.toThrow(
      /the PKI lacks pki\/ca\/tls.key, .*nothing was put/,
    );
    expect(await listBackups(store, "pc-5")).toEqual([]);
  });

  it("stages a restore's snapshot alone for its own key: the Job's pull opens it, the operator's identity and a backup's reader do not", async () => {
    const put = await push("pc-6", "2026-12-06T10:00:00Z");
    const unpacked = join(dir, "pc-6-unpacked");
    await pullBackup({
      store,
      cluster: "pc-6",
      identities: [operator.identity],
      into: unpacked,
      workDir: dir,
      maxBytes: 10 << 20,
    });
    const restoreKey = await ageKey();
    const staged = await stageSnapshot({
      cluster: "pc-6",
      restore: "back",
      manifest: join(unpacked, "backup.json"),
      snapshot: join(unpacked, "snapshot.db"),
      recipient: restoreKey.recipient,
      store,
      workDir: dir,
      now: new Date("2026-12-06T11:00:00Z"),
    });
    expect(staged.key).toBe("hosted/pc-6/restores/back.tar.age");
    // Not a backup: listing the cluster's backups does not show it, and the newest is still the backup.
    expect((await listBackups(store, "pc-6")).map((o) => o.key)).toEqual([put.key]);
    expect(readdirSync(dir).filter((name) => name.startsWith("stage-"))).toEqual([]);
    const pull = (
      identity: string,
      into: string,
      extra: { staged?: string; key?: string } = { staged: "back" },
    ) =>
      pullBackup({
        store,
        cluster: "pc-6",
        ...extra,
        identities: [identity],
        into,
        workDir: dir,
        maxBytes: 10 << 20,
      });
    const into = join(dir, "pc-6-staged");
    const pulled = await pull(restoreKey.identity, into);
    expect(pulled.files).toEqual(["backup.json", "snapshot.db"]);
    expect(pulled.manifest.snapshot).toBe("etcd-backup-29412345-abcde.db");
    expect(readFileSync(join(into, "snapshot.db")).equals(snapshot)).toBe(true);
    expect(existsSync(join(into, "pki"))).toBe(false);
    // The operator's identity is not a recipient of the staged copy, and the restore's key opens no backup.
    await expect(pull(operator.identity, join(dir, "pc-6-operator"))).rejects.toThrow(
      "cannot be opened with these identities",
    );
    await expect(pull(restoreKey.identity, join(dir, "pc-6-backup"), {})).rejects.toThrow(
      "cannot be opened with these identities",
    );
    // A staged copy's key is not taken as a backup's.
    await expect(pull(operator.identity, join(dir, "pc-6-as-key"), { key: staged.key })).rejects.toThrow(
      "is not a backup of pc-6 in this store",
    );
  });

  it("refuses, as a restore's staged copy, an archive holding keys, and a restore name that is not a name", async () => {
    // A whole backup put where a staged copy goes: it holds the PKI, which a Job is never given.
    const put = await push("pc-7", "2026-12-06T10:00:00Z");
    const copy = join(dir, "pc-7.age");
    await new S3Client(store.location, store.key).getFile(put.key, copy, 10 << 20);
    await new S3Client(store.location, store.key).putFile("hosted/pc-7/restores/back.tar.age", copy);
    const pull = (staged: string, into: string) =>
      pullBackup({
        store,
        cluster: "pc-7",
        staged,
        identities: [operator.identity],
        into,
        workDir: dir,
        maxBytes: 10 << 20,
      });
    await expect(pull("back", join(dir, "pc-7-staged"))).rejects.toThrow("holds more than a staged snapshot");
    expect(existsSync(join(dir, "pc-7-staged"))).toBe(false);
    await expect(
      pull("../pc-1/20261206T100000Z-etcd-backup-29412345-abcde", join(dir, "pc-7-escape")),
    ).rejects.toThrow(/^restore "\.\.\/pc-1/);
  });
});
