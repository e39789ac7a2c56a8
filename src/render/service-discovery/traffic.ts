import { identityOf } from "../../model/identity.js";
import type { ExportedService } from "../../model/service-exports.js";
import type { Resource, ServiceDiscoverySpec } from "../../model/types.js";
import type { Destination, RenderContext } from "../place-resources.js";

// Where traffic to an exported service goes: each producing cluster's entry point, its weight (the
// replicas the division gives it) and, when no traffic goes there, why. Traffic follows a faster
// clock than replicas: a NotReady cluster is withdrawn at once, while its replicas move only when
// the NoExecute taint's toleration runs out.

/** One producing cluster of a service, as its consumers and records see it. */
export interface TrafficTarget {
  readonly cluster: string;
  /** The entry point's addresses (LoadBalancer ingress IPs or hostnames); empty until one is observed. */
  readonly addresses: readonly string[];
  /** The backends' replicas there: a DNS record's weight, an SRV record's. */
  readonly weight: number;
  /** Why no traffic goes there ("cluster NotReady (Unreachable)", "no ready replicas", "no entry point yet"). */
  readonly withdrawn?: string;
  /** The cluster is NotReady: nothing rendered may point at it. */
  readonly notReady?: boolean;
}

/** The entry point's Service in a member: the fleet's gateway, or the exported Service itself. */
export function entryPointKey(discovery: ServiceDiscoverySpec, exported: ExportedService): string {
  const gateway = discovery.gateway;
  return gateway ? `${gateway.namespace}/${gateway.name}` : `${exported.namespace}/${exported.name}`;
}

/** Each cluster the service is exported from, with its entry point, weight and whether traffic goes there. */
export function trafficTargets(
  context: RenderContext,
  discovery: ServiceDiscoverySpec,
  exported: ExportedService,
  exportedFrom: readonly string[],
  destinations: ReadonlyMap<Resource, Destination>,
): TrafficTarget[] {
  const key = entryPointKey(discovery, exported);
  return exportedFrom.map((cluster) => {
    const addresses = context.observations?.entryPoints?.get(cluster)?.get(key) ?? [];
    const weight = exported.backends.reduce(
      (sum, backend) => sum + (destinations.get(backend)?.clusters.get(cluster) ?? 0),
      0,
    );
    const notReady = context.observations?.clusters.get(cluster)?.ready === false;
    const withdrawn = withdrawal(context, exported, cluster, destinations, addresses);
    return {
      cluster,
      addresses,
      weight,
      ...(withdrawn ? { withdrawn } : {}),
      ...(notReady ? { notReady: true } : {}),
    };
  });
}

// Why no traffic goes to a producing cluster: it is NotReady, the app has no ready replica there,
// or its entry point is not known yet; undefined when traffic goes there.
function withdrawal(
  context: RenderContext,
  exported: ExportedService,
  cluster: string,
  destinations: ReadonlyMap<Resource, Destination>,
  addresses: readonly string[],
): string | undefined {
  const condition = context.observations?.clusters.get(cluster);
  if (condition && !condition.ready)
    return `cluster NotReady${condition.reason ? ` (${condition.reason})` : ""}`;
  if (!backendsReady(context, exported, cluster, destinations)) return "no ready replicas";
  return addresses.length === 0 ? "no entry point yet" : undefined;
}

// The app is healthy there unless every backend running there is reported without a ready replica
// (a backend not reported yet counts as healthy: nothing says it is not).
function backendsReady(
  context: RenderContext,
  exported: ExportedService,
  cluster: string,
  destinations: ReadonlyMap<Resource, Destination>,
): boolean {
  const running = exported.backends.filter((b) => (destinations.get(b)?.clusters.get(cluster) ?? 1) > 0);
  if (running.length === 0) return true;
  const reports = running.map((b) =>
    context.observations?.workloads.get(identityOf(b.group, b.kind, b.namespace, b.name))?.get(cluster),
  );
  return reports.some((r) => r === undefined || r.ready > 0);
}
