import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseBackupStore, readStoreFiles, readStoreIdentityFile } from "../../src/backup/store-config.js";
import { ageKey } from "../helpers/sops.js";

const recipient = (await ageKey()).recipient;
const SECRET = "s3cr3t-value-never-said";
const good = {
  endpoint: "https://s3.eu-west-1.example.com",
  bucket: "fleet-backups",
  "access-key-id": "writer",
  "secret-access-key": SECRET,
  recipients: `# the platform team's offline key\n${recipient}\n`,
};

describe("a backup store's files", () => {
  it("give the store, with defaults for region and prefix", () => {
    const store = parseBackupStore(good);
    expect(store.location.endpoint.href).toBe("https://s3.eu-west-1.example.com/");
    expect(store.location.region).toBe("us-east-1");
    expect(store.prefix).toBe("");
    expect(store.recipients).toEqual([recipient]);
    expect(parseBackupStore({ ...good, prefix: "hosted/eu/", region: "eu-west-1\n" })).toMatchObject({
      prefix: "hosted/eu/",
      location: { region: "eu-west-1" },
    });
    expect(parseBackupStore({ ...good, prefix: "hosted" }).prefix).toBe("hosted/");
  });

  it.each([
    [{ endpoint: undefined }, "endpoint is missing"],
    [{ bucket: " " }, "bucket is missing"],
    [{ "access-key-id": undefined }, "access-key-id is missing"],
    [{ "secret-access-key": "" }, "secret-access-key is missing"],
    [{ recipients: "" }, "recipients is missing"],
    [{ endpoint: "s3.example.com" }, "endpoint is not a URL"],
    [{ endpoint: "ftp://s3.example.com" }, "endpoint is not an http(s) URL"],
    [{ endpoint: "https://user:pw@s3.example.com" }, "endpoint holds credentials"],
    [{ endpoint: "https://s3.example.com/?x=1" }, "endpoint has a query or fragment"],
    [{ bucket: "ab" }, "is not a bucket name"],
    [{ bucket: "Fleet" }, "is not a bucket name"],
    [{ bucket: "a..b" }, "is not a bucket name"],
    [{ bucket: "a".repeat(64) }, "is not a bucket name"],
    [{ region: "eu west" }, "region is not a region name"],
    [{ prefix: "../other" }, "prefix is not a path of plain names"],
    [{ prefix: "/abs" }, "prefix is not a path of plain names"],
    [{ prefix: "a//b" }, "prefix is not a path of plain names"],
    [{ prefix: "a".repeat(201) }, "prefix is longer than 200 characters"],
    [{ "access-key-id": "two words" }, "access-key-id is not one printable word"],
    [{ "secret-access-key": "a\u0000b" }, "secret-access-key is not one printable word"],
    [{ recipients: `${recipient}\nage1notakey\n` }, "recipients line 2: not an age X25519 recipient"],
    [{ recipients: "# only a comment\n" }, "recipients names no recipient"],
  ])("refuses %j: %s", (change, message) => {
    const files: Record<string, string | undefined> = { ...good, ...change };
    const error = (() => {
      try {
        parseBackupStore(files);
      } catch (e) {
        return String(e);
      }
      return "";
    })();
    expect(error).toContain(message);
    expect(error).not.toContain(SECRET);
  });

  it("takes 16 recipients and refuses 17", async () => {
    const keys = await Promise.all(Array.from({ length: 17 }, () => ageKey()));
    const lines = keys.map((k) => k.recipient);
    expect(parseBackupStore({ ...good, recipients: lines.slice(0, 16).join("\n") }).recipients).toHaveLength(
      16,
    );
    expect(() => parseBackupStore({ ...good, recipients: lines.join("\n") })).toThrow("more than 16");
  });

  it("takes a bucket of 3 and of 63 characters", () => {
    expect(parseBackupStore({ ...good, bucket: "abc" }).location.bucket).toBe("abc");
    expect(parseBackupStore({ ...good, bucket: "a".repeat(63) }).location.bucket).toHaveLength(63);
  });
});

// The identity file gitfleet opens backups with: read from inside the store's directory, bounded, and
// never among the files a host is given.
describe("a backup store's identity file", () => {
  const withDir = async (lay: (dir: string) => void, read: (dir: string) => Promise<void>) => {
    const dir = mkdtempSync(join(tmpdir(), "gitfleet-store-"));
    try {
      lay(dir);
      await read(dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };

  it("is read, and is not one of the files the host's Secret gets", async () => {
    const key = await ageKey();
    await withDir(
      (dir) => {
        for (const [name, text] of Object.entries(good)) writeFileSync(join(dir, name), text);
        writeFileSync(join(dir, "identity"), `# gitfleet's\n${key.identity}\n`);
      },
      async (dir) => {
        expect(await readStoreIdentityFile(dir)).toBe(`# gitfleet's\n${key.identity}\n`);
        const files = await readStoreFiles(dir);
        expect(Object.keys(files).sort()).toEqual(Object.keys(good).sort());
        expect(JSON.stringify(files)).not.toContain(key.identity);
      },
    );
  });

  it("reads one of exactly 16 KiB", async () => {
    await withDir(
      (dir) => writeFileSync(join(dir, "identity"), "#".repeat(16 * 1024)),
      async (dir) => expect((await readStoreIdentityFile(dir)).length).toBe(16 * 1024),
    );
  });

  it.each([
    ["missing", () => {}, "identity: the file does not exist"],
    [
      "past 16 KiB",
      (dir: string) => writeFileSync(join(dir, "identity"), "#".repeat(16 * 1024 + 1)),
      "identity: the file is too large",
    ],
    [
      "a link out of the directory",
      (dir: string) => {
        writeFileSync(join(dir, "..", `${dir.split("/").pop()}-outside`), "AGE-SECRET-KEY-1X");
        symlinkSync(join(dir, "..", `${dir.split("/").pop()}-outside`), join(dir, "identity"));
      },
      "identity: the file",
    ],
  ])("refuses one %s, saying why and not what it holds", async (_name, lay, message) => {
    await withDir(lay, async (dir) => {
      const error = await readStoreIdentityFile(dir).then(
        () => undefined,
        (e: Error) => e.message,
      );
      expect(error).toContain(message);
      expect(error).toContain("gitfleet needs it to bring a backup back");
      expect(error).not.toContain("AGE-SECRET-KEY");
      rmSync(join(dir, "..", `${dir.split("/").pop()}-outside`), { force: true });
    });
  });
});
