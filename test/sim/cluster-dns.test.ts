import { Resolver } from "node:dns/promises";
import { connect } from "node:net";
import dnsPacket from "dns-packet";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clusterSetZone } from "../../src/render/service-discovery/cluster-set.js";
import { answerBytes, type ClusterDns, startClusterDns } from "../../src/sim/dns/cluster-dns.js";
import { configMapZones } from "../../src/sim/dns/configmap-zones.js";
import { RCODE } from "../../src/sim/dns/zone-answers.js";
import { MAX_RECORDS, MAX_ZONE_BYTES, parseZone, type Zone } from "../../src/sim/dns/zone-file.js";
import { MemberApi } from "../../src/sim/member-api.js";
import { webSliceFrom } from "../helpers/service-fleet.js";

// The simulated members' cluster DNS: the clusterset.local zone gitfleet renders, served over UDP
// and TCP and asked with a real resolver (Node's c-ares), as CoreDNS's file plugin serves it.

const slice = (cluster: string, addresses: string[], weight: number) =>
  webSliceFrom(cluster, addresses, weight);

let zones: Zone[] = [];
let dns: ClusterDns;
let resolver: Resolver;

beforeAll(async () => {
  dns = await startClusterDns({ zones: () => zones });
  resolver = new Resolver({ timeout: 2000, tries: 1 });
  resolver.setServers([`127.0.0.1:${dns.port}`]);
});
afterAll(() => dns.close());

const serve = (text: string) => {
  zones = [parseZone(text, "clusterset.local")];
};

describe("the cluster DNS answers the rendered clusterset.local zone", () => {
  it("answers A per service and per cluster, SRV weighted by replicas, TXT, and NXDOMAIN for the rest", async () => {
    serve(clusterSetZone([slice("east", ["198.51.100.1"], 2), slice("west", ["198.51.100.2"], 4)], 5));
    expect((await resolver.resolve4("web.shop.svc.clusterset.local")).sort()).toEqual([
      "198.51.100.1",
      "198.51.100.2",
    ]);
    expect(await resolver.resolve4("east.web.shop.svc.clusterset.local")).toEqual(["198.51.100.1"]);
    // Case does not matter in DNS names.
    expect(await resolver.resolve4("WEST.Web.shop.svc.clusterset.local")).toEqual(["198.51.100.2"]);
    // The record's fields (Node 24's resolver also names the type on each).
    const srv = (await resolver.resolveSrv("_http._tcp.web.shop.svc.clusterset.local")).map(
      ({ name, port, priority, weight }) => ({ name, port, priority, weight }),
    );
    expect(srv.sort((a, b) => a.name.localeCompare(b.name))).toEqual([
      { name: "east.web.shop.svc.clusterset.local", port: 80, priority: 0, weight: 2 },
      { name: "west.web.shop.svc.clusterset.local", port: 80, priority: 0, weight: 4 },
    ]);
    expect(await resolver.resolveTxt("dns-version.clusterset.local")).toEqual([["1.1.0"]]);
    await expect(resolver.resolve4("api.shop.svc.clusterset.local")).rejects.toMatchObject({
      code: "ENOTFOUND",
    });
    // A name that exists without the type asked: NODATA, not NXDOMAIN.
    await expect(resolver.resolve6("web.shop.svc.clusterset.local")).rejects.toMatchObject({
      code: "ENODATA",
    });
    // An empty non-terminal exists too.
    await expect(resolver.resolve4("shop.svc.clusterset.local")).rejects.toMatchObject({ code: "ENODATA" });
    // A name in no zone it serves is refused.
    await expect(resolver.resolve4("example.com")).rejects.toMatchObject({ code: "EREFUSED" });
  });

  it("answers the change when the zone changes, at the next query", async () => {
    serve(clusterSetZone([slice("east", ["198.51.100.1"], 2), slice("west", ["198.51.100.2"], 4)], 5));
    expect((await resolver.resolve4("web.shop.svc.clusterset.local")).length).toBe(2);
    serve(clusterSetZone([slice("west", ["198.51.100.2"], 4)], 5));
    expect(await resolver.resolve4("web.shop.svc.clusterset.local")).toEqual(["198.51.100.2"]);
    await expect(resolver.resolve4("east.web.shop.svc.clusterset.local")).rejects.toMatchObject({
      code: "ENOTFOUND",
    });
  });

  it("truncates an answer too large for a datagram, and the resolver gets all of it over TCP", async () => {
    const many = Array.from({ length: 60 }, (_, i) => `198.51.${Math.floor(i / 250)}.${(i % 250) + 1}`);
    serve(clusterSetZone([slice("east", many, 1)], 5));
    const query = dnsPacket.encode({
      type: "query",
      id: 7,
      flags: dnsPacket.RECURSION_DESIRED,
      questions: [{ type: "A", name: "web.shop.svc.clusterset.local" }],
    });
    const udp = dnsPacket.decode(answerBytes(query, () => zones, "udp") as Buffer);
    expect(udp.flag_tc).toBe(true);
    expect(udp.answers).toEqual([]);
    expect((await resolver.resolve4("web.shop.svc.clusterset.local")).sort()).toEqual([...many].sort());
    // Asked over TCP directly, with two queries on one connection.
    const answers = await overTcp(dns.port, [query, query]);
    expect(answers.map((a) => a.answers?.length)).toEqual([60, 60]);
    expect(answers.map((a) => a.id)).toEqual([7, 7]);
  });

  it("answers FORMERR for a query it cannot read and never throws, whatever bytes come", () => {
    serve(clusterSetZone([slice("east", ["198.51.100.1"], 2)], 5));
    const broken = Buffer.from([0x12, 0x34, 0x01, 0x00, 0x00, 0x05, 0, 0, 0, 0, 0, 0, 0xff]);
    const formerr = answerBytes(broken, () => zones, "udp") as Buffer;
    expect(dnsPacket.decode(formerr)).toMatchObject({ id: 0x1234, type: "response" });
    expect(rcodeOf(formerr)).toBe(RCODE.FORMERR);
    expect(answerBytes(Buffer.from([1, 2, 3]), () => zones, "udp")).toBeUndefined();
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 0, maxLength: 600 }), (bytes) => {
        const answer = answerBytes(Buffer.from(bytes), () => zones, "udp");
        if (answer) expect(answer.length).toBeLessThanOrEqual(4096);
      }),
      { numRuns: 2000 },
    );
  });

  it("refuses what is not a standard query, and a question count other than one", () => {
    const notify = dnsPacket.encode({ type: "query", id: 9, flags: 4 << 11, questions: [] });
    expect(rcodeOf(answerBytes(notify, () => zones, "udp"))).toBe(RCODE.NOTIMP);
    const two = dnsPacket.encode({
      type: "query",
      id: 9,
      questions: [
        { type: "A", name: "web.shop.svc.clusterset.local" },
        { type: "A", name: "east.web.shop.svc.clusterset.local" },
      ],
    });
    expect(rcodeOf(answerBytes(two, () => zones, "udp"))).toBe(RCODE.FORMERR);
  });
});

describe("a member's zones, from its ConfigMaps", () => {
  it("serves each db.<zone> key, follows a change at the next query, and leaves out a zone that does not parse", async () => {
    const api = new MemberApi("consumer", {});
    const put = (data: Record<string, string>, verb: "POST" | "PUT") =>
      api.handle({
        method: verb,
        path: `/api/v1/namespaces/kube-system/configmaps${verb === "PUT" ? "/gitfleet-clusterset-zone" : ""}`,
        query: new URLSearchParams(),
        contentType: "application/json",
        body: {
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { name: "gitfleet-clusterset-zone", namespace: "kube-system" },
          data,
        },
      });
    const zones = configMapZones(api, [{ namespace: "kube-system", name: "gitfleet-clusterset-zone" }]);
    expect(zones.zones()).toEqual([]);
    const two = clusterSetZone([slice("east", ["198.51.100.1"], 2), slice("west", ["198.51.100.2"], 4)], 5);
    expect(put({ "db.clusterset.local": two, "notes.txt": "not a zone" }, "POST").status).toBe(201);
    const served = await startClusterDns({ zones: zones.zones });
    try {
      const ask = new Resolver({ timeout: 2000, tries: 1 });
      ask.setServers([`127.0.0.1:${served.port}`]);
      expect((await ask.resolve4("web.shop.svc.clusterset.local")).sort()).toEqual([
        "198.51.100.1",
        "198.51.100.2",
      ]);
      put({ "db.clusterset.local": clusterSetZone([slice("west", ["198.51.100.2"], 4)], 5) }, "PUT");
      expect(await ask.resolve4("web.shop.svc.clusterset.local")).toEqual(["198.51.100.2"]);
      // A zone that does not parse is not served (as CoreDNS drops a zone it cannot load), and why is kept.
      put({ "db.clusterset.local": "web 5 IN A 192.0.2.1\n" }, "PUT");
      await expect(ask.resolve4("web.shop.svc.clusterset.local")).rejects.toMatchObject({ code: "EREFUSED" });
      expect(zones.errors.get("kube-system/gitfleet-clusterset-zone#db.clusterset.local")).toBe(
        "kube-system/gitfleet-clusterset-zone#db.clusterset.local: the zone clusterset.local has no SOA record",
      );
    } finally {
      await served.close();
    }
  });
});

describe("zone files", () => {
  it.each([
    ["$ORIGIN clusterset.local.\n@ 5 IN NS ns.\n", "zone: the zone clusterset.local has no SOA record"],
    ["@ 5 IN SOA a. b. 1 2 3 4 5\nweb 5 IN A 300.1.1.1\n", 'zone:2: "300.1.1.1" is not an IPv4 address'],
    ["@ 5 IN SOA a. b. 1 2 3 4 5\nweb 5 IN MX 10 mail.\n", 'zone:2: record type "MX" is not supported'],
    ["@ 5 IN SOA a. b. 1 2 3 4 5\nweb IN A 192.0.2.1\n", "zone:2: no TTL and no $TTL before it"],
    ["@ 5 IN SOA a. b. 1 2 3 4 5\nweb.example.com. 5 IN A 192.0.2.1\n", "zone: web.example.com is outside"],
    ["@ 5 IN SOA a. b. (\n 1 2 3 4 5 )\n", "zone:1: records over several lines are not supported"],
    ['@ 5 IN SOA a. b. 1 2 3 4 5\nx 5 IN TXT "open\n', "zone:2: a quoted string is not closed"],
    [
      "@ 5 IN SOA a. b. 1 2 3 4 5\n_x._tcp 5 IN SRV 0 70000 80 a.\n",
      'zone:2: "70000" is not a number 0–65535',
    ],
    [
      "@ 5 IN SOA a. b. 1 2 3 4 5\nbad_name!x 5 IN A 192.0.2.1\n",
      'zone:2: "bad_name!x" is not a domain name',
    ],
    ["@ 5 IN SOA a. b. 1 2 3 4 5\n$INCLUDE /etc/passwd\n", "zone:2: $INCLUDE is not supported"],
  ])("refuses %j: %s", (text, message) => {
    expect(() => parseZone(text, "clusterset.local")).toThrow(message);
  });

  it("reads $TTL, omitted class and TTL-before-class, relative and absolute names", () => {
    const zone = parseZone(
      "$TTL 60\n@ IN SOA ns hostmaster 1 2 3 4 5\nweb A 192.0.2.1 ; a comment\nAPI.clusterset.local. 7 IN AAAA 2001:db8::1\nalias IN 9 CNAME web\n",
      "clusterset.local",
    );
    expect(zone.records.map((r) => `${r.name} ${r.ttl} ${r.type}`)).toEqual([
      "clusterset.local 60 SOA",
      "web.clusterset.local 60 A",
      "api.clusterset.local 7 AAAA",
      "alias.clusterset.local 9 CNAME",
    ]);
    expect(zone.soa).toMatchObject({ mname: "ns.clusterset.local", rname: "hostmaster.clusterset.local" });
  });

  it("takes exactly MAX_RECORDS records and MAX_ZONE_BYTES bytes, and refuses one more of either", () => {
    const head = "@ 5 IN SOA a. b. 1 2 3 4 5\n";
    const line = "w 5 IN A 192.0.2.1\n";
    const records = (n: number) => head + line.repeat(n - 1);
    expect(parseZone(records(MAX_RECORDS), "clusterset.local").records.length).toBe(MAX_RECORDS);
    expect(() => parseZone(records(MAX_RECORDS + 1), "clusterset.local")).toThrow(
      `zone:${MAX_RECORDS + 1}: more than ${MAX_RECORDS} records`,
    );
    const padded = (bytes: number) => head + ";".repeat(bytes - head.length);
    expect(parseZone(padded(MAX_ZONE_BYTES), "clusterset.local").records.length).toBe(1);
    expect(() => parseZone(padded(MAX_ZONE_BYTES + 1), "clusterset.local")).toThrow(
      `zone: larger than ${MAX_ZONE_BYTES} bytes`,
    );
  });
});

// The answer's RCODE, from its header.
function rcodeOf(answer: Buffer | undefined): number {
  if (!answer) throw new Error("no answer");
  return answer.readUInt16BE(2) & 0xf;
}

async function overTcp(port: number, queries: Buffer[]): Promise<dnsPacket.DecodedPacket[]> {
  const socket = connect(port, "127.0.0.1");
  const framed = queries.map((q) => {
    const b = Buffer.alloc(q.length + 2);
    b.writeUInt16BE(q.length, 0);
    q.copy(b, 2);
    return b;
  });
  socket.write(Buffer.concat(framed));
  let data = Buffer.alloc(0);
  const answers: dnsPacket.DecodedPacket[] = [];
  await new Promise<void>((resolve, reject) => {
    socket.on("error", reject);
    socket.on("data", (chunk: Buffer) => {
      data = Buffer.concat([data, chunk]);
      while (data.length >= 2 && data.length >= 2 + data.readUInt16BE(0)) {
        const length = data.readUInt16BE(0);
        answers.push(dnsPacket.decode(data.subarray(2, 2 + length)));
        data = data.subarray(2 + length);
      }
      if (answers.length === queries.length) resolve();
    });
  });
  socket.destroy();
  return answers;
}
