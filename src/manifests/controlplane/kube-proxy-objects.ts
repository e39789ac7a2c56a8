import type { JsonMap } from "../../apimachinery/json.js";
import type { HostedControlPlane } from "../../model/controlplane/hosted-control-plane.js";
import { controlPlaneEndpoints } from "./endpoints.js";
import { imageOf } from "./pod-template.js";

const NAMESPACE = "kube-system";
const CONFIG_DIR = "/var/lib/kube-proxy";
const SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";

/**
 * kube-proxy for a hosted cluster with node pools, as kubeadm installs it: a DaemonSet on every node
 * (host network, privileged, tolerating every taint) at the control plane's version, reaching the
 * API server at its exposed address with its ServiceAccount's token (the in-cluster Service address
 * needs kube-proxy itself); its configuration in the kube-proxy ConfigMap, which joining machines
 * may read; the node-proxier role. Validated by the hosted cluster's API server when synced; the
 * pods run only on real machines. Pure.
 */
export function kubeProxyObjects(plane: HostedControlPlane): JsonMap[] {
  if (plane.nodePools.length === 0) return [];
  const labels = { "k8s-app": "kube-proxy" };
  const server = controlPlaneEndpoints(plane).external;
  const rbac = "rbac.authorization.k8s.io";
  return [
    { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "kube-proxy", namespace: NAMESPACE } },
    {
      apiVersion: `${rbac}/v1`,
      kind: "ClusterRoleBinding",
      metadata: { name: "gitfleet:node-proxier" },
      roleRef: { apiGroup: rbac, kind: "ClusterRole", name: "system:node-proxier" },
      subjects: [{ kind: "ServiceAccount", name: "kube-proxy", namespace: NAMESPACE }],
    },
    {
      apiVersion: `${rbac}/v1`,
      kind: "Role",
      metadata: { name: "gitfleet:kube-proxy", namespace: NAMESPACE },
      rules: [{ apiGroups: [""], resources: ["configmaps"], resourceNames: ["kube-proxy"], verbs: ["get"] }],
    },
    {
      apiVersion: `${rbac}/v1`,
      kind: "RoleBinding",
      metadata: { name: "gitfleet:kube-proxy", namespace: NAMESPACE },
      roleRef: { apiGroup: rbac, kind: "Role", name: "gitfleet:kube-proxy" },
      subjects: plane.nodePools.map((pool) => ({ apiGroup: rbac, kind: "Group", name: pool.bootstrapGroup })),
    },
    {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "kube-proxy", namespace: NAMESPACE, labels: { ...labels } },
      data: { "config.conf": proxyConfiguration(plane), "kubeconfig.conf": proxyKubeconfig(server) },
    },
    {
      apiVersion: "apps/v1",
      kind: "DaemonSet",
      metadata: { name: "kube-proxy", namespace: NAMESPACE, labels: { ...labels } },
      spec: {
        selector: { matchLabels: { ...labels } },
        updateStrategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: 1 } },
        template: {
          metadata: { labels: { ...labels } },
          spec: {
            serviceAccountName: "kube-proxy",
            priorityClassName: "system-node-critical",
            hostNetwork: true,
            nodeSelector: { "kubernetes.io/os": "linux" },
            tolerations: [{ operator: "Exists" }],
            containers: [
              {
                name: "kube-proxy",
                image: imageOf(plane, "kube-proxy", plane.apiServer.version),
                command: [
                  "/usr/local/bin/kube-proxy",
                  `--config=${CONFIG_DIR}/config.conf`,
                  "--hostname-override=$(NODE_NAME)",
                ],
                env: [{ name: "NODE_NAME", valueFrom: { fieldRef: { fieldPath: "spec.nodeName" } } }],
                securityContext: { privileged: true },
                volumeMounts: [
                  { name: "kube-proxy", mountPath: CONFIG_DIR },
                  { name: "xtables-lock", mountPath: "/run/xtables.lock" },
                  { name: "lib-modules", mountPath: "/lib/modules", readOnly: true },
                ],
              },
            ],
            volumes: [
              { name: "kube-proxy", configMap: { name: "kube-proxy" } },
              { name: "xtables-lock", hostPath: { path: "/run/xtables.lock", type: "FileOrCreate" } },
              { name: "lib-modules", hostPath: { path: "/lib/modules" } },
            ],
          },
        },
      },
    },
  ];
}

// The class's mode; with a pod network gitfleet renders, its range (traffic from outside it is masqueraded).
function proxyConfiguration(plane: HostedControlPlane): string {
  return `${JSON.stringify(
    {
      apiVersion: "kubeproxy.config.k8s.io/v1alpha1",
      kind: "KubeProxyConfiguration",
      bindAddress: "0.0.0.0",
      clientConnection: { kubeconfig: `${CONFIG_DIR}/kubeconfig.conf` },
      ...(plane.cni ? { clusterCIDR: plane.cni.podCIDR } : {}),
      mode: plane.kubeProxy.mode,
    },
    null,
    2,
  )}\n`;
}

function proxyKubeconfig(server: string): string {
  return `${JSON.stringify(
    {
      apiVersion: "v1",
      kind: "Config",
      clusters: [
        { name: "default", cluster: { server, "certificate-authority": `${SERVICE_ACCOUNT_DIR}/ca.crt` } },
      ],
      users: [{ name: "default", user: { tokenFile: `${SERVICE_ACCOUNT_DIR}/token` } }],
      contexts: [{ name: "default", context: { cluster: "default", user: "default", namespace: "default" } }],
      "current-context": "default",
    },
    null,
    2,
  )}\n`;
}
