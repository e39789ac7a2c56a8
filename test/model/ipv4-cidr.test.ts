import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { cidrsOverlap, parseIpv4Cidr } from "../../src/model/ipv4-cidr.js";

describe("IPv4 ranges", () => {
  it.each([
    ["10.244.0.0/16", { network: 0x0af40000, bits: 16, hostBitsSet: false }],
    ["10.244.0.1/16", { network: 0x0af40000, bits: 16, hostBitsSet: true }],
    ["0.0.0.0/0", { network: 0, bits: 0, hostBitsSet: false }],
    ["255.255.255.255/32", { network: 0xffffffff, bits: 32, hostBitsSet: false }],
    ["256.0.0.0/8", undefined],
    ["10.0.0.0/33", undefined],
    ["10.0.0/8", undefined],
    ["10.0.0.0", undefined],
    [" 10.0.0.0/8", undefined],
  ])("reads %s", (text, expected) => {
    expect(parseIpv4Cidr(text)).toEqual(expected);
  });

  it.each([
    ["10.88.0.0/13", "10.96.0.0/12", false],
    ["10.96.0.0/11", "10.96.0.0/12", true],
    ["10.111.255.0/24", "10.96.0.0/12", true],
    ["10.112.0.0/12", "10.96.0.0/12", false],
    ["0.0.0.0/0", "192.168.1.0/24", true],
  ])("%s and %s overlap: %s", (a, b, overlap) => {
    const [x, y] = [parseIpv4Cidr(a), parseIpv4Cidr(b)];
    if (!x || !y) throw new Error("unparsed");
    expect(cidrsOverlap(x, y)).toBe(overlap);
    expect(cidrsOverlap(y, x)).toBe(overlap);
  });

  it("overlap means an address in both, for any two ranges", () => {
    const range = fc
      .tuple(fc.integer({ min: 0, max: 0xffffffff }), fc.integer({ min: 0, max: 32 }))
      .map(([address, bits]) => {
        const text = [address >>> 24, (address >>> 16) & 255, (address >>> 8) & 255, address & 255].join(".");
        return parseIpv4Cidr(`${text}/${bits}`) as NonNullable<ReturnType<typeof parseIpv4Cidr>>;
      });
    fc.assert(
      fc.property(range, range, (a, b) => {
        const last = (c: typeof a) => c.network + 2 ** (32 - c.bits) - 1;
        // Two ranges share an address exactly when the later start is within the earlier range.
        const start = Math.max(a.network, b.network);
        const shared = start <= Math.min(last(a), last(b));
        expect(cidrsOverlap(a, b)).toBe(shared);
        expect(a.network % 2 ** (32 - a.bits)).toBe(0);
      }),
      { numRuns: 500 },
    );
  });
});
