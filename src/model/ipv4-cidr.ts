/** An IPv4 range: its first address (as a 32-bit number) and its prefix length. */
export interface Ipv4Cidr {
  readonly network: number;
  readonly bits: number;
  /** Whether the text named an address inside the range rather than its first one (10.244.0.1/16). */
  readonly hostBitsSet: boolean;
}

/** Parses "10.244.0.0/16"; undefined when it is not an IPv4 range. */
export function parseIpv4Cidr(text: string): Ipv4Cidr | undefined {
  const match = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/.exec(text);
  if (!match) return undefined;
  const octets = match.slice(1, 5).map(Number);
  const bits = Number(match[5]);
  if (octets.some((o) => o > 255) || bits > 32) return undefined;
  const address = octets.reduce((value, octet) => value * 256 + octet, 0);
  const size = 2 ** (32 - bits);
  const network = address - (address % size);
  return { network, bits, hostBitsSet: network !== address };
}

/** Whether two ranges share an address. */
export function cidrsOverlap(a: Ipv4Cidr, b: Ipv4Cidr): boolean {
  const end = (c: Ipv4Cidr) => c.network + 2 ** (32 - c.bits);
  return a.network < end(b) && b.network < end(a);
}
