import type { JsonMap } from "../../apimachinery/json.js";
import type { HostedControlPlane, ResolvedCni } from "../../model/controlplane/hosted-control-plane.js";

const NAMESPACE = "kube-system";
const NAME = "flannel";
const CONFIG = "kube-flannel-cfg";
const RBAC = "rbac.authorization.k8s.io";

/**
 * The pod network of a hosted cluster with node pools, when its class asks for one: Flannel as its
 * own manifest installs it, in kube-system — a DaemonSet on every node (host network, tolerating
 * every NoSchedule taint) whose init containers put the flannel CNI plugin and its configuration on
 * the node, and whose flanneld takes each node's range from its Node (`--kube-subnet-mgr`: the
 * ranges kube-controller-manager allocates from podCIDR); its configuration (net-conf.json, the
 * backend) and its RBAC. Validated by the hosted cluster's API server when synced; the pods run only
 * on real machines. Pure.
 */
export function cniObjects(plane: HostedControlPlane): JsonMap[] {
  const { cni } = plane;
  if (!cni || plane.nodePools.length === 0) return [];
  const labels = { app: "flannel", tier: "node" };
  return [
    { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: NAME, namespace: NAMESPACE } },
    {
      apiVersion: `${RBAC}/v1`,
      kind: "ClusterRole",
      metadata: { name: "gitfleet:flannel" },
      rules: [
        { apiGroups: [""], resources: ["pods"], verbs: ["get"] },
        { apiGroups: [""], resources: ["nodes"], verbs: ["get", "list", "watch"] },
        { apiGroups: [""], resources: ["nodes/status"], verbs: ["patch"] },
      ],
    },
    {
      apiVersion: `${RBAC}/v1`,
      kind: "ClusterRoleBinding",
      metadata: { name: "gitfleet:flannel" },
      roleRef: { apiGroup: RBAC, kind: "ClusterRole", name: "gitfleet:flannel" },
      subjects: [{ kind: "ServiceAccount", name: NAME, namespace: NAMESPACE }],
    },
    {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: CONFIG, namespace: NAMESPACE, labels: { ...labels } },
      data: { "cni-conf.json": CNI_CONF, "net-conf.json": netConf(cni) },
    },
    flannelDaemonSet(cni, labels),
  ];
}

// The CNI configuration each node gets: flannel delegating to the bridge plugin, and port mappings.
const CNI_CONF = `${JSON.stringify(
  {
    name: "cbr0",
    cniVersion: "0.3.1",
    plugins: [
      { type: "flannel", delegate: { hairpinMode: true, isDefaultGateway: true } },
      { type: "portmap", capabilities: { portMappings: true } },
    ],
  },
  null,
  2,
)}\n`;

function netConf(cni: ResolvedCni): string {
  return `${JSON.stringify({ Network: cni.podCIDR, Backend: { Type: cni.backend } }, null, 2)}\n`;
}

function flannelDaemonSet(cni: ResolvedCni, labels: Readonly<Record<string, string>>): JsonMap {
  const flannel = `${cni.registry}/flannel:${cni.version}`;
  const hostPath = (name: string, path: string, type?: string) => ({
    name,
    hostPath: { path, ...(type ? { type } : {}) },
  });
  return {
    apiVersion: "apps/v1",
    kind: "DaemonSet",
    metadata: { name: "kube-flannel-ds", namespace: NAMESPACE, labels: { ...labels } },
    spec: {
      selector: { matchLabels: { ...labels } },
      updateStrategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: 1 } },
      template: {
        metadata: { labels: { ...labels } },
        spec: {
          serviceAccountName: NAME,
          priorityClassName: "system-node-critical",
          hostNetwork: true,
          nodeSelector: { "kubernetes.io/os": "linux" },
          tolerations: [{ operator: "Exists", effect: "NoSchedule" }],
          initContainers: [
            {
              name: "install-cni-plugin",
              image: `${cni.registry}/flannel-cni-plugin:${cni.pluginVersion}`,
              command: ["cp"],
              args: ["-f", "/flannel", "/opt/cni/bin/flannel"],
              volumeMounts: [{ name: "cni-plugin", mountPath: "/opt/cni/bin" }],
            },
            {
              name: "install-cni",
              image: flannel,
              command: ["cp"],
              args: ["-f", "/etc/kube-flannel/cni-conf.json", "/etc/cni/net.d/10-flannel.conflist"],
              volumeMounts: [
                { name: "cni", mountPath: "/etc/cni/net.d" },
                { name: "flannel-cfg", mountPath: "/etc/kube-flannel/" },
              ],
            },
          ],
          containers: [
            {
              name: "kube-flannel",
              image: flannel,
              command: ["/opt/bin/flanneld"],
              args: ["--ip-masq", "--kube-subnet-mgr"],
              resources: { requests: { cpu: "100m", memory: "50Mi" } },
              securityContext: { privileged: false, capabilities: { add: ["NET_ADMIN", "NET_RAW"] } },
              env: [
                { name: "POD_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
                { name: "POD_NAMESPACE", valueFrom: { fieldRef: { fieldPath: "metadata.namespace" } } },
                { name: "EVENT_QUEUE_DEPTH", value: "5000" },
              ],
              volumeMounts: [
                { name: "run", mountPath: "/run/flannel" },
                { name: "flannel-cfg", mountPath: "/etc/kube-flannel/" },
                { name: "xtables-lock", mountPath: "/run/xtables.lock" },
              ],
            },
          ],
          volumes: [
            hostPath("run", "/run/flannel"),
            hostPath("cni-plugin", "/opt/cni/bin"),
            hostPath("cni", "/etc/cni/net.d"),
            { name: "flannel-cfg", configMap: { name: CONFIG } },
            hostPath("xtables-lock", "/run/xtables.lock", "FileOrCreate"),
          ],
        },
      },
    },
  };
}
