import { loadFleet } from "../../src/load/load-fleet.js";
import type { EntryPoints, ObservedReplicas, ObservedState } from "../../src/model/observed-state.js";
import type { FleetModel } from "../../src/model/types.js";
import { minimalFleetWith, webDeployment } from "./minimal-fleet.js";

// A fleet that exports a service: three clusters (east, west, north), web divided over them by
// static weights, its LoadBalancer Service exported, and fleet.yaml's serviceDiscovery in a mode.

export const WEB_WORKLOAD = "apps/Deployment/shop/web";
export const WEB_EXPORT = "multicluster.x-k8s.io/ServiceExport/shop/web";

export const NORTH_CLUSTER = `apiVersion: gitfleet.io/v1alpha1
kind: Cluster
metadata:
  name: north
  labels:
    env: staging
spec:
  provider: onprem
  region: eu-north
`;

export const WEB_SERVICE = `apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  type: LoadBalancer
  selector:
    app: web
  ports:
    - name: http
      port: 80
      targetPort: 8080
`;

export const WEB_SERVICE_EXPORT = `apiVersion: multicluster.x-k8s.io/v1alpha1
kind: ServiceExport
metadata:
  name: web
`;

/** fleet.yaml with serviceDiscovery in `mode` (dns: records in north under example.com). */
export function discoveryFleetYaml(mode: "mcs" | "endpoints" | "dns", more = ""): string {
  const dns = mode === "dns" ? "    dns:\n      cluster: north\n      domain: example.com\n" : "";
  return `apiVersion: gitfleet.io/v1alpha1
kind: Fleet
metadata:
  name: fleet
spec:
  serviceDiscovery:
    clusterSetID: prod-set
    mode: ${mode}
${dns}${more}`;
}

/** web's Placement: Divided by static weights (east, west, north), plus `more` spec lines. */
export function weightedPlacement(weights: Readonly<Record<string, number>>, more = ""): string {
  const lines = Object.entries(weights)
    .map(
      ([cluster, weight]) =>
        `        - targetCluster: {clusterNames: [${cluster}]}\n          weight: ${weight}`,
    )
    .join("\n");
  return `apiVersion: gitfleet.io/v1alpha1
kind: Placement
metadata:
  name: web
spec:
  apps: [web]
  replicaScheduling:
    type: Divided
    divisionPreference: Weighted
    weightPreference:
      staticWeightList:
${lines}
${more}`;
}

/** The exporting fleet, loaded; `files` replace or add files. Throws on a problem. */
export function serviceFleet(
  mode: "mcs" | "endpoints" | "dns",
  files: Readonly<Record<string, string | null>> = {},
  replicas = 6,
): FleetModel {
  const loaded = loadFleet(
    minimalFleetWith({
      "fleet.yaml": discoveryFleetYaml(mode),
      "clusters/north.yaml": NORTH_CLUSTER,
      "apps/web/deployment.yaml": webDeployment(replicas),
      "apps/web/service.yaml": WEB_SERVICE,
      "apps/web/export.yaml": WEB_SERVICE_EXPORT,
      "placements/web.yaml": weightedPlacement({ east: 1, west: 1, north: 1 }),
      ...files,
    }),
  );
  if (!loaded.model)
    throw new Error(loaded.problems.map((p) => `${p.file}:${p.line}:${p.column} ${p.message}`).join("\n"));
  return loaded.model;
}

/** Every cluster's web Service reached at 198.51.100.<n> (east 1, west 2, north 3). */
export const ENTRY_POINTS: ReadonlyMap<string, EntryPoints> = new Map(
  ["east", "west", "north"].map((cluster, i) => [cluster, new Map([["shop/web", [`198.51.100.${i + 1}`]]])]),
);

/** Observations at `now`: clusters down as given, web's replicas as reported, every entry point. */
export function observed(
  now: number,
  notReady: readonly string[] = [],
  web: Readonly<Record<string, ObservedReplicas>> = {},
): ObservedState {
  return {
    now,
    clusters: new Map(
      notReady.map((cluster) => [
        cluster,
        {
          ready: false,
          reason: "Unreachable",
          since: now,
          taints: [{ key: "gitfleet.io/unreachable", effect: "NoSchedule" as const, addedAt: now }],
        },
      ]),
    ),
    workloads: new Map([[WEB_WORKLOAD, new Map(Object.entries(web))]]),
    entryPoints: ENTRY_POINTS,
  };
}

// A CRD for a kind the simulator should serve, with a schema that keeps every field.
function crd(group: string, kind: string, plural: string, scope: "Namespaced" | "Cluster"): string {
  return `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: ${plural}.${group}
  annotations:
    api-approved.kubernetes.io: unapproved, test only
spec:
  group: ${group}
  scope: ${scope}
  names: {plural: ${plural}, singular: ${kind.toLowerCase()}, kind: ${kind}}
  versions:
    - name: v1alpha1
      served: true
      storage: true
      schema:
        openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`;
}

/**
 * The app "crds", placed in every cluster (taints tolerated): the CRDs simulated members need for
 * what service discovery renders (ServiceExport, ServiceImport, ClusterProperty, DNSEndpoint).
 */
export function mcsCrdFiles(): Record<string, string> {
  return {
    "apps/crds/exports.yaml": crd("multicluster.x-k8s.io", "ServiceExport", "serviceexports", "Namespaced"),
    "apps/crds/imports.yaml": crd("multicluster.x-k8s.io", "ServiceImport", "serviceimports", "Namespaced"),
    "apps/crds/properties.yaml": crd("about.k8s.io", "ClusterProperty", "clusterproperties", "Cluster"),
    "apps/crds/dnsendpoints.yaml": crd("externaldns.k8s.io", "DNSEndpoint", "dnsendpoints", "Namespaced"),
    "placements/crds.yaml":
      "apiVersion: gitfleet.io/v1alpha1\nkind: Placement\nmetadata:\n  name: crds\nspec:\n  apps: [crds]\n  tolerations:\n    - operator: Exists\n",
  };
}

/** A consumer's EndpointSlice for web.shop from `cluster`, as gitfleet renders it (endpoints mode). */
export function webSliceFrom(cluster: string, addresses: readonly string[], weight: number, ready = true) {
  return {
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    metadata: {
      name: `web-${cluster}`,
      namespace: "shop",
      labels: {
        "multicluster.kubernetes.io/service-name": "web",
        "multicluster.kubernetes.io/source-cluster": cluster,
        "endpointslice.kubernetes.io/managed-by": "gitfleet.io",
      },
      annotations: { "gitfleet.io/weight": String(weight) },
    },
    addressType: "IPv4",
    endpoints: addresses.map((address) => ({ addresses: [address], conditions: { ready } })),
    ports: [
      { name: "http", protocol: "TCP", port: 80 },
      { protocol: "TCP", port: 9000 },
    ],
  };
}
