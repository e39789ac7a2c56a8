import { describe, expect, it } from "vitest";
import { parseBackupStore } from "../../src/backup/store-config.js";
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
