import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  decodeSnapshot,
  type Expected,
  snapshotKeyOf,
} from "../../src/controller/snapshot/snapshot-codec.js";
import { encodeSnapshotBytes } from "../helpers/snapshot-bytes.js";

const header = { code: "c0ffee", statusBranch: "gitfleet/status", statusTip: "a".repeat(40) };
const expected: Expected = { code: "c0ffee", statusBranch: "gitfleet/status" };
const key = snapshotKeyOf(new TextEncoder().encode("-----BEGIN OPENSSH PRIVATE KEY----- test only"));
const parts = [
  { files: new Map([["rendered/a.yaml", "kind: ConfigMap\n"]]) },
  new Uint8Array([1, 2, 3]),
  { nested: { list: [1, "two", null, { three: true }] } },
];

describe("snapshot bytes", () => {
  it.each([
    ["with a key", key],
    ["without a key", undefined],
  ])("give back what was written, %s", async (_, withKey) => {
    const decoded = decodeSnapshot(await encodeSnapshotBytes(header, parts, withKey), expected, withKey);
    expect(decoded).toEqual({ ok: true, header: expect.objectContaining(header), parts });
    const none = decodeSnapshot(await encodeSnapshotBytes(header, [], withKey), expected, withKey);
    expect(none).toEqual({ ok: true, header: expect.objectContaining(header), parts: [] });
  });

  const other = snapshotKeyOf(new TextEncoder().encode("another key"));
  it.each<[string, Uint8Array | undefined, Uint8Array | undefined, Expected, RegExp]>([
    ["another build", key, key, { ...expected, code: "decaf" }, /another build/],
    [
      "another status branch",
      key,
      key,
      { ...expected, statusBranch: "other" },
      /status branch gitfleet\/status, not other/,
    ],
    ["another key", key, other, expected, /HMAC does not match/],
    ["a key where it was written without", undefined, key, expected, /carries no HMAC/],
    ["no key where it was written with one", key, undefined, expected, /carries an HMAC/],
  ])("are refused when read for %s", async (_, writtenWith, readWith, wanted, reason) => {
    const decoded = decodeSnapshot(await encodeSnapshotBytes(header, parts, writtenWith), wanted, readWith);
    expect(decoded).toEqual({ ok: false, reason: expect.stringMatching(reason) });
  });

  it("are refused when cut anywhere, or with anything appended", async () => {
    const bytes = await encodeSnapshotBytes(header, parts, key);
    // Every prefix, the empty one included, and the whole with one byte more.
    for (let length = 0; length < bytes.length; length++)
      expect(decodeSnapshot(bytes.subarray(0, length), expected, key).ok, `${length} bytes`).toBe(false);
    expect(decodeSnapshot(Buffer.concat([bytes, Buffer.from([0])]), expected, key).ok).toBe(false);
  });

  it.each([
    ["with a key", key],
    ["without a key", undefined],
  ])("are refused when any byte changed, %s", async (_, withKey) => {
    const bytes = await encodeSnapshotBytes(header, parts, withKey);
    fc.assert(
      fc.property(fc.nat({ max: bytes.length - 1 }), fc.integer({ min: 1, max: 255 }), (at, flip) => {
        const changed = Buffer.from(bytes);
        changed[at] = (changed[at] as number) ^ flip;
        expect(decodeSnapshot(changed, expected, withKey).ok).toBe(false);
      }),
      { numRuns: 300 },
    );
  });

  it.each([
    ["not a snapshot", Buffer.from("hello\n")],
    ["a header that is not JSON", Buffer.from("gitfleet-snapshot\n{nope\n")],
    ["a header of the wrong shape", Buffer.from('gitfleet-snapshot\n{"format":1}\n')],
    ["a header without its end", Buffer.from(`gitfleet-snapshot\n{"a":"${"x".repeat(5000)}"}`)],
    [
      "another format",
      Buffer.from(
        `gitfleet-snapshot\n${JSON.stringify({ ...header, format: 1, tag: "sha256" })}\n${"0".repeat(32)}`,
      ),
    ],
  ])("are refused for %s", (_, bytes) => {
    expect(decodeSnapshot(bytes, expected).ok).toBe(false);
  });

  it("derive their key from the signing key without holding it", () => {
    const secret = new TextEncoder().encode("signing key bytes");
    const derived = snapshotKeyOf(secret);
    expect(derived).toHaveLength(32);
    expect(Buffer.from(derived).includes(Buffer.from(secret))).toBe(false);
    expect(snapshotKeyOf(secret)).toEqual(derived);
    expect(snapshotKeyOf(new TextEncoder().encode("signing key bytez"))).not.toEqual(derived);
  });
});
