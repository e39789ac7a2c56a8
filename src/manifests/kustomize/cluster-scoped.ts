/** Kinds with no namespace: the namespace transformer leaves them alone. */
const CLUSTER_SCOPED = new Set([
  "Namespace",
  "ClusterRole",
  "ClusterRoleBinding",
  "CustomResourceDefinition",
  "PersistentVolume",
  "StorageClass",
  "PriorityClass",
  "APIService",
  "MutatingWebhookConfiguration",
  "ValidatingWebhookConfiguration",
  "IngressClass",
  "RuntimeClass",
  "CSIDriver",
  "Node",
]);

/** True for the kinds kustomize knows to have no namespace; custom resources count as namespaced. */
export function isClusterScoped(kind: string): boolean {
  return CLUSTER_SCOPED.has(kind);
}
