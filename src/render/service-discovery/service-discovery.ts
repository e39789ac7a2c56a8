import { compareStrings } from "../../model/file-tree.js";
import { identityOf } from "../../model/identity.js";
import { type ExportedService, exportedServices } from "../../model/service-exports.js";
import type { Resource, ServiceDiscoverySpec } from "../../model/types.js";
import type { Destination, RenderContext } from "../place-resources.js";
import type { RenderError, RenderedObject } from "../render-result.js";
import { exportsFollowReplicas, importClusters } from "./export-clusters.js";
import {
  describeShape,
  dnsEndpoint,
  endpointSlice,
  type RecordSettings,
  type ServiceRef,
  type ServiceShape,
  serviceImport,
  serviceShape,
} from "./service-objects.js";
import { trafficTargets } from "./traffic.js";

// Multi-cluster services, rendered: exports follow the replicas, consumers get imports, and in the
// endpoints and dns modes traffic goes to the producing clusters' entry points. A render of
// decisions and observations like failover: the same inputs give the same objects.

/** Restricts every placed ServiceExport to the clusters where its backends run (step 2 of a render). */
export function placeExports(context: RenderContext, destinations: Map<Resource, Destination>): void {
  if (!context.model.fleet?.spec.serviceDiscovery) return;
  exportsFollowReplicas(exportedServices(context.model), destinations);
}

/**
 * The objects the exports placed in `destinations` give consumers and the DNS cluster, from the
 * Services as rendered for each cluster (`rendered`); a Service whose ports or type differ between
 * the clusters it is exported from is an error and imported nowhere.
 */
export function serviceDiscoveryObjects(
  context: RenderContext,
  destinations: ReadonlyMap<Resource, Destination>,
  rendered: readonly RenderedObject[],
): { objects: RenderedObject[]; errors: RenderError[] } {
  const discovery = context.model.fleet?.spec.serviceDiscovery;
  const objects: RenderedObject[] = [];
  const errors: RenderError[] = [];
  if (!discovery) return { objects, errors };
  const exports = exportedServices(context.model).filter((e) => e.service && destinations.has(e.export));
  if (exports.length === 0) return { objects, errors };
  const services = renderedServices(rendered, exports);
  for (const exported of exports) {
    const destination = destinations.get(exported.export) as Destination;
    const exportedFrom = [...destination.clusters.keys()].sort(compareStrings);
    const shapes = exportedFrom.flatMap((cluster) => {
      const object = services.get(`${cluster}\0${serviceIdentity(exported)}`);
      return object ? [{ cluster, shape: serviceShape(object.object) }] : [];
    });
    const [first] = shapes;
    if (!first) continue;
    const conflict = shapes.find((s) => JSON.stringify(s.shape) !== JSON.stringify(first.shape));
    if (conflict) {
      errors.push(shapeConflict(exported, first, conflict));
      continue;
    }
    const ref: ServiceRef = {
      app: exported.app,
      namespace: exported.namespace,
      name: exported.name,
      placements: [...destination.placements].sort(compareStrings),
    };
    const importedIn = importClusters(context, exported, exportedFrom);
    const targets = trafficTargets(context, discovery, exported, exportedFrom, destinations);
    objects.push(...modeObjects(discovery, ref, first.shape, importedIn, targets));
  }
  return { objects, errors };
}

function modeObjects(
  discovery: ServiceDiscoverySpec,
  ref: ServiceRef,
  shape: ServiceShape,
  importedIn: readonly string[],
  targets: ReturnType<typeof trafficTargets>,
): RenderedObject[] {
  if (discovery.mode === "dns") {
    const settings = recordSettings(discovery);
    return settings ? [dnsEndpoint(ref, settings, targets)] : [];
  }
  const imports = importedIn.map((cluster) => serviceImport(ref, cluster, shape));
  if (discovery.mode === "mcs") return imports;
  const slices = importedIn.flatMap((cluster) =>
    targets.flatMap((target) => endpointSlice(ref, cluster, shape, target) ?? []),
  );
  return [...imports, ...slices];
}

/** The dns mode's settings with their defaults. */
export function recordSettings(discovery: ServiceDiscoverySpec): RecordSettings | undefined {
  const dns = discovery.dns;
  if (!dns) return undefined;
  return {
    cluster: dns.cluster,
    domain: dns.domain,
    namespace: dns.namespace ?? "gitfleet-dns",
    ttl: dns.ttl ?? 30,
    weightKey: dns.weightKey ?? "aws/weight",
  };
}

function serviceIdentity(exported: ExportedService): string {
  return identityOf("", "Service", exported.namespace, exported.name);
}

// The exported Services as rendered, by cluster and identity.
function renderedServices(
  rendered: readonly RenderedObject[],
  exports: readonly ExportedService[],
): Map<string, RenderedObject> {
  const wanted = new Set(exports.map(serviceIdentity));
  const found = new Map<string, RenderedObject>();
  for (const object of rendered)
    if (wanted.has(object.identity)) found.set(`${object.cluster}\0${object.identity}`, object);
  return found;
}

function shapeConflict(
  exported: ExportedService,
  first: { readonly cluster: string; readonly shape: ServiceShape },
  other: { readonly cluster: string; readonly shape: ServiceShape },
): RenderError {
  const service = exported.service as Resource;
  return {
    cluster: other.cluster,
    app: exported.app,
    resource: `Service ${exported.namespace}/${exported.name}`,
    file: service.origin.file,
    at: { origin: service.origin, path: ["spec", "ports"] },
    code: "SERVICE_CONFLICT",
    message: `the clusters it is exported from disagree after Overrides, which the MCS API reports as a Conflict: ${first.cluster} has ${describeShape(first.shape)}; ${other.cluster} has ${describeShape(other.shape)}. Make the ports, protocols and type agree, or export it from fewer clusters`,
  };
}
