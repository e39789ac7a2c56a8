import { asList, asMap, type JsonMap } from "../../apimachinery/json.js";
import { isReady, sameJson } from "./objects.js";
import type { WorldContext } from "./world-context.js";

/**
 * The endpoints controller: for each Service with a selector, an Endpoints object of the same name
 * listing the IPs of the pods it selects — ready ones as addresses, the others as
 * notReadyAddresses — on the Service's target ports (a named target port looked up in each pod's
 * container ports). Removed with its Service. Only the Services `touched` names are looked at again
 * (those in namespaces where something changed).
 */
export function syncEndpoints(world: WorldContext, touched: (object: JsonMap) => boolean = () => true): void {
  const services = world.list("/api/v1/services");
  const wanted = new Set<string>();
  // Read once per pass: the pods by namespace, the Endpoints by namespace/name (writing one Endpoints
  // changes no other, so neither needs reading again in the pass).
  const podsIn = byNamespace(world.list("/api/v1/pods"));
  const existing = new Map(world.list("/api/v1/endpoints").map((e) => [keyOf(e), e]));
  for (const service of services) {
    const spec = asMap(service.spec);
    const selector = Object.entries(asMap(spec.selector));
    if (selector.length === 0) continue;
    const { namespace } = asMap(service.metadata);
    wanted.add(keyOf(service));
    if (!touched(service)) continue;
    const selected = (podsIn.get(String(namespace)) ?? []).filter((pod) => {
      const metadata = asMap(pod.metadata);
      const labels = asMap(metadata.labels);
      return (
        !metadata.deletionTimestamp &&
        typeof asMap(pod.status).podIP === "string" &&
        selector.every(([k, v]) => labels[k] === v)
      );
    });
    write(world, service, existing.get(keyOf(service)), subsetsOf(asList(spec.ports).map(asMap), selected));
  }
  for (const [key, endpoints] of existing)
    if (!wanted.has(key) && isManaged(endpoints)) world.remove(endpoints, "/api/v1", "endpoints");
}

function keyOf(object: JsonMap): string {
  const { namespace, name } = asMap(object.metadata);
  return `${String(namespace)}/${String(name)}`;
}

function byNamespace(objects: readonly JsonMap[]): Map<string, JsonMap[]> {
  const grouped = new Map<string, JsonMap[]>();
  for (const object of objects) {
    const namespace = String(asMap(object.metadata).namespace);
    const list = grouped.get(namespace);
    if (list) list.push(object);
    else grouped.set(namespace, [object]);
  }
  return grouped;
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

const NUMERIC = new Intl.Collator("en", { numeric: true });

function sortByIp(addresses: JsonMap[]): JsonMap[] {
  return [...addresses].sort((a, b) => NUMERIC.compare(String(a.ip), String(b.ip)));
}

function write(
  world: WorldContext,
  service: JsonMap,
  existing: JsonMap | undefined,
  subsets: JsonMap[],
): void {
  const { namespace, name } = asMap(service.metadata);
  const path = `/api/v1/namespaces/${String(namespace)}/endpoints`;
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
