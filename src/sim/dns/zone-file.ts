// A DNS zone in RFC 1035 master-file form, read into records: the subset gitfleet renders (the
// clusterset.local zone of render/service-discovery/cluster-set.ts) and that a person writes by
// hand — `$ORIGIN`, `$TTL`, `@`, relative and absolute names, optional TTL and class, comments, and
// the record types A, AAAA, CNAME, NS, SOA, SRV and TXT on one line each. The text is untrusted (a
// ConfigMap in a member): at most MAX_ZONE_BYTES and MAX_RECORDS, and a line it cannot read is an
// error naming the line.

export const MAX_ZONE_BYTES = 1024 * 1024;
export const MAX_RECORDS = 50_000;

export type RecordData =
  | { readonly type: "A" | "AAAA"; readonly address: string }
  | { readonly type: "CNAME" | "NS"; readonly target: string }
  | { readonly type: "TXT"; readonly text: readonly string[] }
  | {
      readonly type: "SRV";
      readonly priority: number;
      readonly weight: number;
      readonly port: number;
      readonly target: string;
    }
  | {
      readonly type: "SOA";
      readonly mname: string;
      readonly rname: string;
      readonly serial: number;
      readonly refresh: number;
      readonly retry: number;
      readonly expire: number;
      readonly minimum: number;
    };

export type ZoneRecord = RecordData & {
  /** Lower case, without the final dot: "web.shop.svc.clusterset.local". */
  readonly name: string;
  readonly ttl: number;
};

export interface Zone {
  /** Lower case, without the final dot: "clusterset.local". */
  readonly origin: string;
  readonly records: readonly ZoneRecord[];
  readonly soa: ZoneRecord & { readonly type: "SOA" };
}

export class ZoneFileError extends Error {}

const TYPES = new Set(["A", "AAAA", "CNAME", "NS", "SOA", "SRV", "TXT"]);
const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;
const IPV6 = /^[0-9a-f:.]+$/i;
const LABEL = /^(\*|[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)$/i;

/** The zone the text describes, for `origin` unless an $ORIGIN line says otherwise. Throws ZoneFileError. */
export function parseZone(text: string, origin: string, source = "zone"): Zone {
  if (Buffer.byteLength(text) > MAX_ZONE_BYTES)
    throw new ZoneFileError(`${source}: larger than ${MAX_ZONE_BYTES} bytes`);
  const top = absolute(origin.endsWith(".") ? origin : `${origin}.`, "", `${source}: origin`);
  const state: { origin: string; ttl?: number } = { origin: top };
  const records: ZoneRecord[] = [];
  for (const [index, raw] of text.split("\n").entries()) {
    const at = `${source}:${index + 1}`;
    const fields = tokens(raw, at);
    if (fields.length === 0 || directive(fields, state, at)) continue;
    if (/^\s/.test(raw)) throw new ZoneFileError(`${at}: a record must name its owner`);
    records.push(record(fields, state.origin, state.ttl, at));
    if (records.length > MAX_RECORDS) throw new ZoneFileError(`${at}: more than ${MAX_RECORDS} records`);
  }
  const outside = records.find((r) => r.name !== top && !r.name.endsWith(`.${top}`));
  if (outside) throw new ZoneFileError(`${source}: ${outside.name} is outside the zone ${top}`);
  const soa = records.find((r): r is ZoneRecord & { type: "SOA" } => r.type === "SOA" && r.name === top);
  if (!soa) throw new ZoneFileError(`${source}: the zone ${top} has no SOA record`);
  return { origin: top, records, soa };
}

// $ORIGIN and $TTL change what the lines below mean; any other $ line is refused. True when it was one.
function directive(fields: string[], state: { origin: string; ttl?: number }, at: string): boolean {
  const first = (fields[0] as string).toUpperCase();
  if (first === "$ORIGIN") state.origin = absolute(one(fields, at), state.origin, at);
  else if (first === "$TTL") state.ttl = seconds(one(fields, at), at);
  else if (first.startsWith("$")) throw new ZoneFileError(`${at}: ${fields[0]} is not supported`);
  else return false;
  return true;
}

function record(fields: string[], origin: string, defaultTtl: number | undefined, at: string): ZoneRecord {
  const name = absolute(fields[0] as string, origin, at);
  let rest = fields.slice(1);
  let ttl = defaultTtl;
  // TTL and class in either order, both optional.
  for (let i = 0; i < 2 && rest.length > 0; i++) {
    const field = rest[0] as string;
    if (/^\d+$/.test(field)) ttl = seconds(field, at);
    else if (field.toUpperCase() !== "IN") break;
    rest = rest.slice(1);
  }
  const type = (rest[0] ?? "").toUpperCase();
  if (!TYPES.has(type)) throw new ZoneFileError(`${at}: record type "${rest[0] ?? ""}" is not supported`);
  if (ttl === undefined) throw new ZoneFileError(`${at}: no TTL and no $TTL before it`);
  return { name, ttl, ...data(type, rest.slice(1), origin, at) };
}

function data(type: string, args: string[], origin: string, at: string): RecordData {
  const count = (n: number) => {
    if (args.length !== n) throw new ZoneFileError(`${at}: ${type} takes ${n} fields, not ${args.length}`);
  };
  switch (type) {
    case "A":
      count(1);
      if (!IPV4.test(args[0] as string))
        throw new ZoneFileError(`${at}: "${args[0]}" is not an IPv4 address`);
      return { type, address: args[0] as string };
    case "AAAA":
      count(1);
      if (!IPV6.test(args[0] as string) || !(args[0] as string).includes(":"))
        throw new ZoneFileError(`${at}: "${args[0]}" is not an IPv6 address`);
      return { type, address: args[0] as string };
    case "CNAME":
    case "NS":
      count(1);
      return { type, target: absolute(args[0] as string, origin, at) };
    case "TXT":
      if (args.length === 0) throw new ZoneFileError(`${at}: TXT takes at least one string`);
      return { type, text: args.map((a) => unquote(a)) };
    case "SRV": {
      count(4);
      const [priority, weight, port] = args.slice(0, 3).map((a) => uint16(a, at)) as [number, number, number];
      return { type, priority, weight, port, target: absolute(args[3] as string, origin, at) };
    }
    default: {
      count(7);
      const [serial, refresh, retry, expire, minimum] = args.slice(2).map((a) => uint32(a, at)) as [
        number,
        number,
        number,
        number,
        number,
      ];
      return {
        type: "SOA",
        mname: absolute(args[0] as string, origin, at),
        rname: absolute(args[1] as string, origin, at),
        serial,
        refresh,
        retry,
        expire,
        minimum,
      };
    }
  }
}

// A line's fields: blanks separate them, `"…"` keeps blanks and `\"` inside, `;` starts a comment.
function tokens(line: string, at: string): string[] {
  const out: string[] = [];
  for (const [field] of line.matchAll(FIELD)) {
    if (field.startsWith(";")) break;
    if (field === "(" || field === ")")
      throw new ZoneFileError(`${at}: records over several lines are not supported`);
    if (field === '"') throw new ZoneFileError(`${at}: a quoted string is not closed`);
    out.push(field);
  }
  return out;
}

// A quoted string, a bare field, a comment, a parenthesis, or a quote that opens and never closes.
const FIELD = /"(?:[^"\\]|\\.)*"|[^\s;"()]+|;.*|[()]|"/g;

function unquote(field: string): string {
  const inner = field.startsWith('"') ? field.slice(1, -1) : field;
  return inner.replace(/\\(.)/g, "$1");
}

function one(fields: string[], at: string): string {
  if (fields.length !== 2) throw new ZoneFileError(`${at}: ${fields[0]} takes one value`);
  return fields[1] as string;
}

// A name made absolute against the origin, lower case, without its final dot.
function absolute(name: string, origin: string, at: string): string {
  const full =
    name === "@"
      ? origin
      : name.endsWith(".")
        ? name.slice(0, -1)
        : origin === ""
          ? name
          : `${name}.${origin}`;
  const lower = full.toLowerCase();
  if (lower !== "" && (lower.length > 253 || !lower.split(".").every((label) => LABEL.test(label))))
    throw new ZoneFileError(`${at}: "${name}" is not a domain name`);
  return lower;
}

function seconds(value: string, at: string): number {
  return uint32(value, at);
}

function uint16(value: string, at: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n > 65535) throw new ZoneFileError(`${at}: "${value}" is not a number 0–65535`);
  return n;
}

function uint32(value: string, at: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n > 2 ** 32 - 1)
    throw new ZoneFileError(`${at}: "${value}" is not a number 0–4294967295`);
  return n;
}
