import type { Answer, DecodedPacket, Packet, Question } from "dns-packet";
import type { Zone, ZoneRecord } from "./zone-file.js";

// What an authoritative server answers from its zones, as CoreDNS's file plugin does: the records
// of the name and type asked for (a CNAME for any type, followed inside the zone), NODATA or
// NXDOMAIN with the zone's SOA, the addresses of SRV targets as additional records, REFUSED for a
// name in no zone. A pure function of the query and the zones.

export const RCODE = { NOERROR: 0, FORMERR: 1, SERVFAIL: 2, NXDOMAIN: 3, NOTIMP: 4, REFUSED: 5 } as const;

const AUTHORITATIVE = 0x0400;
const RECURSION_DESIRED = 0x0100;
const OPCODE_QUERY = 0;
/** How many CNAMEs are followed inside a zone before the chain is answered as it is. */
const MAX_CHAIN = 8;

/** The answer to one decoded query. */
export function answerQuery(query: DecodedPacket, zones: readonly Zone[]): Packet {
  const opcode = ((query.flags ?? 0) >> 11) & 0xf;
  const questions = query.questions ?? [];
  if (opcode !== OPCODE_QUERY) return reply(query, RCODE.NOTIMP, []);
  if (questions.length !== 1) return reply(query, RCODE.FORMERR, questions);
  const question = questions[0] as Question;
  const name = question.name.toLowerCase().replace(/\.$/, "");
  const zone = zoneOf(zones, name);
  if (!zone || (question.class !== undefined && question.class !== "IN" && question.class !== "ANY"))
    return reply(query, RCODE.REFUSED, questions);
  const answers = follow(zone, name, question.type);
  const exists =
    answers.length > 0 || zone.records.some((r) => r.name === name || r.name.endsWith(`.${name}`));
  const rcode = exists ? RCODE.NOERROR : RCODE.NXDOMAIN;
  const authority = answers.length === 0 ? [zone.soa] : [];
  const additional = answers.flatMap((r) =>
    r.type === "SRV"
      ? zone.records.filter((a) => a.name === r.target && (a.type === "A" || a.type === "AAAA"))
      : [],
  );
  return {
    ...reply(query, rcode, questions, AUTHORITATIVE),
    answers: answers.map(toAnswer),
    authorities: authority.map(toAnswer),
    additionals: [...new Set(additional)].map(toAnswer),
  };
}

// The records of the name and type, or the CNAME chain from the name to them inside the zone.
function follow(zone: Zone, name: string, type: string): ZoneRecord[] {
  const answers: ZoneRecord[] = [];
  let current = name;
  for (let hop = 0; hop <= MAX_CHAIN; hop++) {
    const owned = zone.records.filter((r) => r.name === current);
    const matching = owned.filter((r) => r.type === type || type === "ANY");
    const alias = owned.find((r) => r.type === "CNAME");
    if (matching.length > 0 || !alias || type === "CNAME") return [...answers, ...matching];
    answers.push(alias);
    if (alias.type !== "CNAME" || !inZone(zone, alias.target)) break;
    current = alias.target;
  }
  return answers;
}

/** A reply with an rcode and nothing else, echoing the query's id, opcode and RD bit. */
export function reply(query: Packet, rcode: number, questions: Question[], flags = 0): Packet {
  const asked = query.flags ?? 0;
  return {
    type: "response",
    id: query.id ?? 0,
    flags: flags | (asked & RECURSION_DESIRED) | (asked & 0x7800) | rcode,
    questions,
    answers: [],
    authorities: [],
    additionals: [],
  };
}

// The most specific zone the name is in.
function zoneOf(zones: readonly Zone[], name: string): Zone | undefined {
  return zones.filter((zone) => inZone(zone, name)).sort((a, b) => b.origin.length - a.origin.length)[0];
}

function inZone(zone: Zone, name: string): boolean {
  return name === zone.origin || name.endsWith(`.${zone.origin}`);
}

function toAnswer(record: ZoneRecord): Answer {
  const base = { name: record.name, ttl: record.ttl, class: "IN" as const };
  switch (record.type) {
    case "A":
    case "AAAA":
      return { ...base, type: record.type, data: record.address };
    case "CNAME":
    case "NS":
      return { ...base, type: record.type, data: record.target };
    case "TXT":
      return { ...base, type: "TXT", data: [...record.text] };
    case "SRV":
      return {
        ...base,
        type: "SRV",
        data: { priority: record.priority, weight: record.weight, port: record.port, target: record.target },
      };
    case "SOA":
      return {
        ...base,
        type: "SOA",
        data: {
          mname: record.mname,
          rname: record.rname,
          serial: record.serial,
          refresh: record.refresh,
          retry: record.retry,
          expire: record.expire,
          minimum: record.minimum,
        },
      };
  }
}
