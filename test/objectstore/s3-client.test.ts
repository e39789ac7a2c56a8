import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { S3Client } from "../../src/objectstore/s3-client.js";
import { sha256Hex } from "../../src/objectstore/sigv4.js";
import { type RunningStore, startS3Store } from "../helpers/s3-store.js";

// Against a real S3-compatible store (gofakes3 as rclone serves it, checking every signature).
describe("S3Client against a real S3-compatible store", () => {
  let store: RunningStore;
  let dir: string;
  const client = () =>
    new S3Client({ endpoint: store.endpoint, region: "us-east-1", bucket: store.bucket }, store.key);

  beforeAll(async () => {
    store = await startS3Store();
    dir = mkdtempSync(join(tmpdir(), "gitfleet-s3-"));
  }, 120_000);
  afterAll(async () => {
    await store?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("puts a file, gets the same bytes back, and lists it under its prefix", async () => {
    const path = join(dir, "one.bin");
    const bytes = Buffer.alloc(3 * 1024 * 1024 + 17, 7);
    bytes.write("start", 0);
    writeFileSync(path, bytes);
    const put = await client().putFile("pc-1/2026-12-06T11:00:00Z one.tar.age", path);
    expect(put).toEqual({ size: bytes.length, sha256: sha256Hex(bytes) });
    const back = Buffer.from(await client().get("pc-1/2026-12-06T11:00:00Z one.tar.age", bytes.length));
    expect(back.equals(bytes)).toBe(true);
    const listed = await client().list("pc-1/");
    expect(listed.map((o) => [o.key, o.size])).toEqual([
      ["pc-1/2026-12-06T11:00:00Z one.tar.age", bytes.length],
    ]);
    expect(await client().list("pc-2/")).toEqual([]);
  });

  it("lists page after page: 1,003 keys come back in key order", async () => {
    const path = join(dir, "small.bin");
    writeFileSync(path, "x");
    const keys = Array.from({ length: 1003 }, (_, i) => `many/${String(i).padStart(4, "0")}`);
    for (let i = 0; i < keys.length; i += 50)
      await Promise.all(keys.slice(i, i + 50).map((key) => client().putFile(key, path)));
    expect((await client().list("many/")).map((o) => o.key)).toEqual(keys);
  }, 120_000);

  it("reads no more than asked: an object one byte past the limit is refused, one at it is read", async () => {
    const path = join(dir, "ten.bin");
    writeFileSync(path, "0123456789");
    await client().putFile("ten", path);
    expect(Buffer.from(await client().get("ten", 10)).toString()).toBe("0123456789");
    await expect(client().get("ten", 9)).rejects.toThrow("object ten is 10 bytes, more than the 9 read");
  });

  it("deletes one key (a key with spaces too), leaves its neighbours, and takes a missing key as gone", async () => {
    const path = join(dir, "doomed.bin");
    writeFileSync(path, "x");
    const keys = ["gone/a", "gone/b b", "gone/c"];
    for (const key of keys) await client().putFile(key, path);
    await client().delete("gone/b b");
    expect((await client().list("gone/")).map((o) => o.key)).toEqual(["gone/a", "gone/c"]);
    await client().delete("gone/b b");
    const wrong = new S3Client(
      { endpoint: store.endpoint, region: "us-east-1", bucket: store.bucket },
      { accessKeyId: store.key.accessKeyId, secretAccessKey: "not-the-secret" },
    );
    await expect(wrong.delete("gone/a")).rejects.toThrow(
      /delete gone\/a: the store answered 403 SignatureDoesNotMatch/,
    );
    expect((await client().list("gone/")).map((o) => o.key)).toEqual(["gone/a", "gone/c"]);
  });

  it("is refused with another secret, and the error names the store's code, never the key", async () => {
    const wrong = new S3Client(
      { endpoint: store.endpoint, region: "us-east-1", bucket: store.bucket },
      { accessKeyId: store.key.accessKeyId, secretAccessKey: "not-the-secret" },
    );
    const error = await wrong.list("").catch((e: unknown) => e as Error);
    expect(String(error)).toMatch(/answered 403 SignatureDoesNotMatch/);
    expect(String(error)).not.toContain(store.key.accessKeyId);
    await expect(client().get("missing", 10)).rejects.toThrow(
      "get missing: the store answered 404 NoSuchKey",
    );
  });
});

describe("S3Client against a hostile store", () => {
  let server: Server;
  let endpoint: URL;
  let answer: (url: string, res: import("node:http").ServerResponse) => void = () => {};
  beforeAll(async () => {
    server = createServer((req, res) => answer(req.url ?? "", res));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    endpoint = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const client = (bounds = { timeoutMs: 5000, maxAnswerBytes: 4096, maxListPages: 3 }) =>
    new S3Client({ endpoint, region: "r", bucket: "b" }, { accessKeyId: "a", secretAccessKey: "s" }, bounds);

  it("never follows a redirect", async () => {
    answer = (_url, res) => res.writeHead(307, { location: "http://169.254.169.254/latest" }).end();
    await expect(client().get("k", 10)).rejects.toThrow("get k: the store answered 307");
  });

  it("stops reading an object past the limit when no Content-Length says its size", async () => {
    answer = (_url, res) => {
      res.writeHead(200, { "transfer-encoding": "chunked" });
      res.end(Buffer.alloc(64 * 1024, 1));
    };
    await expect(client().get("k", 1000)).rejects.toThrow("object k is more than the 1000 bytes read");
  });

  it("bounds a listing's answer and its pages", async () => {
    answer = (_url, res) =>
      res
        .writeHead(200)
        .end(
          `<ListBucketResult>${"<Contents><Key>k</Key><Size>1</Size></Contents>".repeat(200)}</ListBucketResult>`,
        );
    await expect(client().list("")).rejects.toThrow(/larger than 4096 bytes/);
    let pages = 0;
    answer = (_url, res) => {
      pages++;
      res
        .writeHead(200)
        .end(
          `<ListBucketResult><IsTruncated>true</IsTruncated><NextContinuationToken>t${pages}</NextContinuationToken><Contents><Key>k${pages}</Key><Size>1</Size></Contents></ListBucketResult>`,
        );
    };
    await expect(client().list("")).rejects.toThrow("listing : more than 3 pages");
    expect(pages).toBe(3);
  });

  it("takes an error code only as a plain word", async () => {
    answer = (_url, res) => res.writeHead(500).end("<Error><Code>x\u001b[2J rm -rf</Code></Error>");
    await expect(client().get("k", 10)).rejects.toThrow(/^get k: the store answered 500$/);
  });
});
