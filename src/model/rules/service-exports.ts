import { asMap, type Json } from "../../apimachinery/json.js";
import { type ExportedService, exportedServices } from "../service-exports.js";
import type { FleetModel } from "../types.js";
import type { RuleContext } from "./rule.js";

/**
 * What the MCS API reports only at runtime, as a Conflict or an export that never becomes Ready,
 * said before merge: a ServiceExport needs the fleet's serviceDiscovery and a Service of its name
 * in its app; ExternalName Services cannot be exported; in the endpoints and dns modes each export
 * needs an entry point (a LoadBalancer Service, or the fleet's gateway); the dns mode names a Cluster.
 * Ports that disagree across clusters after Overrides are the render's to find (see
 * render/service-discovery).
 */
export function checkServiceExports(context: RuleContext): void {
  const { model, reporter } = context;
  checkDiscoverySettings(context);
  const discovery = model.fleet?.spec.serviceDiscovery;
  for (const exported of exportedServices(model)) {
    const origin = exported.export.origin;
    if (!discovery) {
      reporter.report({
        origin,
        path: ["kind"],
        code: "INVALID_FIELD_COMBINATION",
        message:
          "a ServiceExport needs fleet.yaml spec.serviceDiscovery (the cluster set's ID and its mode: mcs, endpoints or dns)",
      });
      continue;
    }
    if (!exported.service) {
      reporter.report({
        origin,
        path: ["metadata", "name"],
        code: "UNKNOWN_REFERENCE",
        message: `no Service "${exported.name}" in namespace ${exported.namespace} in app ${exported.app}: a ServiceExport exports the Service of its own name and namespace, written in the same app`,
      });
      continue;
    }
    checkService(context, exported, discovery.mode, discovery.gateway !== undefined);
  }
}

// The Service a ServiceExport exports can be exported, and reached in the mode the fleet uses.
function checkService(context: RuleContext, exported: ExportedService, mode: string, gateway: boolean): void {
  const service = exported.service;
  if (!service) return;
  const type = asMap(service.object.spec as Json).type ?? "ClusterIP";
  if (type === "ExternalName") {
    context.reporter.report({
      origin: service.origin,
      path: ["spec", "type"],
      code: "INVALID_FIELD_COMBINATION",
      message: `Service ${exported.namespace}/${exported.name} is exported (${exported.export.origin.file}) but an ExternalName Service cannot be: the MCS API would mark the export Invalid`,
    });
    return;
  }
  if (mode === "mcs" || gateway || type === "LoadBalancer") return;
  const path = asMap(service.object.spec as Json).type === undefined ? ["spec"] : ["spec", "type"];
  context.reporter.report({
    origin: service.origin,
    path,
    code: "INVALID_FIELD_COMBINATION",
    message: `Service ${exported.namespace}/${exported.name} is exported in serviceDiscovery mode ${mode}, which needs each cluster's entry point: make it type LoadBalancer, or name an east-west gateway in fleet.yaml spec.serviceDiscovery.gateway`,
  });
}

// The dns mode's settings: its block is there and names a Cluster.
function checkDiscoverySettings({ model, reporter }: RuleContext): void {
  const fleet = model.fleet;
  const discovery = fleet?.spec.serviceDiscovery;
  if (!fleet || !discovery) return;
  if (discovery.mode === "dns" && !discovery.dns) {
    reporter.report({
      origin: fleet.origin,
      path: ["spec", "serviceDiscovery", "mode"],
      code: "MISSING_FIELD",
      message:
        "mode dns needs spec.serviceDiscovery.dns: the cluster external-dns runs in, and the domain records are published under",
    });
    return;
  }
  const gateway = discovery.gateway;
  if (gateway && !rendersService(model, gateway.namespace, gateway.name))
    reporter.report({
      origin: fleet.origin,
      path: ["spec", "serviceDiscovery", "gateway", "name"],
      code: "UNKNOWN_REFERENCE",
      message: `no app writes Service ${gateway.namespace}/${gateway.name}: the gateway is read where gitfleet syncs it, so an app must place it in every producing cluster`,
    });
  if (discovery.dns && !hasCluster(model, discovery.dns.cluster))
    reporter.report({
      origin: fleet.origin,
      path: ["spec", "serviceDiscovery", "dns", "cluster"],
      code: "UNKNOWN_REFERENCE",
      message: `no Cluster "${discovery.dns.cluster}" under clusters/`,
    });
}

function rendersService(model: FleetModel, namespace: string, name: string): boolean {
  return model.apps.some((app) =>
    app.resources.some(
      (r) => r.group === "" && r.kind === "Service" && r.namespace === namespace && r.name === name,
    ),
  );
}

function hasCluster(model: FleetModel, name: string): boolean {
  return model.clusters.some((c) => c.metadata.name === name);
}
