/** What a kind's declared interpreter says about where its pod spec and replicas are (paths in dots). */
export interface WorkloadPaths {
  readonly spec: { readonly podTemplatePath?: string; readonly replicasPath?: string };
}

/** A kind's identity independent of version: "apps/Deployment", "/ConfigMap" (core group). */
export type GroupKind = string;

/** The API group of an apiVersion: "apps/v1" → "apps", "v1" → "". */
export function groupOf(apiVersion: string): string {
  const slash = apiVersion.indexOf("/");
  return slash < 0 ? "" : apiVersion.slice(0, slash);
}

/** Joins a group and kind into a GroupKind key. */
export function groupKind(group: string, kind: string): GroupKind {
  return `${group}/${kind}`;
}

/** Built-in cluster-scoped kinds of Kubernetes 1.32 (everything else built in is namespaced). */
export const CLUSTER_SCOPED_KINDS: ReadonlySet<GroupKind> = new Set([
  "/Namespace",
  "/Node",
  "/PersistentVolume",
  "/ComponentStatus",
  "rbac.authorization.k8s.io/ClusterRole",
  "rbac.authorization.k8s.io/ClusterRoleBinding",
  "apiextensions.k8s.io/CustomResourceDefinition",
  "apiregistration.k8s.io/APIService",
  "storage.k8s.io/StorageClass",
  "storage.k8s.io/CSIDriver",
  "storage.k8s.io/CSINode",
  "storage.k8s.io/VolumeAttachment",
  "scheduling.k8s.io/PriorityClass",
  "node.k8s.io/RuntimeClass",
  "networking.k8s.io/IngressClass",
  "networking.k8s.io/IPAddress",
  "networking.k8s.io/ServiceCIDR",
  "admissionregistration.k8s.io/MutatingWebhookConfiguration",
  "admissionregistration.k8s.io/ValidatingWebhookConfiguration",
  "admissionregistration.k8s.io/ValidatingAdmissionPolicy",
  "admissionregistration.k8s.io/ValidatingAdmissionPolicyBinding",
  "certificates.k8s.io/CertificateSigningRequest",
  "certificates.k8s.io/ClusterTrustBundle",
  "flowcontrol.apiserver.k8s.io/FlowSchema",
  "flowcontrol.apiserver.k8s.io/PriorityLevelConfiguration",
  "resource.k8s.io/DeviceClass",
]);

/** Built-in kinds whose replica count gitfleet divides, and where their pod template lives. */
export const BUILT_IN_WORKLOADS: ReadonlyMap<GroupKind, { readonly podTemplatePath: readonly string[] }> =
  new Map([
    ["apps/Deployment", { podTemplatePath: ["spec", "template"] }],
    ["apps/StatefulSet", { podTemplatePath: ["spec", "template"] }],
    ["apps/ReplicaSet", { podTemplatePath: ["spec", "template"] }],
    ["batch/Job", { podTemplatePath: ["spec", "template"] }],
  ]);

/** Built-in kinds that carry a pod spec without a divisible replica count, and where. */
const OTHER_POD_SPECS: ReadonlyMap<GroupKind, readonly string[]> = new Map([
  ["/Pod", ["spec"]],
  ["apps/DaemonSet", ["spec", "template", "spec"]],
  ["batch/CronJob", ["spec", "jobTemplate", "spec", "template", "spec"]],
  ["/ReplicationController", ["spec", "template", "spec"]],
]);

/** Where a kind's pod spec lives (built in, or declared by an interpreter), if it has one. */
export function podSpecPath(
  key: GroupKind,
  interpreter: WorkloadPaths | undefined,
): readonly string[] | undefined {
  const builtIn = BUILT_IN_WORKLOADS.get(key);
  if (builtIn) return [...builtIn.podTemplatePath, "spec"];
  const other = OTHER_POD_SPECS.get(key);
  if (other) return other;
  const templatePath = interpreter?.spec.podTemplatePath;
  return templatePath === undefined ? undefined : [...templatePath.split("."), "spec"];
}

/** True when gitfleet divides the kind's replicas: a built-in workload or an interpreter with replicasPath. */
export function isWorkloadKind(key: GroupKind, interpreter: WorkloadPaths | undefined): boolean {
  return BUILT_IN_WORKLOADS.has(key) || interpreter?.spec.replicasPath !== undefined;
}

/** RBAC object names are path segments (system:aggregate-to-edit is valid), not DNS subdomains. */
export const PATH_SEGMENT_NAMED_KINDS: ReadonlySet<GroupKind> = new Set([
  "rbac.authorization.k8s.io/Role",
  "rbac.authorization.k8s.io/RoleBinding",
  "rbac.authorization.k8s.io/ClusterRole",
  "rbac.authorization.k8s.io/ClusterRoleBinding",
]);

/** Kinds whose names must be DNS-1123 labels rather than subdomains. */
export const LABEL_NAMED_KINDS: ReadonlySet<GroupKind> = new Set(["/Namespace", "/Service"]);

/**
 * A kind's resource name as Kubernetes guesses it for built-in and conventional custom resources
 * (client-go's UnsafeGuessKindToResource, with Endpoints which is its own plural): for when neither
 * discovery nor a CustomResourceDefinition says.
 */
export function guessResource(kind: string): string {
  const lower = kind.toLowerCase();
  if (lower === "endpoints") return lower;
  if (/(?:s|x|z|ch|sh)$/.test(lower)) return `${lower}es`;
  if (/[^aeiou]y$/.test(lower)) return `${lower.slice(0, -1)}ies`;
  return `${lower}s`;
}
