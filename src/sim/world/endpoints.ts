import { asList, asMap, type JsonMap } from "../../apimachinery/json.js";
import { isReady, sameJson } from "./objects.js";
import type { WorldContext } from "./world-context.js";

/**
 * The endpoints controller: for each Service with a selector, an Endpoints object of the same name
 * listing the IPs of the pods it selects — ready ones as addresses, the others as
 * notReadyAddresses — on the Service's target ports (a named target port looked up in each pod's
 * container ports). Removed with its Service.
 */
export function syncEndpoints(world: WorldContext): void {
  const services = world.list("/api/v1/services");
  const wanted = new Set<string>();
  const pods = world.list("/api/v1/pods");
  for (const service of services) {
    const spec = asMap(service.spec);
    const selector = asMap(spec.selector);
    if (Object.keys(selector).length === 0) continue;
    const { namespace, name } = asMap(service.metadata);
    wanted.add(`${String(namespace)}/${String(name)}`);
    const selected = pods.filter((pod) => {
      const metadata = asMap(pod.metadata);
      const labels = asMap(metadata.labels);
      return (
        metadata.namespace === namespace &&
        !metadata.deletionTimestamp &&
        typeof asMap(pod.status).podIP === "string" &&
        Object.entries(selector).every(([k, v]) => labels[k] === v)
      );
    });
    write(world, service, subsetsOf(asList(spec.ports).map(asMap), selected));
  }
  for (const endpoints of world.list("/api/v1/endpoints")) {
    const { namespace, name } = asMap(endpoints.metadata);
    if (!wanted.has(`${String(namespace)}/${String(name)}`) && isManaged(endpoints))
      world.remove(endpoints, "/api/v1", "endpoints");
  }
}

const MANAGED_BY = { "endpoints.kubernetes.io/managed-by": "endpoint-controller" };

function isManaged(endpoints: JsonMap): boolean {
  return (
    asMap(asMap(endpoints.metadata).labels)["endpoints.kubernetes.io/managed-by"] === "endpoint-controller"
  );
}

// One subset per set of resolved ports, as the controller groups them.
function subsetsOf(ports: readonly JsonMap[], pods: readonly JsonMap[]): JsonMap[] {
  const subsets = new Map<string, { addresses: JsonMap[]; notReadyAddresses: JsonMap[]; ports: JsonMap[] }>();
  for (const pod of pods) {
    const resolved = ports.map((port) => ({
      ...(port.name ? { name: port.name } : {}),
      port: targetPort(port, pod),
      protocol: port.protocol ?? "TCP",
    }));
    const key = JSON.stringify(resolved);
    const subset = subsets.get(key) ?? { addresses: [], notReadyAddresses: [], ports: resolved };
    const metadata = asMap(pod.metadata);
    const address = {
      ip: asMap(pod.status).podIP ?? "",
      nodeName: asMap(pod.spec).nodeName ?? "",
      targetRef: {
        kind: "Pod",
        namespace: metadata.namespace ?? "",
        name: metadata.name ?? "",
        uid: metadata.uid ?? "",
      },
    };
    (isReady(pod) ? subset.addresses : subset.notReadyAddresses).push(address);
    subsets.set(key, subset);
  }
  return [...subsets.values()].map((s) => ({
    ...(s.addresses.length > 0 ? { addresses: sortByIp(s.addresses) } : {}),
    ...(s.notReadyAddresses.length > 0 ? { notReadyAddresses: sortByIp(s.notReadyAddresses) } : {}),
    ports: s.ports,
  }));
}

function targetPort(port: JsonMap, pod: JsonMap): number {
  const target = port.targetPort ?? port.port;
  if (typeof target === "number") return target;
  for (const container of asList(asMap(pod.spec).containers))
    for (const containerPort of asList(asMap(container).ports).map(asMap))
      if (containerPort.name === target) return Number(containerPort.containerPort);
  return Number(port.port ?? 0);
}

function sortByIp(addresses: JsonMap[]): JsonMap[] {
  return [...addresses].sort((a, b) => String(a.ip).localeCompare(String(b.ip), "en", { numeric: true }));
}

function write(world: WorldContext, service: JsonMap, subsets: JsonMap[]): void {
  const { namespace, name } = asMap(service.metadata);
  const path = `/api/v1/namespaces/${String(namespace)}/endpoints`;
  const existing = world
    .list("/api/v1/endpoints")
    .find((e) => asMap(e.metadata).namespace === namespace && asMap(e.metadata).name === name);
  if (existing && sameJson(asList(existing.subsets), subsets)) return;
  const metadata: JsonMap = {
    name: String(name),
    namespace: String(namespace),
    labels: { ...asMap(asMap(service.metadata).labels), ...MANAGED_BY },
  };
  const body: JsonMap = {
    apiVersion: "v1",
    kind: "Endpoints",
    metadata,
    ...(subsets.length > 0 ? { subsets } : {}),
  };
  if (existing)
    world.request("PUT", `${path}/${String(name)}`, {
      ...body,
      metadata: { ...metadata, resourceVersion: asMap(existing.metadata).resourceVersion ?? "" },
    });
  else world.request("POST", path, body);
}
