import { asList, asMap, type JsonMap } from "../../apimachinery/json.js";
import { MCS_API_VERSION } from "../../model/service-exports.js";
import { generatedObject } from "../generated-object.js";
import type { RenderedObject } from "../render-result.js";
import type { TrafficTarget } from "./traffic.js";

// The objects gitfleet renders for an exported service besides the export itself: ServiceImports
// for consumers, EndpointSlices pointing at the producing clusters' entry points, and external-dns
// DNSEndpoints. Labels follow the MCS API (KEP-1645) so in-member tooling recognises them.

/** The labels of an EndpointSlice an MCS implementation manages. */
export const SERVICE_NAME_LABEL = "multicluster.kubernetes.io/service-name";
export const SOURCE_CLUSTER_LABEL = "multicluster.kubernetes.io/source-cluster";
export const MANAGED_BY_LABEL = "endpointslice.kubernetes.io/managed-by";
export const ENDPOINTS_MANAGER = "gitfleet.io";
/** On gitfleet's DNSEndpoints: the service ("web.shop") and the record's name. */
export const SERVICE_ANNOTATION = "gitfleet.io/service";
export const RECORD_ANNOTATION = "gitfleet.io/record";
/** On gitfleet's EndpointSlices: the producing cluster's share of the replicas (the SRV weight). */
export const WEIGHT_ANNOTATION = "gitfleet.io/weight";

/** One port of a service as the MCS API carries it. */
export interface ServicePort {
  readonly name?: string;
  readonly protocol: string;
  readonly port: number;
  readonly appProtocol?: string;
}

/** What must agree across the clusters a service is exported from: its ports, and ClusterSetIP or Headless. */
export interface ServiceShape {
  readonly type: "ClusterSetIP" | "Headless";
  /** The Service's own type (ClusterIP, NodePort, LoadBalancer). */
  readonly serviceType: string;
  readonly ports: readonly ServicePort[];
}

/** The shape of a Service as rendered for one cluster (after its Overrides). */
export function serviceShape(service: JsonMap): ServiceShape {
  const spec = asMap(service.spec);
  const ports = asList(spec.ports).map((p) => {
    const port = asMap(p);
    return {
      ...(typeof port.name === "string" && port.name !== "" ? { name: port.name } : {}),
      protocol: typeof port.protocol === "string" ? port.protocol : "TCP",
      port: typeof port.port === "number" ? port.port : 0,
      ...(typeof port.appProtocol === "string" ? { appProtocol: port.appProtocol } : {}),
    };
  });
  ports.sort((a, b) => (a.name ?? "").localeCompare(b.name ?? "") || a.port - b.port);
  return {
    type: spec.clusterIP === "None" ? "Headless" : "ClusterSetIP",
    serviceType: typeof spec.type === "string" ? spec.type : "ClusterIP",
    ports,
  };
}

/** "TCP 80 (http), UDP 53 (dns); ClusterSetIP, LoadBalancer": a shape in a message. */
export function describeShape(shape: ServiceShape): string {
  const ports = shape.ports.map((p) => `${p.protocol} ${p.port}${p.name ? ` (${p.name})` : ""}`).join(", ");
  return `${ports || "no ports"}; ${shape.type}, ${shape.serviceType}`;
}

/** The exported service: which one, in which app, placed by which Placements. */
export interface ServiceRef {
  readonly app: string;
  readonly namespace: string;
  readonly name: string;
  readonly placements: readonly string[];
}

/** A ServiceImport for a consuming cluster. */
export function serviceImport(ref: ServiceRef, cluster: string, shape: ServiceShape): RenderedObject {
  const ports = shape.ports.map((p) => ({
    ...(p.name ? { name: p.name } : {}),
    protocol: p.protocol,
    port: p.port,
    ...(p.appProtocol ? { appProtocol: p.appProtocol } : {}),
  }));
  return rendered(ref, cluster, {
    apiVersion: MCS_API_VERSION,
    kind: "ServiceImport",
    metadata: { name: ref.name, namespace: ref.namespace },
    spec: { type: shape.type, ports },
  });
}

/**
 * The EndpointSlice a consuming cluster gets for one producing cluster: its entry point's addresses,
 * ready while traffic goes there. None for a NotReady producer or one without an entry point.
 */
export function endpointSlice(
  ref: ServiceRef,
  cluster: string,
  shape: ServiceShape,
  target: TrafficTarget,
): RenderedObject | undefined {
  if (target.notReady) return undefined;
  const family = addressType(target.addresses);
  const addresses = target.addresses.filter((a) => addressType([a]) === family);
  if (!family || addresses.length === 0) return undefined;
  return rendered(ref, cluster, {
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    metadata: {
      name: `${ref.name}-${target.cluster}`,
      namespace: ref.namespace,
      labels: {
        [SERVICE_NAME_LABEL]: ref.name,
        [SOURCE_CLUSTER_LABEL]: target.cluster,
        [MANAGED_BY_LABEL]: ENDPOINTS_MANAGER,
      },
      annotations: { [WEIGHT_ANNOTATION]: String(target.weight) },
    },
    addressType: family,
    endpoints: addresses.map((address) => ({
      addresses: [address],
      conditions: { ready: target.withdrawn === undefined },
    })),
    ports: shape.ports.map((p) => ({
      ...(p.name ? { name: p.name } : {}),
      protocol: p.protocol,
      port: p.port,
      ...(p.appProtocol ? { appProtocol: p.appProtocol } : {}),
    })),
  });
}

/** The DNS settings a DNSEndpoint is rendered with. */
export interface RecordSettings {
  readonly cluster: string;
  readonly domain: string;
  readonly namespace: string;
  readonly ttl: number;
  readonly weightKey: string;
}

/**
 * The external-dns DNSEndpoint of a service: `<service>.<namespace>.<domain>` → the entry points of
 * the clusters traffic goes to, one weighted record set per cluster (setIdentifier the cluster).
 */
export function dnsEndpoint(
  ref: ServiceRef,
  settings: RecordSettings,
  targets: readonly TrafficTarget[],
): RenderedObject {
  const dnsName = recordName(ref, settings.domain);
  const endpoints = targets
    .filter((t) => t.withdrawn === undefined)
    .flatMap((t) => {
      const family = addressType(t.addresses);
      const addresses = t.addresses.filter((a) => addressType([a]) === family);
      const recordType = family === "IPv4" ? "A" : family === "IPv6" ? "AAAA" : "CNAME";
      // A CNAME has one target: the first hostname.
      const records = recordType === "CNAME" ? addresses.slice(0, 1) : addresses;
      return records.length === 0
        ? []
        : [
            {
              dnsName,
              recordType,
              targets: records,
              recordTTL: settings.ttl,
              setIdentifier: t.cluster,
              providerSpecific: [{ name: settings.weightKey, value: String(t.weight) }],
            },
          ];
    });
  const object: JsonMap = {
    apiVersion: "externaldns.k8s.io/v1alpha1",
    kind: "DNSEndpoint",
    metadata: {
      name: `${ref.name}-${ref.namespace}`,
      namespace: settings.namespace,
      annotations: { [SERVICE_ANNOTATION]: `${ref.name}.${ref.namespace}`, [RECORD_ANNOTATION]: dnsName },
    },
    spec: { endpoints },
  };
  return rendered({ ...ref, namespace: settings.namespace }, settings.cluster, object);
}

/** `<service>.<namespace>.<domain>`. */
export function recordName(
  ref: { readonly name: string; readonly namespace: string },
  domain: string,
): string {
  return `${ref.name}.${ref.namespace}.${domain}`;
}

/** The EndpointSlice address type of a list: IPv4 when it has an IPv4 address, else IPv6, else FQDN. */
export function addressType(addresses: readonly string[]): "IPv4" | "IPv6" | "FQDN" | undefined {
  if (addresses.some(isIPv4)) return "IPv4";
  if (addresses.some((a) => a.includes(":"))) return "IPv6";
  return addresses.some((a) => FQDN.test(a)) ? "FQDN" : undefined;
}

const FQDN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$/;

function isIPv4(address: string): boolean {
  const parts = address.split(".");
  return parts.length === 4 && parts.every((p) => /^(0|[1-9]\d{0,2})$/.test(p) && Number(p) <= 255);
}

function rendered(ref: ServiceRef, cluster: string, body: JsonMap): RenderedObject {
  return generatedObject(ref.app, ref.placements, cluster, body);
}
