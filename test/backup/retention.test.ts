import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { backupKey } from "../../src/backup/backup-contents.js";
import {
  backupsToPrune,
  MAX_HELD,
  MAX_KEEP,
  pruneBackups,
  pruneSnapshots,
  snapshotsToPrune,
} from "../../src/backup/retention.js";
import type { BackupStore } from "../../src/backup/store-config.js";
import { S3Client } from "../../src/objectstore/s3-client.js";
import { type RunningStore, startS3Store } from "../helpers/s3-store.js";

const at = (minute: number) => Date.UTC(2026, 11, 6, 10, minute);
const snap = (name: string, minute: number) => ({ name, mtimeMs: at(minute) });

describe("which snapshots a run deletes", () => {
  // Five snapshots a minute apart; the run's own is the newest unless a row says.
  const five = [snap("a.db", 1), snap("b.db", 2), snap("c.db", 3), snap("d.db", 4), snap("e.db", 5)];
  it.each([
    { keep: 1, taken: "e.db", deleted: ["a.db", "b.db", "c.db", "d.db"] },
    { keep: 4, taken: "e.db", deleted: ["a.db"] },
    // At, just below and just above the count of files.
    { keep: 5, taken: "e.db", deleted: [] },
    { keep: 6, taken: "e.db", deleted: [] },
    { keep: 2, taken: "e.db", deleted: ["a.db", "b.db", "c.db"] },
    // The run's own is kept even when it is not the newest (a clock set back): it counts among keep.
    { keep: 2, taken: "a.db", deleted: ["b.db", "c.db", "d.db"] },
    { keep: 1, taken: "c.db", deleted: ["a.db", "b.db", "d.db", "e.db"] },
  ])("keep $keep after $taken: deletes $deleted", ({ keep, taken, deleted }) => {
    expect(snapshotsToPrune(five, keep, taken)).toEqual(deleted);
  });

  it("goes by time written, not by name, and breaks a tie by keeping the later name", () => {
    const files = [snap("z-old.db", 1), snap("a-new.db", 9), snap("m.db", 5), snap("n.db", 5)];
    expect(snapshotsToPrune(files, 2, "a-new.db")).toEqual(["m.db", "z-old.db"]);
  });

  // What a restore in the repo names is held: never deleted, and not counted among keep.
  it.each([
    { keep: 2, held: ["a.db"], deleted: ["b.db", "c.db"] },
    { keep: 2, held: ["a.db", "c.db"], deleted: ["b.db"] },
    { keep: 1, held: ["b.db"], deleted: ["a.db", "c.db", "d.db"] },
    // Holding the run's own changes nothing: it is kept and counted as before.
    { keep: 2, held: ["e.db"], deleted: ["a.db", "b.db", "c.db"] },
    // A held name no file has: the count is as without it.
    { keep: 4, held: ["gone.db"], deleted: ["a.db"] },
    // Keep at, just below and just above the files that are not held.
    { keep: 4, held: ["a.db"], deleted: [] },
    { keep: 3, held: ["a.db"], deleted: ["b.db"] },
    { keep: 5, held: ["a.db"], deleted: [] },
  ])("keep $keep holding $held: deletes $deleted", ({ keep, held, deleted }) => {
    expect(snapshotsToPrune(five, keep, "e.db", held)).toEqual(deleted);
  });

  it.each([0, -1, 1.5, MAX_KEEP + 1, Number.NaN])("refuses keep %s", (keep) => {
    expect(() => snapshotsToPrune(five, keep, "e.db")).toThrow(/keep must be a whole number from 1 to 1000/);
  });

  it("keeps exactly min(keep, files not held) with the run's own among them and every held one, whatever the times (property)", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.stringMatching(/^[a-z]{1,6}$/), { minLength: 1, maxLength: 30 }),
        fc.array(fc.integer({ min: 0, max: 50 }), { minLength: 30, maxLength: 30 }),
        fc.integer({ min: 1, max: 40 }),
        fc.nat(),
        fc.array(fc.boolean(), { minLength: 30, maxLength: 30 }),
        (names, minutes, keep, pick, holds) => {
          const files = names.map((n, i) => snap(`${n}.db`, minutes[i] as number));
          const taken = (files[pick % files.length] as { name: string }).name;
          const held = files.filter((f, i) => holds[i] && f.name !== taken).map((f) => f.name);
          const deleted = snapshotsToPrune(files, keep, taken, held);
          const kept = files.filter((f) => !deleted.includes(f.name) && !held.includes(f.name));
          expect(kept.length).toBe(Math.min(keep, files.length - held.length));
          expect(deleted).not.toContain(taken);
          for (const name of held) expect(deleted).not.toContain(name);
          // No deleted snapshot is newer than a kept one other than the run's own.
          const oldestKept = Math.min(...kept.filter((f) => f.name !== taken).map((f) => f.mtimeMs));
          for (const name of deleted)
            expect(files.find((f) => f.name === name)?.mtimeMs).toBeLessThanOrEqual(oldestKept);
        },
      ),
    );
  });
});

describe("which backups a push deletes from the store", () => {
  const key = (cluster: string, minute: number) =>
    backupKey("hosted/", cluster, `etcd-backup-${minute}.db`, new Date(at(minute)));
  const keys = [1, 2, 3, 4].map((m) => key("pc-1", m));
  const others = [
    key("pc-10", 0), // a cluster whose name starts with this one's
    key("pc-2", 0),
    "hosted/pc-1/restores/move-pc-1.tar.age", // a restore's staged snapshot
    "hosted/pc-1/notes.txt",
    "elsewhere/pc-1/20261206T100000Z-etcd-backup-0.tar.age",
  ];

  it.each([
    { keep: 1, pushed: 4, deleted: [1, 2, 3] },
    { keep: 3, pushed: 4, deleted: [1] },
    { keep: 4, pushed: 4, deleted: [] },
    { keep: 5, pushed: 4, deleted: [] },
    // The push's own key is kept even if an older one (a clock behind): the newest others fill the rest.
    { keep: 2, pushed: 1, deleted: [2, 3] },
  ])("keep $keep after pushing #$pushed: deletes $deleted", ({ keep, pushed, deleted }) => {
    expect(backupsToPrune([...others, ...keys], keep, key("pc-1", pushed), "hosted/", "pc-1")).toEqual(
      deleted.map((m) => key("pc-1", m)),
    );
  });

  it.each([
    { keep: 2, held: [1], deleted: [2] },
    { keep: 1, held: [2, 3], deleted: [1] },
    // A held key of another cluster or a staged restore holds nothing of this cluster's.
    { keep: 2, held: [], extra: ["hosted/pc-1/restores/move-pc-1.tar.age"], deleted: [1, 2] },
    // Keep at, just below and just above the backups not held.
    { keep: 3, held: [1], deleted: [] },
    { keep: 2, held: [1], deleted: [2] },
    { keep: 4, held: [1], deleted: [] },
  ])("keep $keep holding #$held: deletes $deleted", ({ keep, held, extra, deleted }) => {
    const holding = [...held.map((m) => key("pc-1", m)), ...(extra ?? [])];
    expect(backupsToPrune([...others, ...keys], keep, key("pc-1", 4), "hosted/", "pc-1", holding)).toEqual(
      deleted.map((m) => key("pc-1", m)),
    );
  });

  it("counts the push's own key among keep when the listing does not show it yet", () => {
    expect(backupsToPrune(keys, 2, key("pc-1", 9), "hosted/", "pc-1")).toEqual(keys.slice(0, 3));
  });
});

describe("pruning for real: the backup volume and an S3-compatible store", () => {
  let dir: string;
  let running: RunningStore;
  let store: BackupStore;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "gitfleet-prune-"));
    running = await startS3Store();
    store = {
      location: { endpoint: running.endpoint, region: "us-east-1", bucket: running.bucket },
      prefix: "hosted/",
      key: running.key,
      recipients: [],
    };
  }, 120_000);
  afterAll(async () => {
    await running?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("deletes the oldest plain snapshots only: a restore's directory, a link, other files stay", async () => {
    const volume = join(dir, "volume");
    mkdirSync(volume);
    for (const [name, minute] of [
      ["etcd-backup-1-aaaaa.db", 1],
      ["etcd-backup-2-bbbbb.db", 2],
      ["etcd-backup-now-ccccc.db", 3],
      ["etcd-backup-4-ddddd.db", 4],
    ] as const) {
      writeFileSync(join(volume, name), "snapshot");
      utimesSync(join(volume, name), new Date(at(minute)), new Date(at(minute)));
    }
    // Older than all, but none of them a snapshot of this volume.
    const outside = join(dir, "outside.db");
    writeFileSync(outside, "not the volume's");
    for (const [path, minute] of [
      [join(volume, "etcd-restore-r1"), 0],
      [join(volume, "lost+found"), 0],
    ] as const) {
      mkdirSync(path);
      writeFileSync(join(path, "snapshot.db"), "fetched");
      utimesSync(path, new Date(at(minute)), new Date(at(minute)));
    }
    symlinkSync(outside, join(volume, "linked.db"));
    writeFileSync(join(volume, "notes.txt"), "x");
    utimesSync(join(volume, "notes.txt"), new Date(at(0)), new Date(at(0)));

    expect(await pruneSnapshots(volume, 2, "etcd-backup-4-ddddd.db")).toEqual([
      "etcd-backup-1-aaaaa.db",
      "etcd-backup-2-bbbbb.db",
    ]);
    expect(readdirSync(volume).sort()).toEqual([
      "etcd-backup-4-ddddd.db",
      "etcd-backup-now-ccccc.db",
      "etcd-restore-r1",
      "linked.db",
      "lost+found",
      "notes.txt",
    ]);
    expect(readdirSync(dir)).toContain("outside.db");
    // A second run with the same count deletes nothing more.
    expect(await pruneSnapshots(volume, 2, "etcd-backup-4-ddddd.db")).toEqual([]);
  });

  it("keeps a snapshot a restore holds, however old, and the newest others up to keep", async () => {
    const volume = join(dir, "held");
    mkdirSync(volume);
    for (const minute of [1, 2, 3, 4, 5]) {
      const name = join(volume, `etcd-backup-${minute}.db`);
      writeFileSync(name, "snapshot");
      utimesSync(name, new Date(at(minute)), new Date(at(minute)));
    }
    expect(
      await pruneSnapshots(volume, 2, "etcd-backup-5.db", ["etcd-backup-1.db", "../outside.db"]),
    ).toEqual(["etcd-backup-2.db", "etcd-backup-3.db"]);
    expect(readdirSync(volume).sort()).toEqual(["etcd-backup-1.db", "etcd-backup-4.db", "etcd-backup-5.db"]);
    // Once the restore leaves the repo, the next run lets it go.
    expect(await pruneSnapshots(volume, 2, "etcd-backup-5.db")).toEqual(["etcd-backup-1.db"]);
  });

  it.each([
    [MAX_HELD, []],
    [MAX_HELD + 1, null],
  ])("takes %s held names at most", async (count, result) => {
    const volume = join(dir, `held-${count}`);
    mkdirSync(volume);
    writeFileSync(join(volume, "now.db"), "snapshot");
    const held = Array.from({ length: count }, (_, i) => `held-${i}.db`);
    const run = pruneSnapshots(volume, 1, "now.db", held);
    if (result) await expect(run).resolves.toEqual(result);
    else await expect(run).rejects.toThrow(`at most ${MAX_HELD} held (got ${MAX_HELD + 1})`);
  });

  it.each([
    ["a name that climbs out", "../outside.db", /not a plain \.db file name/],
    ["a snapshot that is not there", "etcd-backup-9-zzzzz.db", /is not in .*: nothing was deleted/],
  ])("refuses %s and deletes nothing", async (_what, taken, error) => {
    const volume = join(dir, `refuse-${readdirSync(dir).length}`);
    mkdirSync(volume);
    for (const name of ["one.db", "two.db"]) writeFileSync(join(volume, name), "snapshot");
    await expect(pruneSnapshots(volume, 1, taken)).rejects.toThrow(error);
    expect(readdirSync(volume).sort()).toEqual(["one.db", "two.db"]);
  });

  it("deletes the cluster's oldest backups in the store, and nothing of another cluster or a restore", async () => {
    const client = new S3Client(store.location, store.key);
    const file = join(dir, "object");
    writeFileSync(file, "sealed");
    const key = (cluster: string, minute: number) =>
      backupKey("hosted/", cluster, `etcd-backup-${minute}.db`, new Date(at(minute)));
    const put = [1, 2, 3, 4, 5].map((m) => key("pc-1", m));
    const untouched = [key("pc-10", 0), key("pc-2", 0), "hosted/pc-1/restores/move-pc-1.tar.age"];
    for (const k of [...put, ...untouched]) await client.putFile(k, file);

    // Held by a restore in the repo: the oldest stays and is not counted.
    expect(await pruneBackups(store, "pc-1", 3, key("pc-1", 5), [put[0] as string])).toEqual([put[1]]);
    expect(await pruneBackups(store, "pc-1", 3, key("pc-1", 5))).toEqual([put[0]]);
    const left = (await client.list("hosted/")).map((o) => o.key).sort();
    expect(left).toEqual([...put.slice(2), ...untouched].sort());
    // Deleting what is already gone is no error: a push retried after a prune that half ran.
    await client.delete(put[0] as string);
    expect(await pruneBackups(store, "pc-1", 3, key("pc-1", 5))).toEqual([]);
  });
});
