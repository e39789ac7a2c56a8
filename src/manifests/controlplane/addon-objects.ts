import type { JsonMap } from "../../apimachinery/json.js";
import type { HostedControlPlane } from "../../model/controlplane/hosted-control-plane.js";
import { serviceIP } from "./endpoints.js";

const NAMESPACE = "kube-system";

/**
 * What gitfleet installs into a hosted cluster itself (not into its host) once its API server is
 * Ready: cluster DNS (CoreDNS, as kubeadm installs it: the kube-dns Service on the tenth address of
 * the Service range, its ServiceAccount and RBAC, its Corefile). kube-system exists in every
 * cluster and is never rendered, so it is never pruned. Pure.
 */
export function addonObjects(plane: HostedControlPlane): JsonMap[] {
  const { coreDNS } = plane;
  const labels = { "k8s-app": "kube-dns" };
  const clusterIP = serviceIP(plane.serviceCIDR, 10);
  return [
    { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "coredns", namespace: NAMESPACE } },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: "system:coredns" },
      rules: [
        {
          apiGroups: [""],
          resources: ["endpoints", "services", "pods", "namespaces"],
          verbs: ["list", "watch"],
        },
        { apiGroups: ["discovery.k8s.io"], resources: ["endpointslices"], verbs: ["list", "watch"] },
      ],
    },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: "system:coredns" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "system:coredns" },
      subjects: [{ kind: "ServiceAccount", name: "coredns", namespace: NAMESPACE }],
    },
    {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "coredns", namespace: NAMESPACE },
      data: { Corefile: COREFILE },
    },
    {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "coredns", namespace: NAMESPACE, labels: { ...labels } },
      spec: {
        replicas: coreDNS.replicas,
        selector: { matchLabels: { ...labels } },
        strategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: 1 } },
        template: {
          metadata: { labels: { ...labels } },
          spec: {
            serviceAccountName: "coredns",
            priorityClassName: "system-cluster-critical",
            dnsPolicy: "Default",
            tolerations: [{ key: "CriticalAddonsOnly", operator: "Exists" }],
            containers: [
              {
                name: "coredns",
                image: `${plane.registry}/coredns/coredns:${coreDNS.version}`,
                args: ["-conf", "/etc/coredns/Corefile"],
                ports: [
                  { name: "dns", containerPort: 53, protocol: "UDP" },
                  { name: "dns-tcp", containerPort: 53, protocol: "TCP" },
                  { name: "metrics", containerPort: 9153, protocol: "TCP" },
                ],
                readinessProbe: { httpGet: { path: "/ready", port: 8181, scheme: "HTTP" } },
                livenessProbe: {
                  httpGet: { path: "/health", port: 8080, scheme: "HTTP" },
                  initialDelaySeconds: 60,
                  failureThreshold: 5,
                },
                resources: { requests: { cpu: "100m", memory: "70Mi" }, limits: { memory: "170Mi" } },
                securityContext: {
                  allowPrivilegeEscalation: false,
                  readOnlyRootFilesystem: true,
                  capabilities: { add: ["NET_BIND_SERVICE"], drop: ["ALL"] },
                },
                volumeMounts: [{ name: "config-volume", mountPath: "/etc/coredns", readOnly: true }],
              },
            ],
            volumes: [
              {
                name: "config-volume",
                configMap: { name: "coredns", items: [{ key: "Corefile", path: "Corefile" }] },
              },
            ],
          },
        },
      },
    },
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "kube-dns", namespace: NAMESPACE, labels: { ...labels } },
      spec: {
        selector: { ...labels },
        ...(clusterIP ? { clusterIP } : {}),
        ports: [
          { name: "dns", port: 53, protocol: "UDP", targetPort: 53 },
          { name: "dns-tcp", port: 53, protocol: "TCP", targetPort: 53 },
          { name: "metrics", port: 9153, protocol: "TCP", targetPort: 9153 },
        ],
      },
    },
  ];
}

const COREFILE = `.:53 {
    errors
    health {
       lameduck 5s
    }
    ready
    kubernetes cluster.local in-addr.arpa ip6.arpa {
       pods insecure
       fallthrough in-addr.arpa ip6.arpa
       ttl 30
    }
    prometheus :9153
    forward . /etc/resolv.conf {
       max_concurrent 1000
    }
    cache 30
    loop
    reload
    loadbalance
}
`;
