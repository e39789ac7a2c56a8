// The fields where one object names another, as kustomize's name reference configuration lists
// them: when the object named is renamed (a prefix, a suffix, a content hash), these fields follow.
// Paths walk through lists element by element; a path ending at a mapping (RBAC subjects, webhook
// services) names the object by its `name` and `namespace` fields.

/** The object referred to, by kind, and by group unless the group is "" (any group). */
export interface Referent {
  readonly group: string;
  readonly kind: string;
}

/** A field of a referrer kind that names a referent. */
export interface ReferenceField {
  readonly referrer: string;
  readonly path: readonly string[];
}

const POD_SPEC_OWNERS: readonly (readonly [string, string])[] = [
  ["Pod", "spec"],
  ["PodTemplate", "template/spec"],
  ["Deployment", "spec/template/spec"],
  ["ReplicaSet", "spec/template/spec"],
  ["DaemonSet", "spec/template/spec"],
  ["StatefulSet", "spec/template/spec"],
  ["Job", "spec/template/spec"],
  ["CronJob", "spec/jobTemplate/spec/template/spec"],
];

// The owners whose pod specs kustomize follows for ServiceAccounts, PVCs and PriorityClasses.
const SPEC_OWNERS_WITH_RC = POD_SPEC_OWNERS.filter(
  ([kind]) => kind !== "PodTemplate" && kind !== "ReplicaSet",
)
  .map(([kind, path]) => [kind, path] as const)
  .concat([["ReplicationController", "spec/template/spec"]]);

function inPodSpecs(
  owners: readonly (readonly [string, string])[],
  paths: readonly string[],
): ReferenceField[] {
  return owners.flatMap(([referrer, prefix]) =>
    paths.map((path) => ({ referrer, path: `${prefix}/${path}`.split("/") })),
  );
}

function at(referrer: string, path: string): ReferenceField {
  return { referrer, path: path.split("/") };
}

const CONFIG_MAP_FIELDS = [
  ...inPodSpecs(POD_SPEC_OWNERS, [
    "volumes/configMap/name",
    "containers/env/valueFrom/configMapKeyRef/name",
    "initContainers/env/valueFrom/configMapKeyRef/name",
    "containers/envFrom/configMapRef/name",
    "initContainers/envFrom/configMapRef/name",
    "volumes/projected/sources/configMap/name",
  ]),
  at("Node", "spec/configSource/configMap"),
  at("Role", "rules/resourceNames"),
  at("ClusterRole", "rules/resourceNames"),
];

const SECRET_FIELDS = [
  ...inPodSpecs(POD_SPEC_OWNERS, [
    "volumes/secret/secretName",
    "containers/env/valueFrom/secretKeyRef/name",
    "initContainers/env/valueFrom/secretKeyRef/name",
    "containers/envFrom/secretRef/name",
    "initContainers/envFrom/secretRef/name",
    "imagePullSecrets/name",
    "volumes/projected/sources/secret/name",
  ]),
  at("Ingress", "spec/tls/secretName"),
  at("ServiceAccount", "imagePullSecrets/name"),
  ...["secretName", "adminSecretName", "userSecretName", "secretRef"].map((key) =>
    at("StorageClass", `parameters/${key}`),
  ),
  at("Role", "rules/resourceNames"),
  at("ClusterRole", "rules/resourceNames"),
  at("PersistentVolume", "spec/azureFile/secretName"),
];

const SCALE_TARGETS = ["Deployment", "ReplicationController", "ReplicaSet", "StatefulSet"];

/** Every referent kind, with the fields that name it. */
export const REFERENCE_FIELDS: readonly (readonly [Referent, readonly ReferenceField[]])[] = [
  ...SCALE_TARGETS.map(
    (kind) => [{ group: "", kind }, [at("HorizontalPodAutoscaler", "spec/scaleTargetRef/name")]] as const,
  ),
  [{ group: "", kind: "ConfigMap" }, CONFIG_MAP_FIELDS],
  [{ group: "", kind: "Secret" }, SECRET_FIELDS],
  [
    { group: "", kind: "Service" },
    [
      at("StatefulSet", "spec/serviceName"),
      at("Ingress", "spec/rules/http/paths/backend/serviceName"),
      at("Ingress", "spec/backend/serviceName"),
      at("Ingress", "spec/rules/http/paths/backend/service/name"),
      at("Ingress", "spec/defaultBackend/service/name"),
      at("APIService", "spec/service/name"),
      at("ValidatingWebhookConfiguration", "webhooks/clientConfig/service"),
      at("MutatingWebhookConfiguration", "webhooks/clientConfig/service"),
    ],
  ],
  [{ group: "rbac.authorization.k8s.io", kind: "Role" }, [at("RoleBinding", "roleRef/name")]],
  [
    { group: "rbac.authorization.k8s.io", kind: "ClusterRole" },
    [at("RoleBinding", "roleRef/name"), at("ClusterRoleBinding", "roleRef/name")],
  ],
  [
    { group: "", kind: "ServiceAccount" },
    [
      at("RoleBinding", "subjects"),
      at("ClusterRoleBinding", "subjects"),
      ...inPodSpecs(SPEC_OWNERS_WITH_RC, ["serviceAccountName"]),
    ],
  ],
  [
    { group: "", kind: "PersistentVolumeClaim" },
    inPodSpecs(SPEC_OWNERS_WITH_RC, ["volumes/persistentVolumeClaim/claimName"]),
  ],
  [
    { group: "", kind: "PersistentVolume" },
    [at("PersistentVolumeClaim", "spec/volumeName"), at("ClusterRole", "rules/resourceNames")],
  ],
  [
    { group: "storage.k8s.io", kind: "StorageClass" },
    [
      at("PersistentVolume", "spec/storageClassName"),
      at("PersistentVolumeClaim", "spec/storageClassName"),
      at("StatefulSet", "spec/volumeClaimTemplates/spec/storageClassName"),
    ],
  ],
  [
    { group: "scheduling.k8s.io", kind: "PriorityClass" },
    inPodSpecs(SPEC_OWNERS_WITH_RC, ["priorityClassName"]),
  ],
  [
    { group: "admissionregistration.k8s.io", kind: "ValidatingAdmissionPolicy" },
    [at("ValidatingAdmissionPolicyBinding", "spec/policyName")],
  ],
];
