import { asList, asMap, type JsonMap } from "../../apimachinery/json.js";
import { compareStrings } from "../../model/file-tree.js";
import { fnv32a } from "../../model/hash.js";
import { CLUSTER_SET_APP } from "../../model/service-exports.js";
import type { FleetModel, ServiceDiscoverySpec } from "../../model/types.js";
import { generatedObject } from "../generated-object.js";
import type { RenderedObject } from "../render-result.js";
import {
  ENDPOINTS_MANAGER,
  MANAGED_BY_LABEL,
  SERVICE_NAME_LABEL,
  SOURCE_CLUSTER_LABEL,
  WEIGHT_ANNOTATION,
} from "./service-objects.js";

// What every member of the cluster set gets, made from the whole render (every app's imports): its
// ClusterProperties (KEP-2149) and, in the endpoints mode, the clusterset.local zone its CoreDNS
// serves (the MCS DNS specification's records, from the EndpointSlices rendered for it).

/** The version of the MCS DNS specification the zone answers (its dns-version TXT record). */
export const DNS_SCHEMA_VERSION = "1.1.0";
export const ZONE_KEY = "db.clusterset.local";

/**
 * The render's objects with the cluster set's made afresh: ClusterProperties for every Cluster and
 * the zones. Objects of the cluster-set app from an earlier render are dropped. Pure.
 */
export function withClusterSet(model: FleetModel, objects: readonly RenderedObject[]): RenderedObject[] {
  const discovery = model.fleet?.spec.serviceDiscovery;
  // Without service discovery a render holds none (turning it off changes fleet.yaml: a full render).
  if (!discovery) return [...objects];
  const others = objects.filter((o) => o.app !== CLUSTER_SET_APP);
  const made: RenderedObject[] = [];
  const slices = discovery.mode === "endpoints" ? slicesByCluster(others) : undefined;
  for (const cluster of model.clusters.map((c) => c.metadata.name)) {
    made.push(clusterProperty(cluster, "cluster.clusterset.k8s.io", cluster));
    made.push(clusterProperty(cluster, "clusterset.k8s.io", discovery.clusterSetID));
    if (slices) made.push(zoneConfigMap(discovery, cluster, slices.get(cluster) ?? []));
  }
  return mergeByPath(
    others,
    made.sort((a, b) => compareStrings(a.path, b.path)),
  );
}

// Two lists sorted by path, merged into one.
function mergeByPath(a: readonly RenderedObject[], b: readonly RenderedObject[]): RenderedObject[] {
  const merged: RenderedObject[] = [];
  let j = 0;
  for (const object of a) {
    while (j < b.length && compareStrings((b[j] as RenderedObject).path, object.path) < 0)
      merged.push(b[j++] as RenderedObject);
    merged.push(object);
  }
  while (j < b.length) merged.push(b[j++] as RenderedObject);
  return merged;
}

function clusterProperty(cluster: string, name: string, value: string): RenderedObject {
  return generated(cluster, {
    apiVersion: "about.k8s.io/v1alpha1",
    kind: "ClusterProperty",
    metadata: { name },
    spec: { value },
  });
}

function slicesByCluster(objects: readonly RenderedObject[]): Map<string, JsonMap[]> {
  const byCluster = new Map<string, JsonMap[]>();
  for (const o of objects) {
    if (!o.identity.startsWith("discovery.k8s.io/EndpointSlice/")) continue;
    if (asMap(asMap(o.object.metadata).labels)[MANAGED_BY_LABEL] !== ENDPOINTS_MANAGER) continue;
    const list = byCluster.get(o.cluster) ?? [];
    list.push(o.object);
    byCluster.set(o.cluster, list);
  }
  return byCluster;
}

function zoneConfigMap(
  discovery: ServiceDiscoverySpec,
  cluster: string,
  slices: readonly JsonMap[],
): RenderedObject {
  return generated(cluster, {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
      name: discovery.zone?.name ?? "gitfleet-clusterset-zone",
      namespace: discovery.zone?.namespace ?? "kube-system",
    },
    data: { [ZONE_KEY]: clusterSetZone(slices, discovery.zone?.ttl ?? 5) },
  });
}

/**
 * The clusterset.local zone, in RFC 1035 master-file form, for the given EndpointSlices (gitfleet's,
 * one per service and producing cluster): per service, `<svc>.<ns>.svc` answers A/AAAA with every
 * ready entry point, `<cluster>.<svc>.<ns>.svc` with that cluster's, and each named port has an SRV
 * record per cluster (`_<port>._<proto>.<svc>.<ns>.svc`) weighted by the cluster's replicas. The
 * serial is a digest of the records: CoreDNS's file plugin reloads when it changes.
 */
export function clusterSetZone(slices: readonly JsonMap[], ttl: number): string {
  const ordered = [...slices].sort((a, b) => compareStrings(sliceKey(a), sliceKey(b)));
  const unique = [...new Set(ordered.flatMap((slice) => sliceRecords(slice, ttl)))];
  const serial = fnv32a(unique.join("\n"));
  return [
    "$ORIGIN clusterset.local.",
    `@ ${ttl} IN SOA ns.dns.clusterset.local. hostmaster.clusterset.local. ${serial} 7200 1800 86400 ${ttl}`,
    `@ ${ttl} IN NS ns.dns.clusterset.local.`,
    `dns-version ${ttl} IN TXT "${DNS_SCHEMA_VERSION}"`,
    ...unique,
    "",
  ].join("\n");
}

// One producing cluster's records of one service: its ready addresses under the service's name and
// the cluster's, and an SRV record per named port.
function sliceRecords(slice: JsonMap, ttl: number): string[] {
  const metadata = asMap(slice.metadata);
  const labels = asMap(metadata.labels);
  const service = `${String(labels[SERVICE_NAME_LABEL])}.${String(metadata.namespace)}.svc`;
  const cluster = String(labels[SOURCE_CLUSTER_LABEL]);
  const type = slice.addressType === "IPv6" ? "AAAA" : slice.addressType === "IPv4" ? "A" : undefined;
  const ready = asList(slice.endpoints)
    .map((e) => asMap(e))
    .filter((e) => asMap(e.conditions).ready !== false)
    .flatMap((e) => asList(e.addresses).filter((a): a is string => typeof a === "string"));
  if (!type || ready.length === 0) return [];
  const weight = Math.min(Number(asMap(metadata.annotations)[WEIGHT_ANNOTATION] ?? "0") || 0, 65535);
  const addresses = ready.flatMap((address) => [
    `${service} ${ttl} IN ${type} ${address}`,
    `${cluster}.${service} ${ttl} IN ${type} ${address}`,
  ]);
  const services = asList(slice.ports)
    .map((p) => asMap(p))
    .filter((port) => typeof port.name === "string" && port.name !== "")
    .map(
      (port) =>
        `_${String(port.name)}._${String(port.protocol ?? "TCP").toLowerCase()}.${service} ${ttl} IN SRV 0 ${weight} ${String(port.port)} ${cluster}.${service}.clusterset.local.`,
    );
  return [...addresses, ...services];
}

function sliceKey(slice: JsonMap): string {
  const metadata = asMap(slice.metadata);
  return `${String(metadata.namespace)}/${String(metadata.name)}`;
}

function generated(cluster: string, body: JsonMap): RenderedObject {
  return generatedObject(CLUSTER_SET_APP, [], cluster, body);
}
