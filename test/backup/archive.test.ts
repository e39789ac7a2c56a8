import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { readArchiveIndex, writeArchive } from "../../src/backup/archive.js";

const allowAll = (max: number) => (name: string) => (name.startsWith("denied") ? undefined : max);

// A ustar header as a hostile archive would write it: any name, type and size, checksum right or not.
function header(
  name: string,
  size: number,
  type = "0",
  options: { badSum?: boolean; prefix?: string } = {},
): Buffer {
  const block = Buffer.alloc(512);
  block.write(name, 0, 100, "utf8");
  block.write("0000644\0", 100);
  block.write(`${size.toString(8).padStart(11, "0")}\0`, 124);
  block.write("00000000000\0", 136);
  block.write("        ", 148);
  block.write(type, 156);
  block.write("ustar\0", 257);
  block.write("00", 263);
  if (options.prefix) block.write(options.prefix, 345);
  const sum = block.reduce((t, b) => t + b, 0) + (options.badSum ? 1 : 0);
  block.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148);
  return block;
}
const body = (size: number) => Buffer.alloc(Math.ceil(size / 512) * 512, 0x61);
const end = Buffer.alloc(1024);

describe("backup archives", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "gitfleet-archive-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("are ustar files GNU tar lists and extracts byte for byte", async () => {
    writeFileSync(join(dir, "a"), "first\n");
    writeFileSync(join(dir, "b"), Buffer.alloc(1300, 7));
    writeFileSync(join(dir, "empty"), "");
    await writeArchive(
      join(dir, "out.tar"),
      [
        { name: "backup.json", from: join(dir, "a") },
        { name: "pki/ca/tls.key", from: join(dir, "b") },
        { name: "pki/empty", from: join(dir, "empty") },
      ],
      new Date("2026-12-06T00:00:00Z"),
    );
    expect(execFileSync("tar", ["-tf", join(dir, "out.tar")], { encoding: "utf8" }).split("\n")).toEqual([
      "backup.json",
      "pki/ca/tls.key",
      "pki/empty",
      "",
    ]);
    mkdirSync(join(dir, "x"));
    execFileSync("tar", ["-xf", join(dir, "out.tar"), "-C", join(dir, "x")]);
    expect(readFileSync(join(dir, "x/pki/ca/tls.key")).equals(Buffer.alloc(1300, 7))).toBe(true);
    const index = await readArchiveIndex(join(dir, "out.tar"), allowAll(2000), 10);
    expect(index.map((e) => [e.name, e.size])).toEqual([
      ["backup.json", 6],
      ["pki/ca/tls.key", 1300],
      ["pki/empty", 0],
    ]);
  });

  it("read what GNU tar writes in ustar format", async () => {
    mkdirSync(join(dir, "src/pki/ca"), { recursive: true });
    writeFileSync(join(dir, "src/snapshot.db"), Buffer.alloc(5000, 1));
    writeFileSync(join(dir, "src/pki/ca/tls.crt"), "c");
    execFileSync("tar", [
      "--format=ustar",
      "-cf",
      join(dir, "gnu.tar"),
      "-C",
      join(dir, "src"),
      "snapshot.db",
      "pki/ca/tls.crt",
    ]);
    const index = await readArchiveIndex(join(dir, "gnu.tar"), allowAll(5000), 10);
    expect(index.map((e) => [e.name, e.size])).toEqual([
      ["snapshot.db", 5000],
      ["pki/ca/tls.crt", 1],
    ]);
  });

  it.each([
    ["a name that climbs out", [header("../etc/passwd", 1), body(1), end], "not a plain name"],
    ["an absolute name", [header("/etc/passwd", 1), body(1), end], "not a plain name"],
    ["a hidden name", [header("pki/.ssh", 1), body(1), end], "not a plain name"],
    ["a symbolic link", [header("snapshot.db", 0, "2"), end], 'of type "2"'],
    ["a hard link", [header("snapshot.db", 0, "1"), end], 'of type "1"'],
    ["a directory", [header("pki", 0, "5"), end], 'of type "5"'],
    ["a device", [header("snapshot.db", 0, "3"), end], 'of type "3"'],
    [
      "a name split by a ustar prefix",
      [header("x", 1, "0", { prefix: "pki" }), body(1), end],
      "ustar prefix",
    ],
    ["a name not allowed", [header("denied.txt", 1), body(1), end], "which a backup never holds"],
    ["an entry twice", [header("a", 1), body(1), header("a", 1), body(1), end], "holds a twice"],
    [
      "an entry past its allowance",
      [header("big", 101), body(101), end],
      "big is 101 bytes, more than the 100 allowed",
    ],
    ["an entry past the archive's end", [header("a", 100)], "runs past the archive's end"],
    ["a wrong checksum", [header("a", 1, "0", { badSum: true }), body(1), end], "checksum is wrong"],
    ["no end marker", [header("a", 1), body(1)], "ends without its end marker"],
    [
      "too many entries",
      [...Array.from({ length: 4 }, (_, i) => [header(`e${i}`, 1), body(1)]).flat(), end],
      "more than 3 entries",
    ],
  ])("refuse %s", async (_what, parts, message) => {
    writeFileSync(join(dir, "bad.tar"), Buffer.concat(parts as Buffer[]));
    await expect(readArchiveIndex(join(dir, "bad.tar"), allowAll(100), 3)).rejects.toThrow(message);
  });

  it("take an entry at its allowance and three entries when three are allowed", async () => {
    const parts = [header("a", 100), body(100), header("b", 1), body(1), header("c", 1), body(1), end];
    writeFileSync(join(dir, "ok.tar"), Buffer.concat(parts));
    expect(await readArchiveIndex(join(dir, "ok.tar"), allowAll(100), 3)).toHaveLength(3);
  });

  it("are not written with a name that is not plain", async () => {
    writeFileSync(join(dir, "a"), "x");
    await expect(
      writeArchive(join(dir, "o.tar"), [{ name: "../a", from: join(dir, "a") }], new Date()),
    ).rejects.toThrow("not a plain name");
  });
});
