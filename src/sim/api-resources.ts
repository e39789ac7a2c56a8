import type { JsonMap } from "../apimachinery/json.js";
/** One resource a member serves, as discovery describes it. */
export interface ApiResource {
  /** "" for the core group. */
  readonly group: string;
  readonly version: string;
  /** The plural, lower-case name in URLs: "deployments". */
  readonly name: string;
  readonly singularName: string;
  readonly kind: string;
  readonly namespaced: boolean;
  readonly verbs: readonly string[];
  readonly shortNames?: readonly string[];
  /** The categories it belongs to (`all`: what `kubectl get all` lists). */
  readonly categories?: readonly string[];
  /** Subresources served, e.g. ["status", "scale"]. */
  readonly subresources?: readonly string[];
  /** Where the scale subresource reads and writes; the built-in workloads' paths when absent. */
  readonly scale?: ScalePaths;
  /** A custom resource's structural schema (its CRD version's openAPIV3Schema), which prunes its fields. */
  readonly schema?: JsonMap;
}

/** A CRD's scale subresource: JSON paths such as ".spec.replicas" (as in CustomResourceDefinition). */
export interface ScalePaths {
  readonly specReplicasPath: string;
  readonly statusReplicasPath: string;
  /** A path to the label selector in its string form; absent when the resource publishes none. */
  readonly labelSelectorPath?: string;
}

/** ".spec.replicas" → ["spec", "replicas"]. */
export function scalePath(path: string): string[] {
  return path.replace(/^\./, "").split(".");
}

/** "apps/v1", or "v1" for the core group. */
export function groupVersion(group: string, version: string): string {
  return group ? `${group}/${version}` : version;
}

/** Where a group-version's resources are served: "/apis/apps/v1", or "/api/v1" for the core group. */
export function pathPrefix(group: string, version: string): string {
  return group ? `/apis/${group}/${version}` : `/api/${version}`;
}

/** Every group-version the resources belong to, in order of first appearance. */
export function groupVersions(resources: readonly ApiResource[]): { group: string; version: string }[] {
  const seen = new Map<string, { group: string; version: string }>();
  for (const { group, version } of resources) seen.set(groupVersion(group, version), { group, version });
  return [...seen.values()];
}

/** The category `kubectl get all` lists, as a real API server puts its workloads in it. */
const ALL = ["all"];

const ALL_VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"];

function resource(
  group: string,
  version: string,
  kind: string,
  namespaced: boolean,
  options: {
    name?: string;
    shortNames?: string[];
    categories?: string[];
    subresources?: string[];
    verbs?: string[];
  } = {},
): ApiResource {
  const singularName = kind.toLowerCase();
  const name =
    options.name ??
    (singularName.endsWith("s")
      ? `${singularName}es`
      : singularName.endsWith("y")
        ? `${singularName.slice(0, -1)}ies`
        : `${singularName}s`);
  return {
    group,
    version,
    name,
    singularName,
    kind,
    namespaced,
    verbs: options.verbs ?? ALL_VERBS,
    ...(options.shortNames ? { shortNames: options.shortNames } : {}),
    ...(options.categories ? { categories: options.categories } : {}),
    ...(options.subresources ? { subresources: options.subresources } : {}),
  };
}

/**
 * The built-in resources a simulated member serves: what gitfleet renders and what kubectl asks
 * for, with the names, scopes, verbs and short names a real API server gives in discovery.
 */
export const BUILT_IN_RESOURCES: readonly ApiResource[] = [
  resource("", "v1", "Namespace", false, { shortNames: ["ns"], subresources: ["status"] }),
  resource("", "v1", "Node", false, { shortNames: ["no"], subresources: ["status"] }),
  resource("", "v1", "Pod", true, {
    shortNames: ["po"],
    categories: ALL,
    subresources: ["status", "log", "exec", "attach", "portforward", "binding", "eviction"],
  }),
  resource("", "v1", "Service", true, { shortNames: ["svc"], categories: ALL, subresources: ["status"] }),
  resource("", "v1", "ConfigMap", true, { shortNames: ["cm"] }),
  resource("", "v1", "Secret", true),
  resource("", "v1", "ServiceAccount", true, { shortNames: ["sa"], subresources: ["token"] }),
  resource("", "v1", "PersistentVolumeClaim", true, { shortNames: ["pvc"], subresources: ["status"] }),
  resource("", "v1", "PersistentVolume", false, { shortNames: ["pv"], subresources: ["status"] }),
  resource("", "v1", "Endpoints", true, { name: "endpoints", shortNames: ["ep"] }),
  resource("", "v1", "Event", true, { shortNames: ["ev"] }),
  resource("", "v1", "LimitRange", true, { shortNames: ["limits"] }),
  resource("", "v1", "ResourceQuota", true, { shortNames: ["quota"], subresources: ["status"] }),
  resource("apps", "v1", "Deployment", true, {
    shortNames: ["deploy"],
    categories: ALL,
    subresources: ["status", "scale"],
  }),
  resource("apps", "v1", "ReplicaSet", true, {
    shortNames: ["rs"],
    categories: ALL,
    subresources: ["status", "scale"],
  }),
  resource("apps", "v1", "StatefulSet", true, {
    shortNames: ["sts"],
    categories: ALL,
    subresources: ["status", "scale"],
  }),
  resource("apps", "v1", "DaemonSet", true, {
    shortNames: ["ds"],
    categories: ALL,
    subresources: ["status"],
  }),
  resource("apps", "v1", "ControllerRevision", true),
  resource("batch", "v1", "Job", true, { categories: ALL, subresources: ["status"] }),
  resource("batch", "v1", "CronJob", true, { shortNames: ["cj"], categories: ALL, subresources: ["status"] }),
  resource("autoscaling", "v2", "HorizontalPodAutoscaler", true, {
    shortNames: ["hpa"],
    categories: ALL,
    subresources: ["status"],
  }),
  resource("rbac.authorization.k8s.io", "v1", "Role", true),
  resource("rbac.authorization.k8s.io", "v1", "RoleBinding", true),
  resource("rbac.authorization.k8s.io", "v1", "ClusterRole", false),
  resource("rbac.authorization.k8s.io", "v1", "ClusterRoleBinding", false),
  resource("discovery.k8s.io", "v1", "EndpointSlice", true),
  resource("networking.k8s.io", "v1", "Ingress", true, { shortNames: ["ing"], subresources: ["status"] }),
  resource("networking.k8s.io", "v1", "IngressClass", false),
  resource("networking.k8s.io", "v1", "NetworkPolicy", true, { shortNames: ["netpol"] }),
  resource("policy", "v1", "PodDisruptionBudget", true, { shortNames: ["pdb"], subresources: ["status"] }),
  resource("coordination.k8s.io", "v1", "Lease", true),
  resource("scheduling.k8s.io", "v1", "PriorityClass", false, { shortNames: ["pc"] }),
  resource("certificates.k8s.io", "v1", "CertificateSigningRequest", false, {
    shortNames: ["csr"],
    subresources: ["status", "approval"],
  }),
  resource("apiextensions.k8s.io", "v1", "CustomResourceDefinition", false, {
    shortNames: ["crd", "crds"],
    subresources: ["status"],
  }),
];
