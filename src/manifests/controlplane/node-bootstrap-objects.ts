import type { JsonMap } from "../../apimachinery/json.js";
import type { HostedControlPlane } from "../../model/controlplane/hosted-control-plane.js";

const RBAC = "rbac.authorization.k8s.io/v1";
const CLUSTER_INFO = "cluster-info";

/**
 * What TLS bootstrapping needs in a hosted cluster with node pools, as kubeadm sets it up: the pools'
 * bootstrap tokens may create CSRs (system:node-bootstrapper) and have their kubelet client CSRs
 * approved by kube-controller-manager (nodeclient), and read Nodes (a joining machine checks its name
 * is free); nodes may renew their own client certificates (selfnodeclient); anyone may read
 * kube-public/cluster-info, which the bootstrap signer signs with every token so a machine can trust
 * the cluster's CA before it holds any credential. The ConfigMap's data (the CA and the endpoint) is
 * written after each sync of the host; the rest is rendered. Pure.
 */
export function nodeBootstrapObjects(plane: HostedControlPlane): JsonMap[] {
  if (plane.nodePools.length === 0) return [];
  const bootstrappers = plane.nodePools.map((pool) => ({
    apiGroup: "rbac.authorization.k8s.io",
    kind: "Group",
    name: pool.bootstrapGroup,
  }));
  const bind = (name: string, role: string, subjects: JsonMap[]): JsonMap => ({
    apiVersion: RBAC,
    kind: "ClusterRoleBinding",
    metadata: { name },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role },
    subjects,
  });
  return [
    bind("gitfleet:kubelet-bootstrap", "system:node-bootstrapper", bootstrappers),
    bind(
      "gitfleet:node-autoapprove-bootstrap",
      "system:certificates.k8s.io:certificatesigningrequests:nodeclient",
      bootstrappers,
    ),
    bind(
      "gitfleet:node-autoapprove-certificate-rotation",
      "system:certificates.k8s.io:certificatesigningrequests:selfnodeclient",
      [{ apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: "system:nodes" }],
    ),
    {
      apiVersion: RBAC,
      kind: "ClusterRole",
      metadata: { name: "gitfleet:get-nodes" },
      rules: [{ apiGroups: [""], resources: ["nodes"], verbs: ["get"] }],
    },
    bind("gitfleet:get-nodes", "gitfleet:get-nodes", bootstrappers),
    {
      apiVersion: RBAC,
      kind: "Role",
      metadata: { name: "gitfleet:bootstrap-signer-clusterinfo", namespace: "kube-public" },
      rules: [{ apiGroups: [""], resources: ["configmaps"], resourceNames: [CLUSTER_INFO], verbs: ["get"] }],
    },
    {
      apiVersion: RBAC,
      kind: "RoleBinding",
      metadata: { name: "gitfleet:bootstrap-signer-clusterinfo", namespace: "kube-public" },
      roleRef: {
        apiGroup: "rbac.authorization.k8s.io",
        kind: "Role",
        name: "gitfleet:bootstrap-signer-clusterinfo",
      },
      subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: "system:anonymous" }],
    },
  ];
}

/** The ConfigMap a joining machine reads first, in kube-public. */
export const CLUSTER_INFO_CONFIGMAP = { namespace: "kube-public", name: CLUSTER_INFO } as const;
