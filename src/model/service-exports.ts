import { asMap, type Json, valueAt } from "../apimachinery/json.js";
import { groupKind, isWorkloadKind, podSpecPath } from "../apimachinery/kinds.js";
import { indexInterpreters } from "./interpreter-index.js";
import type { FleetModel, Resource } from "./types.js";

// Multi-cluster services as the fleet repo writes them (the MCS API, KEP-1645): a ServiceExport
// beside the Service of its name and namespace in one app, and the workloads whose pods the Service
// selects — where those run with replicas is where the service is exported from. Pure.

/** The MCS API group and version gitfleet reads and renders. */
export const MCS_API_VERSION = "multicluster.x-k8s.io/v1alpha1";
export const MCS_GROUP = "multicluster.x-k8s.io";
/** The app of what every member of the cluster set gets (ClusterProperties, the clusterset.local zone). */
export const CLUSTER_SET_APP = "gitfleet-clusterset";

/** One ServiceExport of the fleet repo, with what it exports. */
export interface ExportedService {
  readonly app: string;
  readonly namespace: string;
  readonly name: string;
  /** The ServiceExport as written. */
  readonly export: Resource;
  /** The Service of the same name and namespace in the same app; undefined when there is none. */
  readonly service: Resource | undefined;
  /**
   * The app's workloads in the namespace whose pod template the Service's selector matches: the
   * service is exported from the clusters where one of them has replicas. Empty for a Service without
   * a selector (it is exported wherever it is placed).
   */
  readonly backends: readonly Resource[];
}

/** A ServiceExport of the MCS API (any version of its group). */
export function isServiceExport(resource: Pick<Resource, "group" | "kind">): boolean {
  return resource.group === MCS_GROUP && resource.kind === "ServiceExport";
}

const byModel = new WeakMap<FleetModel, readonly ExportedService[]>();

/** Every ServiceExport in the model's apps, in app order, each with its Service and backends. */
export function exportedServices(model: FleetModel): readonly ExportedService[] {
  let found = byModel.get(model);
  if (found) return found;
  const interpreterFor = indexInterpreters(model);
  const exports: ExportedService[] = [];
  for (const app of model.apps) {
    const candidates = app.resources.filter(isServiceExport);
    if (candidates.length === 0) continue;
    for (const resource of candidates) {
      const namespace = resource.namespace ?? "default";
      const service = app.resources.find(
        (r) =>
          r.group === "" && r.kind === "Service" && r.name === resource.name && r.namespace === namespace,
      );
      const backends = service
        ? app.resources.filter(
            (r) =>
              r.namespace === namespace &&
              isWorkloadKind(groupKind(r.group, r.kind), interpreterFor(r)) &&
              selects(service, podLabels(r, podSpecPath(groupKind(r.group, r.kind), interpreterFor(r)))),
          )
        : [];
      exports.push({ app: app.name, namespace, name: resource.name, export: resource, service, backends });
    }
  }
  found = exports;
  byModel.set(model, found);
  return found;
}

/** The Service's spec.selector as written; undefined for a Service without one (its endpoints are managed by hand). */
export function serviceSelector(service: Resource): Readonly<Record<string, string>> | undefined {
  const selector = asMap(asMap(service.object.spec as Json).selector);
  const entries = Object.entries(selector).filter((e): e is [string, string] => typeof e[1] === "string");
  return entries.length === 0 ? undefined : Object.fromEntries(entries);
}

// A selector matches labels that carry every one of its pairs; a Service without a selector selects no pods.
function selects(service: Resource, labels: Readonly<Record<string, unknown>> | undefined): boolean {
  const selector = serviceSelector(service);
  if (!selector || !labels) return false;
  return Object.entries(selector).every(([key, value]) => labels[key] === value);
}

function podLabels(
  resource: Resource,
  specPath: readonly string[] | undefined,
): Readonly<Record<string, unknown>> | undefined {
  if (!specPath) return undefined;
  const template = valueAt(resource.object as Json, specPath.slice(0, -1));
  return asMap(asMap(template).metadata).labels as Readonly<Record<string, unknown>> | undefined;
}

/** The DNS name of a service in the cluster set, per the MCS DNS specification. */
export function clusterSetName(service: { readonly name: string; readonly namespace: string }): string {
  return `${service.name}.${service.namespace}.svc.clusterset.local`;
}

/** "web.shop": how plans, commits and status name an exported service. */
export function serviceLabel(service: { readonly name: string; readonly namespace: string }): string {
  return `${service.name}.${service.namespace}`;
}
