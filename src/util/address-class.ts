import { isIPv4, isIPv6 } from "node:net";

/**
 * What an IP address reaches: the public internet, or something a request chosen by a fleet repo
 * must not reach unless the operator named it — this host (loopback), the local link (cloud metadata
 * at 169.254.169.254), private and carrier-grade NAT networks (a cluster's pods and Services),
 * multicast, or ranges reserved for documentation, benchmarks and future use.
 */
export type AddressClass =
  | "public"
  | "loopback"
  | "link-local"
  | "private"
  | "unspecified"
  | "multicast"
  | "reserved";

type Range = readonly [base: number, bits: number, kind: Exclude<AddressClass, "public">];

// IPv4 special-purpose ranges (IANA's registry, RFC 6890 and its updates).
const IPV4: readonly Range[] = [
  [v4("0.0.0.0"), 8, "unspecified"],
  [v4("10.0.0.0"), 8, "private"],
  [v4("100.64.0.0"), 10, "private"],
  [v4("127.0.0.0"), 8, "loopback"],
  [v4("169.254.0.0"), 16, "link-local"],
  [v4("172.16.0.0"), 12, "private"],
  [v4("192.0.0.0"), 24, "reserved"],
  [v4("192.0.2.0"), 24, "reserved"],
  [v4("192.88.99.0"), 24, "reserved"],
  [v4("192.168.0.0"), 16, "private"],
  [v4("198.18.0.0"), 15, "reserved"],
  [v4("198.51.100.0"), 24, "reserved"],
  [v4("203.0.113.0"), 24, "reserved"],
  [v4("224.0.0.0"), 4, "multicast"],
  [v4("240.0.0.0"), 4, "reserved"],
];

/** The class of an IPv4 or IPv6 address; anything that is not one is "reserved". */
export function classifyAddress(address: string): AddressClass {
  const bare = address.replace(/^\[|\]$/g, "").replace(/%.*$/, "");
  if (isIPv4(bare)) return classifyV4(v4(bare));
  if (isIPv6(bare)) return classifyV6(hextets(bare));
  return "reserved";
}

function classifyV4(value: number): AddressClass {
  for (const [base, bits, kind] of IPV4) if (inRange(value, base, bits)) return kind;
  return "public";
}

// IPv6 special-purpose ranges: [prefix as eight groups, prefix length, class].
const IPV6: readonly [readonly number[], number, Exclude<AddressClass, "public">][] = [
  [[0, 0, 0, 0, 0, 0, 0, 0], 128, "unspecified"],
  [[0, 0, 0, 0, 0, 0, 0, 1], 128, "loopback"],
  [[0, 0, 0, 0, 0, 0, 0, 0], 96, "reserved"],
  [[0x64, 0xff9b, 1], 48, "private"],
  [[0x100, 0, 0, 0], 64, "reserved"],
  [[0x2001, 0xdb8], 32, "reserved"],
  [[0x2001, 0], 23, "reserved"],
  [[0xfc00], 7, "private"],
  [[0xfe80], 10, "link-local"],
  [[0xfec0], 10, "private"],
  [[0xff00], 8, "multicast"],
];

// IPv6: the IPv4 address inside the forms that carry one (mapped, NAT64, 6to4) — what a connection
// to them reaches — then its own special ranges; only global unicast (2000::/3) is public.
function classifyV6(h: readonly number[]): AddressClass {
  const inner = embeddedV4(h);
  if (inner !== undefined) return classifyV4(inner);
  for (const [prefix, bits, kind] of IPV6) if (inPrefix(h, prefix, bits)) return kind;
  return ((h[0] ?? 0) & 0xe000) === 0x2000 ? "public" : "reserved";
}

function embeddedV4(h: readonly number[]): number | undefined {
  const v4At = (i: number) => (h[i] ?? 0) * 65536 + (h[i + 1] ?? 0);
  if (inPrefix(h, [0, 0, 0, 0, 0, 0xffff], 96)) return v4At(6);
  if (inPrefix(h, [0x64, 0xff9b, 0, 0, 0, 0], 96)) return v4At(6);
  if (inPrefix(h, [0x2002], 16)) return v4At(1);
  return undefined;
}

function inPrefix(h: readonly number[], prefix: readonly number[], bits: number): boolean {
  for (let i = 0; i < 8 && bits > 0; i++, bits -= 16) {
    const take = Math.min(16, bits);
    const mask = (0xffff << (16 - take)) & 0xffff;
    if (((h[i] ?? 0) & mask) !== ((prefix[i] ?? 0) & mask)) return false;
  }
  return true;
}

function inRange(value: number, base: number, bits: number): boolean {
  const size = 2 ** (32 - bits);
  return value >= base && value < base + size;
}

function v4(address: string): number {
  return address.split(".").reduce((n, octet) => n * 256 + Number(octet), 0);
}

// The eight 16-bit groups of an IPv6 address (a dotted IPv4 tail becomes the last two).
function hextets(address: string): number[] {
  let text = address.toLowerCase();
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const value = v4(dotted[1] as string);
    text = `${text.slice(0, dotted.index)}${Math.floor(value / 65536).toString(16)}:${(value % 65536).toString(16)}`;
  }
  const [head = "", tail] = text.split("::");
  const left = head === "" ? [] : head.split(":");
  const right = tail === undefined || tail === "" ? [] : tail.split(":");
  const fill = tail === undefined ? [] : Array(8 - left.length - right.length).fill("0");
  return [...left, ...fill, ...right].map((part) => Number.parseInt(part, 16));
}
