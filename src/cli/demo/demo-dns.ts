import type { FleetModel } from "../../model/types.js";
import type { WorkloadDecision } from "../../render/render-result.js";
import { type ClusterDns, startClusterDns } from "../../sim/dns/cluster-dns.js";
import { configMapZones } from "../../sim/dns/configmap-zones.js";
import type { SimulatedMember } from "../../sim/member-server.js";

// The demo's DNS server: one member's cluster DNS serving the clusterset.local zone gitfleet renders
// into it (fleet.yaml serviceDiscovery, endpoints mode), as its CoreDNS would with the file plugin.
// The member is one that runs none of web's replicas: a consumer, whose answer changes when a
// producing member goes down.

export interface DemoDns {
  readonly member: string;
  readonly port: number;
  /** What to type to watch it: a `dig` line. */
  readonly hint: string;
  close(): Promise<void>;
}

/** The DNS server, or undefined when the fleet's service discovery renders no zone. */
export async function startDemoDns(
  model: FleetModel,
  members: readonly SimulatedMember[],
  decisions: readonly WorkloadDecision[],
): Promise<DemoDns | undefined> {
  const discovery = model.fleet?.spec.serviceDiscovery;
  if (discovery?.mode !== "endpoints") return undefined;
  const web = decisions.find((d) => d.app === "web")?.decision.clusters ?? {};
  const member = members.find((m) => (web[m.name] ?? 0) === 0) ?? members[0];
  if (!member) return undefined;
  const zones = configMapZones(member.api, [
    {
      namespace: discovery.zone?.namespace ?? "kube-system",
      name: discovery.zone?.name ?? "gitfleet-clusterset-zone",
    },
  ]);
  const dns: ClusterDns = await startClusterDns({ zones: zones.zones });
  return {
    member: member.name,
    port: dns.port,
    hint: `DNS: ${member.name}'s cluster DNS answers clusterset.local (the zone gitfleet renders into it) on 127.0.0.1:${dns.port}
  dig @127.0.0.1 -p ${dns.port} +short web.shop.svc.clusterset.local       web's entry point in each cluster running it
  dig @127.0.0.1 -p ${dns.port} +short SRV _http._tcp.web.shop.svc.clusterset.local   weighted by replicas
`,
    close: () => dns.close(),
  };
}
