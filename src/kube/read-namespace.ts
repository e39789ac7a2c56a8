import type { JsonMap } from "../apimachinery/json.js";
import type { MemberClient } from "./member-client.js";

/** A kind `gitfleet import` reads, as apiVersion and kind. */
export interface ImportKind {
  readonly apiVersion: string;
  readonly kind: string;
}

/**
 * The kinds a team creates in a namespace by hand, in their served versions: workloads, their
 * Services, configuration, storage claims, autoscalers, disruption budgets, network policies,
 * Ingresses and namespaced RBAC. Secrets are read only to be reported (their values never go to Git);
 * what controllers create (ReplicaSets, Pods, Jobs of CronJobs, EndpointSlices, Events) is not read.
 */
export const IMPORT_KINDS: readonly ImportKind[] = [
  { apiVersion: "apps/v1", kind: "Deployment" },
  { apiVersion: "apps/v1", kind: "StatefulSet" },
  { apiVersion: "apps/v1", kind: "DaemonSet" },
  { apiVersion: "batch/v1", kind: "CronJob" },
  { apiVersion: "v1", kind: "Service" },
  { apiVersion: "v1", kind: "ConfigMap" },
  { apiVersion: "v1", kind: "Secret" },
  { apiVersion: "v1", kind: "ServiceAccount" },
  { apiVersion: "v1", kind: "PersistentVolumeClaim" },
  { apiVersion: "autoscaling/v2", kind: "HorizontalPodAutoscaler" },
  { apiVersion: "policy/v1", kind: "PodDisruptionBudget" },
  { apiVersion: "networking.k8s.io/v1", kind: "NetworkPolicy" },
  { apiVersion: "networking.k8s.io/v1", kind: "Ingress" },
  { apiVersion: "rbac.authorization.k8s.io/v1", kind: "Role" },
  { apiVersion: "rbac.authorization.k8s.io/v1", kind: "RoleBinding" },
];

/** The most objects read from one member, over every kind: an import is of an app, not a cluster. */
export const MAX_IMPORT_OBJECTS = 5_000;

/**
 * Every object of these kinds in one namespace of a member that matches the label selector, a page of
 * 500 at a time; a kind the member does not serve is passed over. Reads only (GETs). More than
 * MAX_IMPORT_OBJECTS in all fails the read rather than importing part of what runs.
 */
export async function readNamespace(
  client: MemberClient,
  namespace: string,
  kinds: readonly ImportKind[],
  labelSelector = "",
): Promise<JsonMap[]> {
  const objects: JsonMap[] = [];
  for (const { apiVersion, kind } of kinds) {
    const resource = await client.resource(apiVersion, kind);
    if (!resource?.namespaced) continue;
    await client.pages(apiVersion, kind, { namespace, labelSelector }, (items) => {
      for (const item of items) objects.push({ ...item, apiVersion, kind });
      if (objects.length > MAX_IMPORT_OBJECTS)
        throw new Error(
          `${client.cluster} holds more than ${MAX_IMPORT_OBJECTS} objects to import in namespace ${namespace}: narrow it with --selector`,
        );
    });
  }
  return objects;
}
